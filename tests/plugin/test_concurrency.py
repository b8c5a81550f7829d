"""``--eval-concurrency N`` (docs/reference.md, "Concurrency"): agent runs overlap, items
are reported in order with the verdicts and results file of a serial run; ``-x``,
Ctrl-C and SIGTERM kill the running agents; a rate limit holds back the next start."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.interrupt import REPORTED_HOOK, interrupted_pytest, reported
from tests.helpers.results import only_results
from tests.helpers.sandbox import gone
from tests.helpers.suite import SuiteBuilder, eval_configs

#: The agent logs when it starts and ends (``runs/<case>-<n>.json``), sleeps a little,
#: then answers as its case asks: ``pass-*`` right, ``fail-*`` wrong, ``crash-*`` not at
#: all, ``hang-*`` never (its pid in ``pids/``). Where the file ``overlap`` says N, each
#: run first waits until N runs have begun (``begun/``): runs that do not overlap never
#: get past it, and after a minute answer that they did not.
AGENT = """
import json, os, pathlib, sys, time, uuid
root = pathlib.Path(sys.argv[1])
case = os.environ["EVALCASES_CASE_ID"]
for name in ("runs", "begun"):
    (root / name).mkdir(exist_ok=True)
log = root / "runs" / f"{case}-{uuid.uuid4().hex}.json"
started = time.time()
(root / "begun" / log.name).touch()
if (root / "overlap").exists():
    overlap = int((root / "overlap").read_text())
    deadline = time.monotonic() + 60
    while len(os.listdir(root / "begun")) < overlap:
        if time.monotonic() > deadline:
            sys.exit(f"fewer than {overlap} runs ever ran at once")
        time.sleep(0.02)
if case.startswith("hang"):
    (root / "pids").mkdir(exist_ok=True)
    (root / "pids" / case).write_text(str(os.getpid()))
    time.sleep(600)
time.sleep(0.1 + (sum(map(ord, case)) % 4) / 10)
log.write_text(json.dumps([started, time.time()]))
if case.startswith("crash"):
    sys.exit("segfault, sort of")
print("the answer is " + ("wrong" if case.startswith("fail") else "right"))
"""

CASE = """
id: {id}
defends: AGENTS.md
prompt: answer
checks:
  - type: output_matches
    pattern: right
"""


def suite(make_suite: SuiteBuilder, ids: list[str], ini: str = "") -> Path:
    root = make_suite(
        AGENT,
        {case_id: CASE.format(id=case_id) for case_id in ids},
        command="{python} {rootdir}/agent.py {rootdir}",
        ini="eval_agent = command\n" + ini,
        variants={"a": "Be right.\n", "b": "Be right, always.\n"},
    )
    return root


def runs(root: Path) -> list[tuple[float, float]]:
    return runs_in(root / "runs")


def runs_in(directory: Path) -> list[tuple[float, float]]:
    """When each run of the agent started and ended."""
    return [(start, end) for start, end in (json.loads(p.read_text()) for p in directory.iterdir())]


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    now = peak = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


def comparable(results: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each case entry without what differs between any two runs (times, paths)."""
    return [
        (
            c["id"],
            c["variant"],
            c["repetition"],
            c["outcome"],
            c.get("error_kind"),
            json.dumps(c["checks"], sort_keys=True),
        )
        for c in results["cases"]
    ]


IDS = ["pass-one", "fail-two", "crash-three", "pass-four", "pass-five", "fail-six"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "xdist", [pytest.param((), id="serial"), pytest.param(("-n", "2"), id="xdist")]
)
def test_runs_overlap_and_report_as_a_serial_run_does(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, xdist: tuple[str, ...]
) -> None:
    root = suite(make_suite, IDS)
    common = [*eval_configs(f"a={root}/a", f"b={root}/b"), "--eval-repeat=2"]

    serial = pytester.runpytest("-p", "no:randomly", "-v", *xdist, *common)
    serial_results = only_results(root)
    for old in (root / "evals" / "results").glob("*.json"):
        old.unlink()
    (root / "runs").rename(root / "serial-runs")
    shutil.rmtree(root / "begun")
    (root / "overlap").write_text("2")
    concurrent = pytester.runpytest(
        "-p", "no:randomly", "-v", *xdist, "--eval-concurrency=4", *common
    )

    assert concurrent.ret == serial.ret == pytest.ExitCode.TESTS_FAILED
    counts = {"passed": 12, "failed": 8, "errors": 4}
    serial.assert_outcomes(**counts)
    concurrent.assert_outcomes(**counts)
    # Under xdist the records come in the order the workers report them.
    assert sorted(comparable(only_results(root))) == sorted(comparable(serial_results))
    workers = 2 if xdist else 1
    if not xdist:
        # Reported one by one, in collection order, each with its own verdict.
        def verdicts(result: pytest.RunResult) -> list[str]:
            return [line for line in result.outlines if line.startswith("evals/")]

        assert verdicts(concurrent) == verdicts(serial)
        assert len(verdicts(serial)) == 24
    assert most_at_once(runs_in(root / "serial-runs")) <= workers
    assert 2 <= most_at_once(runs(root)) <= 4 * workers


@pytest.mark.xdist
def test_runs_overlap_on_each_xdist_worker(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = suite(make_suite, [f"pass-{i}" for i in range(12)])
    # Two workers, three runs each: four at once is more than either alone makes.
    (root / "overlap").write_text("4")

    result = pytester.runpytest("-p", "no:randomly", "-n", "2", "--eval-concurrency=3")

    result.assert_outcomes(passed=12)
    assert 4 <= most_at_once(runs(root)) <= 6


def test_x_stops_starting_runs_and_kills_the_running_ones(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    ids = ["fail-first", "hang-1", "hang-2", "hang-3", "hang-later-1", "hang-later-2"]
    root = make_suite(
        AGENT,
        {case_id: CASE.format(id=case_id) for case_id in ids},
        command="{python} {rootdir}/agent.py {rootdir}",
        ini="eval_agent = command\neval_timeout = 300\n",
    )

    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "-x", "--eval-concurrency=4", timeout=120
    )

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1)
    # The three hanging agents had started beside the first. The slot the first one
    # freed may start the fifth run before -x takes effect; the sixth can never start,
    # since the four slots stay taken until -x closes the scheduler. Every agent that
    # started is dead, and no run but the first is reported.
    started = sorted(p.name for p in (root / "pids").iterdir())
    assert started in (
        ["hang-1", "hang-2", "hang-3"],
        ["hang-1", "hang-2", "hang-3", "hang-later-1"],
    )
    assert gone(str(root / "agent.py"))
    assert [p.name.rsplit("-", 1)[0] for p in (root / "runs").iterdir()] == ["fail-first"]
    assert [c["id"] for c in only_results(root)["cases"]] == ["fail-first"]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupt_kills_every_running_agent(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, sig: signal.Signals
) -> None:
    ids = ["a-first", "hang-1", "hang-2", "hang-3"]
    root = make_suite(
        AGENT,
        {case_id: CASE.format(id=case_id) for case_id in ids},
        command="{python} {rootdir}/agent.py {rootdir}",
        ini="eval_agent = command\neval_timeout = 300\n",
        fixtures={"conftest.py": REPORTED_HOOK},
    )

    def all_hanging() -> bool:
        hanging = (root / "pids").is_dir() and len(list((root / "pids").iterdir())) == 3
        return hanging and reported(root) == {"a-first"}

    returncode, out = interrupted_pytest(
        root, all_hanging, sig=sig, args=("-p", "no:randomly", "--eval-concurrency=4")
    )

    assert returncode == pytest.ExitCode.INTERRUPTED, out
    assert gone(str(root / "agent.py"))
    results = only_results(root)
    assert [c["id"] for c in results["cases"]] == ["a-first"]
    assert results["incomplete_reasons"]


#: The first run of ``a-limited`` is rate limited; ``b``, which starts beside it, holds
#: its slot until the retry of ``a-limited`` has started, so that the one slot that can
#: free inside the pause is the limited run's own, freed after the limit is counted.
RATE_LIMITED_AGENT = """
import json, os, pathlib, sys, time
root = pathlib.Path(sys.argv[1])
case = os.environ["EVALCASES_CASE_ID"]
started = time.time()
(root / "starts").mkdir(exist_ok=True)
(root / "starts" / f"{case}-{started}").touch()
first = root / "limited-once"
if case == "a-limited" and not first.exists():
    first.write_text(json.dumps(time.time()))
    sys.exit("HTTP 429 Too Many Requests: rate limit reached, retry after 1.5 seconds")
if case == "b":
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if len(list((root / "starts").glob("a-limited-*"))) >= 2:
            break
        time.sleep(0.02)
time.sleep(0.2)
(root / "runs").mkdir(exist_ok=True)
(root / "runs" / f"{case}-{started}").write_text(json.dumps([started, time.time()]))
print("right")
"""


def test_a_rate_limit_holds_back_the_next_starts_and_the_retry(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    ids = ["a-limited", "b", "c", "d", "e"]
    root = make_suite(
        RATE_LIMITED_AGENT,
        {case_id: CASE.format(id=case_id) for case_id in ids},
        command="{python} {rootdir}/agent.py {rootdir}",
        ini="eval_agent = command\n",
    )

    result = pytester.runpytest(
        "-p", "no:randomly", "--eval-concurrency=2", "--eval-retry-errors=1"
    )

    result.assert_outcomes(passed=5)
    limited_at = json.loads((root / "limited-once").read_text())
    starts = sorted(json.loads(p.read_text())[0] for p in (root / "runs").iterdir())
    # At most one run (the one beside it) started between the rate limit and the end
    # of the 1.5 s it asked for; the retry and the rest waited for it.
    early = [s for s in starts if limited_at < s < limited_at + 1.4]
    assert len(early) <= 1, (limited_at, starts)
    assert sum(1 for s in starts if s >= limited_at + 1.4) >= 3
    record = next(c for c in only_results(root)["cases"] if c["id"] == "a-limited")
    assert record["outcome"] == "passed"
    assert record["attempts"] == 2


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (["--eval-concurrency=0"], "", "*--eval-concurrency*expected a whole number >= 1*"),
        ([], "eval_concurrency = many\n", "*eval_concurrency expects a whole number >= 1*"),
    ],
)
def test_a_bad_concurrency_is_a_usage_error(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    args: list[str],
    ini: str,
    message: str,
) -> None:
    suite(make_suite, ["pass-one"], ini=ini)

    result = pytester.runpytest(*args)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
