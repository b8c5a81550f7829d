"""Fuzzing the case files (issue 10's acceptance): a deterministic corpus of a few hundred
mutations of valid case files (:mod:`tests.helpers.fuzzcorpus`), each beside a valid case.

For every mutation: either the file is a valid case file, or it is exactly one clear
error naming the file (and its line, where a parser can know it); the valid case beside
it still loads; nothing raises anything but that error, and nothing hangs. The bulk runs
in-process through the loader the plugin uses, the way the plugin uses it: a cold load
that fills the parse cache, the cache written and read back as pytest's cache does, a
warm load from it (docs/case-format.md, "What a broken file looks like"). A sample runs
as real pytest sessions, many broken files side by side with one valid case, cold and
warm, and the odd file kinds and colliding ids, which only a session can show.

Mutations that fail today are marked ``xfail(strict=True)`` with the item of issue 10
that fixes them; a fixed one then fails as XPASS, and its mark goes.
"""

from __future__ import annotations

import faulthandler
import json
import math
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_evalcases.cases.loading import LoadedCase, load_case_file, load_task_dir
from pytest_evalcases.cases.parsecache import ParseCache
from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.run.checks import default_registry
from tests.helpers import fuzzcorpus
from tests.helpers.fuzzcorpus import Mutation
from tests.helpers.suite import SuiteBuilder

REGISTRY = default_registry()
CORPUS = fuzzcorpus.corpus()
BY_KEY = {m.key: m for m in CORPUS}

#: Seconds one mutation may take in-process (the slowest take a fraction of one).
DEADLINE = 10
#: The longest message a case-file error may have: it names and explains, never echoes
#: a megabyte of the file back.
MAX_MESSAGE = 2000
#: The parse cache may hold this many times the file's size (plus a little): a file whose
#: aliases expand a thousandfold must not become a thousandfold cache and report.
MAX_GROWTH = 20
GROWTH_SLACK = 64 * 1024


#: Mutations that fail today, and why.
KNOWN: dict[str, str] = {}


def _yaml_bounds_nesting() -> bool:
    """Whether PyYAML refuses deep nesting itself: the libyaml of PyYAML 6.0.2 and later
    stops at 1,000 levels; with 6.0.1 (which pyproject.toml accepts) 100,000 nested
    brackets take minutes, quadratically, or overflow the C stack."""
    try:
        yaml.load("[" * 2000 + "]" * 2000, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except Exception:
        return True
    return False


NEW_DEEP_YAML = (
    "new: with PyYAML 6.0.1 a 200 KB file of nested brackets parses for minutes, or "
    "overflows the C stack (a segmentation fault under xdist): not run there"
)
#: Mutations that fail today with some versions of the dependencies only.
KNOWN_WITH_OLD_PYYAML = {"ycase-nesting-yaml-flow-100000"}


def marks(key: str) -> list[pytest.MarkDecorator]:
    reason = KNOWN.get(key)
    if reason:
        return [pytest.mark.xfail(strict=True, reason=reason)]
    if key in KNOWN_WITH_OLD_PYYAML:
        return [pytest.mark.skipif(not _yaml_bounds_nesting(), reason=NEW_DEEP_YAML)]
    return []


class Hang(Exception):
    """A mutation took longer than :data:`DEADLINE`."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` after ``seconds`` (in the main thread, where a signal lands),
    and, should a C loop never return to Python, dump the stacks and end the process a
    little later (a worker lost is a failure too, never a stuck CI job)."""
    faulthandler.dump_traceback_later(seconds * 2, exit=True)
    main = threading.current_thread() is threading.main_thread()
    if main:

        def expire(signum: int, frame: object) -> None:
            raise Hang(f"no answer within {seconds} s")

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        if main:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        faulthandler.cancel_dump_traceback_later()


def load(mutation: Mutation, path: Path, evals: Path, cache: ParseCache) -> list[LoadedCase]:
    """The mutation's cases as the plugin loads them (collection through the parse
    cache's index when it has the file, then the cases themselves)."""
    if mutation.is_task:
        return [load_task_dir(path, REGISTRY)]
    cache.index(path, evals)
    return load_case_file(path, evals, REGISTRY, cache)


def outcome(mutation: Mutation, path: Path, evals: Path, cache: ParseCache) -> Any:
    """The cases' ids and lines, or the error: what cold and warm loads must agree on."""
    try:
        cases = load(mutation, path, evals, cache)
    except CaseFileError as exc:
        return exc
    return [(case.id, case.line) for case in cases]


def saved(cache: ParseCache) -> str:
    """The cache as pytest's cache provider writes it (``Cache.set``: JSON, not ASCII,
    written as UTF-8): what the next run reads."""
    text = json.dumps({"files": cache.files}, ensure_ascii=False, indent=2)
    text.encode("utf-8")
    return text


def as_shown(name: object) -> str:
    """A file name as errors and records show it: bytes that are not UTF-8 as ``\\xff``
    (docs/case-format.md, "What a broken file looks like")."""
    return str(name).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def assert_clear(error: CaseFileError, mutation: Mutation, path: Path, size: int) -> None:
    """One clear error: it names the file, its line where one can be known, and says
    what is wrong in a bounded message."""
    message = str(error)
    assert error.path == as_shown(path)
    assert message.startswith(as_shown(path))
    assert error.reason.strip()
    assert len(message) <= MAX_MESSAGE, f"a message of {len(message)} characters"
    assert "Traceback" not in message
    message.encode("utf-8")
    if error.line is not None:
        assert 1 <= error.line <= max(size, 1) + 1
    elif mutation.line_known:
        pytest.fail(f"no line in: {message}")


def assert_sane(cases: list[LoadedCase], evals: Path) -> None:
    """A file that validates holds what every later step can use: an id that can name a
    directory, text (UTF-8, no NUL), finite timeouts, a fixture inside the evals root."""
    for case in cases:
        # The id names the run's workspace directory (and every report's node id).
        assert len(case.id.encode("utf-8")) <= 255, f"an id of {len(case.id)} characters"
        strings = [case.id, case.defends, case.description, case.prompt, case.setup, *case.tags]
        for check in case.checks:
            strings.extend(v for v in check.model_dump().values() if isinstance(v, str))
        for text in strings:
            if text is not None:
                text.encode("utf-8")
                assert "\x00" not in text
        for timeout in (case.timeout, *(getattr(c, "timeout", None) for c in case.checks)):
            assert timeout is None or math.isfinite(timeout)
        if case.fixture is not None:
            fixture = case.fixture.resolve()
            assert fixture.is_relative_to(evals.resolve()), f"cwd outside: {fixture}"


def written(evals: Path, mutation: Mutation) -> Path:
    valid = fuzzcorpus.write_suite(evals)
    assert valid.name == "valid.yaml"
    return mutation.write(evals)


@pytest.mark.parametrize(
    "mutation", [pytest.param(m, id=m.key, marks=marks(m.key)) for m in CORPUS]
)
def test_mutation_loads_or_is_one_clear_error(tmp_path: Path, mutation: Mutation) -> None:
    evals = tmp_path / "evals"
    path = written(evals, mutation)
    size = path.stat().st_size if path.is_file() else 0
    lines = mutation.content.count(b"\n") + 1

    hang = None
    try:
        with deadline(DEADLINE):
            cache = ParseCache()
            cold = outcome(mutation, path, evals, cache)
            text = saved(cache)
            warm_cache = ParseCache(json.loads(text)["files"])
            warm = outcome(mutation, path, evals, warm_cache)
            valid = load_case_file(evals / "valid.yaml", evals, REGISTRY, warm_cache)
    except Hang as exc:
        hang = str(exc)
    if hang is not None:
        # Outside the handler, without the stack: a hang in a deep parse has a stack of
        # 100,000 frames, which would take pytest minutes to format.
        pytest.fail(f"{mutation.key}: {hang}", pytrace=False)

    assert [case.id for case in valid] == [fuzzcorpus.VALID_ID]
    assert len(text) <= MAX_GROWTH * size + GROWTH_SLACK, f"a cache of {len(text)} bytes"
    if isinstance(cold, CaseFileError):
        assert_clear(cold, mutation, path, lines)
        assert isinstance(warm, CaseFileError)
        assert str(warm) == str(cold)
    else:
        assert warm == cold
        assert_sane(load(mutation, path, evals, warm_cache), evals)


# Real sessions: many mutations side by side with the valid case, cold and warm.

#: Seconds a whole session may take (a hang is a failure, not a stuck CI job).
SESSION_TIMEOUT = 120
#: How many mutations the side-by-side session holds.
SAMPLE = 30


def session_sample(count: int = SAMPLE) -> list[Mutation]:
    """Small mutations of every category in turn, each category's bases in turn, that
    load or fail cleanly today (the others have sessions of their own)."""
    pool: dict[str, dict[str, list[Mutation]]] = {}
    for m in CORPUS:
        if m.key in KNOWN or m.kind != "file" or m.category in ("dup-id", "name", "cwd"):
            continue
        if len(m.content) <= 64 * 1024:
            base = m.key.split("-")[0]
            pool.setdefault(m.category, {}).setdefault(base, []).append(m)
    # Each category starts at another base, so that the first round has them all.
    queues = [list(_interleave(bases, n)) for n, bases in enumerate(pool.values())]
    sample: list[Mutation] = []
    while len(sample) < count and any(queues):
        for queue in queues:
            if queue and len(sample) < count:
                sample.append(queue.pop(0))
    return sample


def _interleave(groups: dict[str, list[Mutation]], start: int) -> Iterator[Mutation]:
    lists = [list(g) for g in groups.values()]
    lists = lists[start % len(lists) :] + lists[: start % len(lists)]
    while any(lists):
        for items in lists:
            if items:
                yield items.pop(0)


def expected(mutations: list[Mutation], evals: Path) -> dict[str, Any]:
    """Each mutation's file (as records name it) to its error or its case ids, from the
    loader itself."""
    out: dict[str, Any] = {}
    for m in mutations:
        path = evals / m.name
        result = outcome(m, path, evals, ParseCache())
        ids = result if isinstance(result, CaseFileError) else sorted(i for i, _ in result)
        out[f"evals/{m.name}"] = ids
    return out


def session(pytester: pytest.Pytester, *, broken: bool = True) -> tuple[str, dict[str, Any]]:
    """One real session grading the ``graded`` directory: its output and results file;
    ``broken``: the suite holds a broken file, so the session cannot pass."""
    result = pytester.runpytest_subprocess(
        "--eval-workspace", "graded", "--eval-save", "results.json", timeout=SESSION_TIMEOUT
    )
    out = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in out
    assert "INTERNALERROR" not in out
    assert "Interrupted" not in out
    assert result.ret in ((1, 2) if broken else (0,)), out
    doc = json.loads((pytester.path / "results.json").read_text(encoding="utf-8"))
    assert doc["complete"] is True
    return out, doc


def assert_records(doc: dict[str, Any], files: dict[str, Any]) -> None:
    """The valid case passed; a broken file is one case-file error at its line; a file
    that loads has its cases, none a case-file error."""
    records: dict[str, list[dict[str, Any]]] = {}
    for record in doc["cases"]:
        records.setdefault(record["file"], []).append(record)
    [valid] = records.pop("evals/valid.yaml")
    assert valid["outcome"] == "passed", valid
    for file, want in files.items():
        got = records.get(file, [])
        if isinstance(want, CaseFileError):
            assert len(got) == 1, (file, got)
            assert got[0]["error_kind"] == "case-file"
            assert file in got[0]["error"]
            assert got[0]["line"] == (want.line or 1) - 1
        else:
            assert sorted(r["id"] for r in got) == want, (file, got)
            assert all(r["error_kind"] != "case-file" for r in got), (file, got)


def suite(make_suite: SuiteBuilder, pytester: pytest.Pytester, mutations: list[Mutation]) -> Path:
    make_suite()
    evals = pytester.path / "evals"
    fuzzcorpus.write_suite(evals)
    for m in mutations:
        m.write(evals)
    return evals


@pytest.mark.slow
def test_many_mutations_side_by_side_cold_and_warm(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    mutations = session_sample()
    evals = suite(make_suite, pytester, mutations)
    files = expected(mutations, evals)
    assert sum(isinstance(v, CaseFileError) for v in files.values()) >= SAMPLE // 2

    _, cold = session(pytester)
    assert (pytester.path / ".pytest_cache" / "v" / "evalcases" / "parsed").is_file()
    _, warm = session(pytester)

    assert_records(cold, files)
    assert_records(warm, files)


def assert_each_an_error(doc: dict[str, Any], out: str, mutations: list[Mutation]) -> None:
    """The valid case passed, and each mutation is one case-file error naming it."""
    records: dict[str, list[dict[str, Any]]] = {}
    for record in doc["cases"]:
        records.setdefault(record["file"], []).append(record)
    [valid] = records.pop("evals/valid.yaml")
    assert valid["outcome"] == "passed", valid
    for m in mutations:
        got = records.pop(f"evals/{as_shown(m.name)}", [])
        assert [r["error_kind"] for r in got] == ["case-file"], (m.key, got, out)
    assert not records, records


#: Files that are not regular files: pytest walks past them without a word.
ODD_KINDS = ["symlink-dangling", "symlink-dev-null", "symlink-loop", "symlink-self", "fifo"]


@pytest.mark.slow
def test_case_files_that_are_not_regular_files_are_errors_cold_and_warm(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    mutations = [BY_KEY[f"ycase-kind-{kind}"] for kind in ODD_KINDS]
    suite(make_suite, pytester, mutations)

    cold_out, cold = session(pytester)
    warm_out, warm = session(pytester)

    assert_each_an_error(cold, cold_out, mutations)
    assert_each_an_error(warm, warm_out, mutations)


#: Mutations that crash the loader today, each of them losing the whole run.
CRASHERS = [
    "ycase-yaml-scalar-date-feb-30",
    "ycase-yaml-scalar-bool-tag-word",
    "ycase-yaml-scalar-map-tag-on-list",
    "jcase-huge-timeout-5000-digits",
    "ycase-name-not-utf8",
]


@pytest.mark.slow
def test_mutations_that_crash_the_loader_today_lose_nothing(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    mutations = [BY_KEY[key] for key in CRASHERS]
    suite(make_suite, pytester, mutations)

    out, doc = session(pytester)

    assert_each_an_error(doc, out, mutations)


def test_a_directory_symlink_loop_collects_each_case_once(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    # A link to the directory it is in is not walked (docs/case-format.md, "What a
    # broken file looks like"): nothing is broken, the suite passes once.
    suite(make_suite, pytester, [BY_KEY["ycase-kind-symlink-to-dir"]])

    _, doc = session(pytester, broken=False)

    assert [(r["file"], r["outcome"]) for r in doc["cases"]] == [("evals/valid.yaml", "passed")]


#: Files that reuse the valid case's id.
DUPLICATE_IDS = [
    "ycase-dup-id-sorted-before",
    "ycase-dup-id-sorted-after",
    "ycase-dup-id-hardlink",
    "ylist-dup-id-valid-in-list",
]


@pytest.mark.parametrize("key", DUPLICATE_IDS, ids=lambda key: key.split("dup-id-")[1])
def test_a_colliding_id_is_the_error_of_the_file_collected_second(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, key: str
) -> None:
    # docs/case-format.md: the file collected first keeps the id and its case runs; the
    # case of the one collected second (pytest walks evals/ in name order) is the error,
    # naming the first, cold and from the parse cache alike.
    mutation = BY_KEY[key]
    suite(make_suite, pytester, [mutation])
    new = f"evals/{mutation.name}"
    first, second = sorted(["evals/valid.yaml", new])

    for _ in ("cold", "warm"):
        result = pytester.runpytest("--eval-workspace", "graded", "--eval-save", "results.json")
        doc = json.loads((pytester.path / "results.json").read_text(encoding="utf-8"))
        by_file: dict[str, list[dict[str, Any]]] = {}
        for record in doc["cases"]:
            by_file.setdefault(record["file"], []).append(record)
        kept = [r for r in by_file[first] if r["id"] == fuzzcorpus.VALID_ID]
        [blamed] = [r for r in by_file[second] if r["error_kind"] == "case-file"]
        assert [r["outcome"] for r in kept] == ["passed"], kept
        assert f"duplicate id '{fuzzcorpus.VALID_ID}': the case at {first}:" in blamed["error"]
        assert "Traceback" not in result.stdout.str()
