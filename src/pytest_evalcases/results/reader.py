"""Results files (docs/results.md): the one writer and the one reader.

The document is built from the run records alone, so that a file written by pytest
and a file merged from shards (``evalcases merge``) are computed the same way. Every
command that reads results files (``trend``, ``compare``, ``merge``, the HTML report's
trend, ``--eval-baseline``) reads them here: a file that does not read is a
:class:`ResultsFileError` naming the file and the field.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar, cast

from pytest_evalcases import defaults, git
from pytest_evalcases.atomic import write_atomic
from pytest_evalcases.errors import EvalcasesError
from pytest_evalcases.kinds import OUTCOMES, REPLAY_HOWS, SEVERITIES
from pytest_evalcases.redact import Redactor
from pytest_evalcases.results import gate, perturbation
from pytest_evalcases.results.document import (
    FORMAT,
    MODES,
    CaseEntry,
    ComparisonEntry,
    Counts,
    MergedFrom,
    Mode,
    ResultsDocument,
    SuiteSelection,
    Usage,
    VariantEntry,
    usage,
)
from pytest_evalcases.results.factors import Factors
from pytest_evalcases.results.outcomes import CaseVerdict
from pytest_evalcases.results.policy import BaselinePolicy, GatePolicy
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.results.skills import SkillLimits

#: Kept for the plugin's ``eval_results_dir`` default until it reads
#: :data:`pytest_evalcases.defaults.RESULTS_DIR` itself; defined there, not here.

_CASE_OUTCOMES = ("passed", "failed", "error", "skipped")
_STATUSES = ("PASS", "BLOCKED", "INCONCLUSIVE", "NONE")
#: How deeply lists and objects may nest in a results file: a file the plugin writes
#: nests less than ten levels; a deeper one is refused before anything walks it.
MAX_DEPTH = 64
#: What a run record must carry; the rest has defaults.
_RECORD_KEYS = ("id", "outcome", "file", "line", "defends", "severity")


class ResultsFileError(EvalcasesError):
    """A results file that cannot be read: missing, not JSON, or not a results file."""


@dataclass(frozen=True)
class ResultsSettings:
    """Where results go, what they are compared with, and which shard runs."""

    save: bool = True
    #: ``eval_results_dir``, absolute.
    results_dir: Path | None = None
    #: ``--eval-save PATH``, absolute: this exact file, replaced if it exists.
    save_path: Path | None = None
    #: ``--eval-baseline FILE``, absolute.
    baseline: Path | None = None
    #: ``eval_baseline_tolerance``, in percentage points.
    tolerance: float = defaults.BASELINE_TOLERANCE
    #: ``eval_config_files`` patterns, for the configuration pins.
    config_patterns: tuple[str, ...] = ()
    #: ``--eval-shard K/N`` as ``(K, N)``, 1-based.
    shard: tuple[int, int] | None = None


def iso(moment: datetime) -> str:
    """``2026-12-01T09:30:00.123Z``: UTC with milliseconds."""
    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def file_stem(moment: datetime) -> str:
    """``2026-12-01T09-30-00.123Z``: :func:`iso` without colons (Windows-safe)."""
    return iso(moment).replace(":", "-")


def parse_date(text: str | None) -> datetime | None:
    """The moment of an :func:`iso` date, or ``None`` when it is not one."""
    try:
        return datetime.fromisoformat((text or "").replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None


def executed(records: Iterable[RunRecord]) -> bool:
    """Whether any eval item ran: a run that is neither skipped nor a broken file."""
    return any(r.kind != "file" and r.outcome != "skipped" for r in records)


def _counts(cases: Sequence[CaseVerdict], broken: int) -> Counts:
    passed = sum(1 for c in cases if c.outcome == "passed")
    failed = sum(1 for c in cases if c.outcome == "failed")
    errors = sum(1 for c in cases if c.outcome == "error") + broken
    return Counts(
        passed=passed,
        failed=failed,
        errors=errors,
        skipped=sum(1 for c in cases if c.outcome == "skipped"),
        total=passed + failed + errors,
        pass_rate=passed / (passed + failed) if passed + failed else None,
    )


def _case_entry(case: CaseVerdict) -> CaseEntry:
    rate = case.pass_rate
    low, high = case.interval
    return CaseEntry(
        id=case.case_id,
        outcome=case.outcome,
        runs=case.runs,
        graded_runs=case.graded_runs,
        passes=case.passes,
        errors=case.errors,
        pass_rate=rate,
        ci95=(round(low, 4), round(high, 4)) if rate is not None else None,
        min_pass_rate=case.min_pass_rate,
    )


def document(
    report: gate.GateReport,
    *,
    started: datetime,
    finished: datetime | None = None,
    complete: bool = True,
    incomplete_reasons: Sequence[str] = (),
    pins: dict[str, Any] | None = None,
    sources: dict[str, str] | None = None,
    shard: tuple[int, int] | None = None,
    selection: SuiteSelection | None = None,
) -> ResultsDocument:
    """The results document of the gate's ``report`` (:func:`gate.decide
    <pytest_evalcases.results.gate.decide>`): its records, its verdict and the policy it
    was decided under. Counts are per case verdict (a case repeated five times counts
    once). ``sources`` names each variant's configuration; the mode is ``red-first``
    for authoring runs, which trends leave out, else ``run``. ``selection`` is the part
    of the suite the run selected; without it a run is taken for the whole suite unless
    it is a shard (:func:`complete_suite`)."""
    records = report.records
    policy = report.policy
    broken = len(report.broken_files)
    variants = tuple(
        VariantEntry(
            name=v.name,
            source=(sources or {}).get(v.name, ""),
            counts=_counts(v.cases, broken),
            checks_passed=v.checks_passed,
            checks_total=v.checks_total,
            verdict=report.variant_verdicts[v.name].status,
            cases=tuple(_case_entry(c) for c in v.cases),
            factors=report.factors.get(v.name),
            usage=usage(r for r in records if r.variant == v.name and r.kind != "file"),
        )
        for v in report.variants
    )
    comparisons = tuple(
        ComparisonEntry(
            baseline=c.baseline,
            variant=c.variant,
            regressed_cases=tuple(c.regressed_cases),
            improved_cases=tuple(c.improved_cases),
            regressed_checks=tuple(c.regressed_checks),
            improved_checks=tuple(c.improved_checks),
            mcnemar_p=c.p_value,
            differ=c.differ,
        )
        for c in report.comparisons
    )
    return ResultsDocument(
        date=iso(started),
        finished=iso(finished) if finished else None,
        duration=round((finished - started).total_seconds(), 3) if finished else None,
        complete=complete,
        incomplete_reasons=tuple(incomplete_reasons),
        mode="red-first" if policy.red_first else "run",
        counts=_counts([c for v in report.variants for c in v.cases], broken),
        checks_passed=sum(v.checks_passed for v in report.variants),
        checks_total=sum(v.checks_total for v in report.variants),
        verdict=report.verdict.status,
        verdict_reason=report.verdict.reason,
        min_pass_rate=policy.min_pass_rate,
        shard=f"{shard[0]}/{shard[1]}" if shard else None,
        usage=usage(records),
        pins=pins or {},
        variants=variants,
        comparisons=comparisons,
        cases=tuple(records),
        complete_suite=complete_suite(complete, selection, shard),
        selection=selection,
        perturbation=perturbation.to_dict(report.perturbation, policy.perturb_max_delta)
        if policy.perturb_max_delta is not None
        else None,
        baseline=report.baseline.to_dict() if report.baseline is not None else None,
        policy=policy,
    )


def complete_suite(
    complete: bool, selection: SuiteSelection | None, shard: tuple[int, int] | None = None
) -> bool:
    """Whether a run covered the whole suite (its file's ``complete_suite``): it ran to
    its end and selected every run of the suite (docs/results.md, "Runs of part of the
    suite"); without a ``selection``, unless it is a ``shard``."""
    return complete and (selection.whole if selection is not None else not shard)


def dumps(doc: ResultsDocument | dict[str, Any], redact: Redactor | None = None) -> str:
    """The file's text: indented JSON, every string redacted (docs/results.md, "Secrets")
    by ``redact``, the session's, or else the environment's."""
    data = doc.to_dict() if isinstance(doc, ResultsDocument) else doc
    return json.dumps((redact or Redactor()).data(data), indent=2, ensure_ascii=False) + "\n"


def write(
    doc: ResultsDocument | dict[str, Any],
    path: Path,
    *,
    replace: bool = False,
    redact: Redactor | None = None,
) -> Path:
    """Write ``doc`` to ``path`` atomically and return where it landed.

    A temporary file in the same directory is renamed into place, so a reader never
    sees half a file. Unless ``replace``, an existing file is never overwritten: the
    name gets a ``-1``, ``-2``, ... suffix instead (two runs in the same millisecond,
    two shards writing into one directory).
    """
    return write_atomic(path, dumps(doc, redact), replace=replace)


#: Seconds each of the two git questions of :func:`ignore_hint` may take.
GIT_TIMEOUT = 10.0


def ignore_hint(directory: Path, here: Path) -> str:
    """A note to ignore the results directory ``directory`` in git, when it is in a git
    work tree that does not ignore it: every pytest run writes a file there, which does
    not belong in a commit (docs/results.md, "The results file"). Paths are shown
    relative to ``here``. Empty otherwise, also without git or when git fails."""
    # The directory may not exist yet (``evalcases new`` asks before any run).
    start = next((p for p in (directory, *directory.parents) if p.is_dir()), None)
    if start is None:
        return ""
    try:
        top = git.run(start, ["rev-parse", "--show-toplevel"], timeout=GIT_TIMEOUT)
        if top.returncode != 0:
            return ""
        root = Path(top.stdout.strip()).resolve()
        try:
            inside = directory.resolve().relative_to(root).as_posix()
        except ValueError:
            return ""
        probe = git.run(
            root,
            # An agent may have written to the repository: git.run runs nothing its
            # configuration names, and --no-index reads no index.
            ["check-ignore", "-q", "--no-index", f"{inside}/run.json"],
            timeout=GIT_TIMEOUT,
        )
    except (git.GitNotFound, git.GitTimedOut):
        return ""
    # check-ignore: 0 ignored, 1 not ignored, 128 a problem (say nothing then).
    if probe.returncode != 1:
        return ""
    ignore = os.path.relpath(root / ".gitignore", here)
    shown = Path(os.path.relpath(directory, here)).as_posix()
    return (
        f"every pytest run writes a results file to {shown}/, which git "
        f"does not ignore; keep them out of commits: echo {shlex.quote('/' + inside + '/')} "
        f">> {shlex.quote(ignore)}"
    )


def load(path: Path) -> ResultsDocument:
    """Read a results file; anything that is not one is a :class:`ResultsFileError`
    naming the file and, for a malformed entry, the field (``cases[3].outcome``)."""
    data = _json(path)
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise ResultsFileError(f"{path}: not a results file: no `cases` list")
    _format(data, path)
    try:
        return from_dict(data)
    except _FieldError as exc:
        raise ResultsFileError(f"{path}: not a results file: {exc.where}: {exc.problem}") from None


def load_baseline(path: Path, role: str = "a baseline") -> ResultsDocument:
    """:func:`load`, refusing a red-first file: its outcomes are inverted, so a run
    compared with it would count every case the wrong way round. ``role`` names what
    the file was to be in the message (``a baseline``, ``compared``)."""
    doc = load(path)
    if doc.is_red_first:
        raise ResultsFileError(
            f"{path}: a red-first results file (written under --eval-red-first) "
            f"cannot be {role}: its outcomes are inverted"
        )
    return doc


@dataclass(frozen=True)
class StoredFile:
    """A results file read from a directory."""

    path: Path
    document: ResultsDocument


@dataclass(frozen=True)
class Directory:
    """The results files of a directory that read, oldest first, and the others."""

    files: list[StoredFile] = field(default_factory=list)
    #: One message per file that did not read (a :class:`ResultsFileError`'s text).
    problems: list[str] = field(default_factory=list)

    @property
    def documents(self) -> list[ResultsDocument]:
        return [f.document for f in self.files]


def read_dir(directory: Path) -> Directory:
    """Every ``*.json`` of ``directory``, oldest first (by ``date``, then name);
    a file that does not read is reported in ``problems``, never raised. A missing
    directory reads as empty."""
    try:
        paths = sorted(p for p in directory.glob("*.json") if p.is_file())
    except OSError:
        return Directory()
    out = Directory()
    for path in paths:
        try:
            out.files.append(StoredFile(path, load(path)))
        except ResultsFileError as exc:
            out.problems.append(str(exc))
    out.files.sort(key=lambda f: (f.document.date, str(f.path)))
    return out


@dataclass(frozen=True)
class Headline:
    """The top line of a results file, read leniently for the HTML report's trend
    chart, which also shows hand-made and older files: the date, the overall pass
    rate (0..1), and the pass rate of each variant."""

    file: str
    date: str
    pass_rate: float
    passed: int | None = None
    total: int | None = None
    verdict: str = ""
    variants: dict[str, float] = field(default_factory=dict)
    #: Whether the run covered the whole suite: a run of part of it has a pass rate
    #: over other cases, not to be drawn on one line with the others.
    complete_suite: bool = True


def read_headlines(directory: Path) -> list[Headline]:
    """The headlines of ``directory``'s results files, oldest first; files that are
    not JSON objects with a usable pass rate, and red-first files, are left out."""
    try:
        paths = sorted(p for p in directory.glob("*.json") if p.is_file())
    except OSError:
        return []
    found = []
    for path in paths:
        try:
            data = _json(path)
            if isinstance(data, dict):
                _format(data, path)
        except ResultsFileError:
            continue
        headline = _headline(data, path.name)
        if headline is not None:
            found.append(headline)
    found.sort(key=lambda h: (h.date, h.file))
    return found


def _json(path: Path) -> Any:
    """The parsed JSON of ``path``, no deeper than :data:`MAX_DEPTH`; anything else is
    a :class:`ResultsFileError` naming the file."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ResultsFileError(f"{path}: cannot read results file: {why}") from None
    too_deep = ResultsFileError(
        f"{path}: not a results file: nested more than {MAX_DEPTH} levels deep"
    )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsFileError(
            f"{path}:{exc.lineno}: not a results file: invalid JSON ({exc.msg})"
        ) from None
    except RecursionError:
        raise too_deep from None
    if _depth(data) > MAX_DEPTH:
        # Every later walk of the data (redaction, comparison) could recurse that deep.
        raise too_deep
    return data


def _depth(data: Any) -> int:
    """How deeply lists and objects nest in ``data`` (a scalar: 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, level = stack.pop()
        children = value.values() if isinstance(value, dict) else value
        if isinstance(value, (dict, list)):
            deepest = max(deepest, level + 1)
            stack.extend((child, level + 1) for child in children)
    return deepest


def _format(data: dict[str, Any], path: Path) -> None:
    """Refuse a file of a format version this version does not know (a missing
    ``format``: a file written before it was recorded, read as :data:`FORMAT`)."""
    version = data.get("format", FORMAT)
    if version != FORMAT or isinstance(version, bool):
        raise ResultsFileError(
            f"{path}: results file format {version!r} is not known: this version of "
            f"pytest-evalcases reads format {FORMAT} (a newer version may have written it)"
        )


def _headline(data: Any, name: str) -> Headline | None:
    if not isinstance(data, dict) or data.get("mode") == "red-first":
        return None
    passed, total = _int_or_none(data.get("passed")), _int_or_none(data.get("total"))
    rate = _share(data.get("pass_rate"))
    if rate is None and passed is not None and total:
        rate = _share(passed / total)
    if rate is None:
        return None
    date, verdict = data.get("date"), data.get("verdict")
    whole = data.get("complete_suite")
    if not isinstance(whole, bool):
        whole = data.get("complete") is not False and not data.get("shard")
    return Headline(
        file=name,
        date=date if isinstance(date, str) and date else Path(name).stem,
        pass_rate=rate,
        passed=passed,
        total=total,
        verdict=verdict if isinstance(verdict, str) else "",
        variants=_variant_shares(data.get("variants")),
        complete_suite=whole,
    )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _share(value: Any) -> float | None:
    """A pass rate as a share; percentages (1 < x <= 100) are accepted too."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    rate = float(value)
    if rate != rate or rate < 0 or rate > 100:
        return None
    return rate / 100 if rate > 1 else rate


def _variant_shares(value: Any) -> dict[str, float]:
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, list):
        items = ((v.get("name"), v) for v in value if isinstance(v, dict))
    elif isinstance(value, dict):
        items = value.items()
    else:
        return {}
    rates: dict[str, float] = {}
    for name, entry in items:
        rate = _share(entry.get("pass_rate")) if isinstance(entry, dict) else None
        if isinstance(name, str) and rate is not None:
            rates[name] = rate
    return rates


class _FieldError(Exception):
    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where, self.problem = where, problem


_T = TypeVar("_T")


class _Fields:
    """Typed access to one JSON object of the file; a missing key takes its default
    (files written by older versions lack some), a wrong type is a :class:`_FieldError`."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise _FieldError(where or "the document", "expected an object")
        self.data: dict[str, Any] = data
        self.where = where

    def path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str, check: Callable[[Any], bool], what: str, default: _T) -> _T:
        if key not in self.data:
            return default
        value = self.data[key]
        if not check(value):
            raise _FieldError(self.path(key), f"expected {what}, got {value!r}")
        return cast(_T, value)

    def text(self, key: str, default: str = "") -> str:
        return self.get(key, lambda v: isinstance(v, str), "a string", default)

    def text_or_none(self, key: str) -> str | None:
        return self.get(key, lambda v: v is None or isinstance(v, str), "a string", None)

    def integer(self, key: str, default: int = 0) -> int:
        return self.get(key, _is_int, "a whole number", default)

    def number(self, key: str, default: float = 0.0) -> float:
        return float(self.get(key, _is_number, "a number", default))

    def number_or_none(self, key: str) -> float | None:
        value = self.get(key, lambda v: v is None or _is_number(v), "a number", None)
        return None if value is None else float(value)

    def flag(self, key: str, default: bool) -> bool:
        return self.get(key, lambda v: isinstance(v, bool), "true or false", default)

    def choice(self, key: str, choices: Sequence[str], default: str) -> Any:
        return self.get(key, lambda v: v in choices, "one of " + ", ".join(choices), default)

    def objects(self, key: str) -> list[_Fields]:
        items: list[Any] = self.get(key, lambda v: isinstance(v, list), "a list", [])
        return [_Fields(item, f"{self.path(key)}[{i}]") for i, item in enumerate(items)]

    def strings(self, key: str) -> tuple[str, ...]:
        items: list[str] = self.get(key, _is_strings, "a list of strings", [])
        return tuple(items)

    def mapping(self, key: str) -> dict[str, Any]:
        value: dict[str, Any] | None = self.get(
            key, lambda v: v is None or isinstance(v, dict), "an object", {}
        )
        return value or {}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _pairs(fields: _Fields, key: str) -> tuple[tuple[str, str], ...]:
    def check(value: Any) -> bool:
        return isinstance(value, list) and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p)
            for p in value
        )

    pairs: list[list[str]] = fields.get(key, check, "a list of [case, check] pairs", [])
    return tuple((a, b) for a, b in pairs)


def _read_counts(f: _Fields) -> Counts:
    return Counts(
        passed=f.integer("passed"),
        failed=f.integer("failed"),
        errors=f.integer("errors"),
        skipped=f.integer("skipped"),
        total=f.integer("total"),
        pass_rate=f.number_or_none("pass_rate"),
    )


def _read_case_entry(f: _Fields) -> CaseEntry:
    ci95 = f.get(
        "ci95",
        lambda v: v is None or (isinstance(v, list) and len(v) == 2 and all(map(_is_number, v))),
        "[low, high] or null",
        None,
    )
    return CaseEntry(
        id=f.text("id"),
        outcome=f.choice("outcome", _CASE_OUTCOMES, "error"),
        runs=f.integer("runs"),
        graded_runs=f.integer("graded"),
        passes=f.integer("passes"),
        errors=f.integer("errors"),
        pass_rate=f.number_or_none("pass_rate"),
        ci95=(float(ci95[0]), float(ci95[1])) if ci95 is not None else None,
        min_pass_rate=f.number("min_pass_rate", defaults.CASE_MIN_PASS_RATE),
    )


def _read_variant(f: _Fields) -> VariantEntry:
    return VariantEntry(
        name=f.text("name"),
        source=f.text("source"),
        counts=_read_counts(f),
        checks_passed=f.integer("checks_passed"),
        checks_total=f.integer("checks_total"),
        verdict=f.choice("verdict", _STATUSES, "NONE"),
        cases=tuple(_read_case_entry(c) for c in f.objects("cases")),
        factors=Factors.from_dict(f.mapping("factors")) if f.data.get("factors") else None,
        usage=_read_usage(_Fields(f.data["usage"], f.path("usage")))
        if isinstance(f.data.get("usage"), dict)
        else None,
    )


def _read_comparison(f: _Fields) -> ComparisonEntry:
    return ComparisonEntry(
        baseline=f.text("baseline"),
        variant=f.text("variant"),
        regressed_cases=f.strings("regressed_cases"),
        improved_cases=f.strings("improved_cases"),
        regressed_checks=_pairs(f, "regressed_checks"),
        improved_checks=_pairs(f, "improved_checks"),
        mcnemar_p=f.number("mcnemar_p", 1.0),
        differ=f.strings("differ") if f.data.get("differ") is not None else None,
    )


def _read_record(f: _Fields) -> RunRecord:
    for key in _RECORD_KEYS:
        if key not in f.data:
            raise _FieldError(f.path(key), "missing (every run names its case and outcome)")
    f.text("id")
    f.choice("outcome", OUTCOMES, "error")
    f.text("file")
    f.integer("line")
    f.text("defends")
    f.choice("severity", SEVERITIES, "normal")
    f.choice("kind", ("case", "task", "file"), "case")
    f.text("variant")
    f.integer("repetition")
    f.integer("attempts", 1)
    f.number("duration")
    f.number("min_pass_rate", defaults.CASE_MIN_PASS_RATE)
    for key in ("tokens_in", "tokens_out", "recorded_tokens_in", "recorded_tokens_out"):
        f.get(key, lambda v: v is None or _is_int(v), "a whole number", None)
    f.number_or_none("cost_usd")
    f.number_or_none("recorded_cost_usd")
    f.strings("tags")
    f.get("turns", lambda v: v is None or _is_int(v), "a whole number", None)
    f.strings("permission_denials")
    f.strings("refused_writes")
    f.flag("did_nothing", False)
    f.get(
        "failure_severity",
        lambda v: v is None or v in SEVERITIES,
        "one of " + ", ".join(SEVERITIES) + " or null",
        None,
    )
    f.text_or_none("recording")
    f.get(
        "replay",
        lambda v: v is None or v in REPLAY_HOWS,
        "one of " + ", ".join(REPLAY_HOWS) + " or null",
        None,
    )
    f.get("saved_tokens", lambda v: v is None or _is_int(v), "a whole number", None)
    f.number_or_none("saved_usd")
    f.text_or_none("perturbation")
    for check in f.objects("checks"):
        check.text("id")
        check.flag("passed", False)
    try:
        return RunRecord.from_dict(f.data)
    except (TypeError, ValueError) as exc:
        raise _FieldError(f.where, str(exc)) from None


def _read_selection(f: _Fields) -> SuiteSelection:
    return SuiteSelection(
        arguments=f.strings("arguments"),
        collected=f.integer("collected"),
        deselected=f.integer("deselected"),
        collected_runs=f.integer("collected_runs"),
        deselected_runs=f.integer("deselected_runs"),
        uncollected=f.strings("uncollected"),
    )


def _read_policy(f: _Fields) -> GatePolicy:
    given = f.data.get("baseline")
    baseline = None
    if given is not None:
        b = _Fields(given, f.path("baseline"))
        baseline = BaselinePolicy(
            file=b.text("file"), tolerance=b.number("tolerance", defaults.BASELINE_TOLERANCE)
        )
    return GatePolicy(
        min_pass_rate=f.number("min_pass_rate", defaults.MIN_PASS_RATE),
        red_first=f.flag("red_first", False),
        skill_limits=SkillLimits(
            f.number_or_none("skill_min_recall"), f.number_or_none("skill_max_false_trigger")
        ),
        perturbed_block=f.flag("perturb_blocking", False),
        perturb_max_delta=f.number_or_none("perturb_max_delta"),
        baseline=baseline,
    )


def _read_usage(f: _Fields) -> Usage:
    return Usage(
        runs_with_tokens=f.integer("runs_with_tokens"),
        tokens_total=f.integer("tokens_total"),
        tokens_mean=f.number_or_none("tokens_mean"),
        runs_with_cost=f.integer("runs_with_cost"),
        cost_total=f.number("cost_total"),
        cost_mean=f.number_or_none("cost_mean"),
    )


def from_dict(data: Any) -> ResultsDocument:
    """The document of parsed JSON; raises :class:`_FieldError` naming the bad field."""
    f = _Fields(data, "")
    merged = f.objects("merged_from") if "merged_from" in f.data else None
    warnings = f.strings("merge_warnings") if "merge_warnings" in f.data else None
    baseline = f.mapping("baseline") if f.data.get("baseline") is not None else None
    usage_data = f.data.get("usage")
    mode: Mode = f.choice("mode", MODES, "run")
    complete = f.flag("complete", True)
    shard = f.text_or_none("shard")
    selection = f.data.get("selection")
    policy = f.data.get("policy")
    return ResultsDocument(
        format=f.integer("format", FORMAT),
        date=f.text("date"),
        finished=f.text_or_none("finished"),
        duration=f.number_or_none("duration"),
        complete=complete,
        incomplete_reasons=f.strings("incomplete_reasons"),
        mode=mode,
        counts=_read_counts(f),
        checks_passed=f.integer("checks_passed"),
        checks_total=f.integer("checks_total"),
        verdict=f.choice("verdict", _STATUSES, "NONE"),
        verdict_reason=f.text("verdict_reason"),
        min_pass_rate=f.number("min_pass_rate", defaults.MIN_PASS_RATE),
        shard=shard,
        usage=_read_usage(_Fields(usage_data, "usage")) if usage_data is not None else Usage(),
        pins=f.mapping("pins"),
        variants=tuple(_read_variant(v) for v in f.objects("variants")),
        comparisons=tuple(_read_comparison(c) for c in f.objects("comparisons")),
        cases=tuple(_read_record(c) for c in f.objects("cases")),
        baseline=baseline,
        merged_from=tuple(
            MergedFrom(m.text_or_none("date"), m.text_or_none("shard"), m.data.get("complete"))
            for m in merged
        )
        if merged is not None
        else None,
        merge_warnings=warnings,
        # Files written before these keys: whole unless cut short or a shard.
        complete_suite=f.flag("complete_suite", complete and shard is None),
        selection=_read_selection(_Fields(selection, "selection"))
        if selection is not None
        else None,
        regraded_from=f.text_or_none("regraded_from"),
        perturbation=f.mapping("perturbation") if f.data.get("perturbation") is not None else None,
        policy=_read_policy(_Fields(policy, "policy")) if policy is not None else None,
    )
