"""A second Ctrl-C while the first one winds the session down (docs/reference.md, "Exit
statuses of pytest"): the run stays incomplete and never PASS, and no process of it
survives, whenever the second signal lands.

Each timing is hit on purpose rather than by a race: the agent signals pytest from its
SIGTERM handler (while pytest waits for it to stop), or the suite's conftest does from
the hook that runs at that moment.
"""

from __future__ import annotations

import json
import re
import signal
from typing import Any

import pytest

from tests.helpers.interrupt import REPORTED_HOOK, interrupted_pytest, reported
from tests.helpers.sandbox import gone, requires_bwrap
from tests.helpers.suite import SuiteBuilder

#: The first case passes at once; every later one starts a child, says it started, and
#: sleeps. With SECOND=cleanup it ignores SIGTERM and answers it with a second SIGINT
#: to pytest, its parent, so that the second Ctrl-C lands while pytest waits for it.
AGENT = """
import os, pathlib, signal, subprocess, sys, time
case = os.environ["EVALCASES_CASE_ID"]
if case == "a-fast":
    print("x")
    sys.exit(0)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", os.environ["MARK"]])
if os.environ.get("SECOND") == "cleanup":
    signal.signal(signal.SIGTERM, lambda *_: os.kill(os.getppid(), signal.SIGINT))
started = pathlib.Path(os.environ["STARTED"])
started.mkdir(exist_ok=True)
(started / case).touch()
for _ in range(600):
    time.sleep(1)
"""

#: The suite's conftest: with SECOND=report the second SIGINT arrives while pytest
#: reports the first (its repr of the KeyboardInterrupt takes up to half a second, the
#: window of the double Ctrl-C that used to write a complete, passing file); with
#: SECOND=results while the results file is written; with SECOND=summary while the
#: summary is printed.
CONFTEST = """
import os, signal

import pytest_evalcases.results.writer as resultsfile

SECOND = os.environ.get("SECOND")


def _again():
    os.kill(os.getpid(), signal.SIGINT)


def pytest_keyboard_interrupt(excinfo):
    if SECOND == "report":
        _again()


def pytest_terminal_summary(terminalreporter):
    if SECOND == "summary":
        _again()


if SECOND == "results":
    _write = resultsfile.write

    def _write_interrupted(*args, **kwargs):
        _again()
        return _write(*args, **kwargs)

    resultsfile.write = _write_interrupted
"""

CASE = """
id: {id}
defends: AGENTS.md
prompt: x
checks: [{{type: output_matches, pattern: x}}]
"""

#: Eight cases, as in the report: the first passes, the second is running.
CASES = {name: CASE.format(id=name) for name in ["a-fast", *(f"b-slow-{i}" for i in range(7))]}


def interrupted_twice(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, second: str, sandbox: str, *args: str
) -> tuple[int, str, dict[str, Any]]:
    """Run the suite, Ctrl-C it once the second case runs, with the second signal at
    ``second``; the exit status, the output and the results file."""
    mark = f"evalcases-mark-{pytester.path}"
    make_suite(
        AGENT,
        CASES,
        fixtures={"conftest.py": CONFTEST + REPORTED_HOOK},
        ini=f"eval_agent = command\neval_timeout = 60\neval_sandbox = {sandbox}\n"
        f"eval_sandbox_rw = {pytester.path}\n",
    )
    started = pytester.path / "started"
    want = 2 if args else 1

    def running() -> bool:
        running = started.is_dir() and len(list(started.iterdir())) >= want
        return running and reported(pytester.path) == {"a-fast"}

    returncode, out = interrupted_pytest(
        pytester.path,
        running,
        {"STARTED": str(started), "MARK": mark, "SECOND": second},
        args=args,
    )
    assert gone(str(pytester.path / "agent.py")), out
    assert gone(mark), out
    (results,) = (pytester.path / "evals" / "results").glob("*.json")
    return returncode, out, json.loads(results.read_text("utf-8"))


SANDBOXES = [pytest.param("none"), pytest.param("bwrap", marks=requires_bwrap)]


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("second", ["report", "results"])
def test_a_second_ctrl_c_while_pytest_winds_down(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, second: str, sandbox: str
) -> None:
    returncode, out, doc = interrupted_twice(make_suite, pytester, second, sandbox)

    assert (doc["complete"], doc["incomplete_reasons"]) == (False, ["interrupted"]), out
    assert (doc["verdict"], doc["verdict_reason"]) == (
        "INCONCLUSIVE",
        "run incomplete: interrupted",
    )
    assert [(c["id"], c["outcome"]) for c in doc["cases"]] == [("a-fast", "passed")]
    # The second Ctrl-C is ignored there: the session ends as after one.
    assert returncode == pytest.ExitCode.INTERRUPTED, out
    assert "eval gate: INCONCLUSIVE (run incomplete: interrupted)" in out
    assert "results: evals/results/" in out
    assert "Traceback" not in out


@pytest.mark.slow
def test_a_second_ctrl_c_while_the_agent_is_stopped_kills_it_at_once(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    # Without a sandbox only: in one, the agent cannot see pytest to signal it (and the
    # sandbox dies with its first process, whatever the agent does with SIGTERM).
    returncode, out, doc = interrupted_twice(make_suite, pytester, "cleanup", "none")

    assert (doc["complete"], doc["verdict"]) == (False, "INCONCLUSIVE"), out
    assert returncode == pytest.ExitCode.INTERRUPTED, out
    assert "eval gate: INCONCLUSIVE (run incomplete: interrupted)" in out


@pytest.mark.slow
def test_a_second_ctrl_c_during_the_summary_leaves_the_file_incomplete(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    returncode, out, doc = interrupted_twice(make_suite, pytester, "summary", "none")

    # The file was written before; the summary is cut short where the signal landed.
    assert (doc["complete"], doc["verdict"]) == (False, "INCONCLUSIVE"), out
    assert returncode != 0


@pytest.mark.xdist
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_second_ctrl_c_under_xdist(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, sandbox: str
) -> None:
    returncode, out, doc = interrupted_twice(make_suite, pytester, "report", sandbox, "-n", "2")

    assert (doc["complete"], doc["verdict"]) == (False, "INCONCLUSIVE"), out
    assert "interrupted" in doc["incomplete_reasons"]
    assert returncode == pytest.ExitCode.INTERRUPTED, out


@pytest.mark.slow
def test_one_ctrl_c_after_a_passing_case_is_not_a_pass(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    returncode, out, doc = interrupted_twice(make_suite, pytester, "", "none")

    assert (doc["complete"], doc["verdict"]) == (False, "INCONCLUSIVE"), out
    assert returncode == pytest.ExitCode.INTERRUPTED, out
    assert "eval gate: INCONCLUSIVE (run incomplete: interrupted)" in out


#: Every case starts a child, says it started, and sleeps 30 s: the signal lands in the
#: first case (under xdist, in the first case of each worker).
SLEEPER = """
import os, pathlib, subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", os.environ["MARK"]])
started = pathlib.Path(os.environ["STARTED"])
started.mkdir(exist_ok=True)
(started / os.environ["EVALCASES_CASE_ID"]).touch()
time.sleep(30)
"""


@pytest.mark.parametrize(
    ("args", "group"),
    [
        pytest.param((), False, id="serial"),
        pytest.param(("-n", "2"), False, id="xdist-controller"),
        pytest.param(("-n", "2"), True, id="xdist-group"),
    ],
)
def test_sigterm_during_the_first_case_writes_the_summary_and_an_incomplete_file(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, args: tuple[str, ...], group: bool
) -> None:
    mark = f"evalcases-mark-{pytester.path}"
    make_suite(
        SLEEPER,
        {name: CASE.format(id=name) for name in ("one", "two", "three")},
        ini="eval_agent = command\neval_timeout = 60\n",
    )
    started = pytester.path / "started"
    want = 2 if args else 1

    returncode, out = interrupted_pytest(
        pytester.path,
        lambda: started.is_dir() and len(list(started.iterdir())) >= want,
        {"STARTED": str(started), "MARK": mark},
        sig=signal.SIGTERM,
        args=args,
        group=group,
    )

    # The interrupted run's agents, and what they started, are dead.
    assert gone(str(pytester.path / "agent.py")), out
    assert gone(mark), out
    assert returncode == pytest.ExitCode.INTERRUPTED, out
    assert re.search(r"^=+ eval gate =+$", out, re.MULTILINE), out
    assert "eval gate: INCONCLUSIVE (run incomplete: interrupted)" in out
    result_lines = [line for line in out.splitlines() if line.startswith("results: ")]
    assert [line.endswith(" (incomplete: interrupted)") for line in result_lines] == [True]
    (results,) = (pytester.path / "evals" / "results").glob("*.json")
    doc = json.loads(results.read_text("utf-8"))
    assert (doc["complete"], doc["incomplete_reasons"]) == (False, ["interrupted"])
    assert (doc["verdict"], doc["verdict_reason"]) == (
        "INCONCLUSIVE",
        "run incomplete: interrupted",
    )
    assert doc["cases"] == []
    assert "Traceback" not in out


#: The controller signals itself once it took in the first report and the workers,
#: which go on meanwhile with the items they were sent, have recorded 3 more runs
#: (xdist sends each of the 2 workers 3 items first, and a worker runs an item once it
#: knows the next): their reports never reach it.
SIGNAL_AFTER_RECORDINGS = """
import os, pathlib, signal, time

_SENT = []


def pytest_configure(config):
    # Not PYTEST_XDIST_WORKER: the outer suite's xdist worker leaves it to this pytest.
    if hasattr(config, "workerinput"):
        _SENT.append("a worker")


def pytest_runtest_logreport(report):
    if _SENT or report.when != "teardown":
        return
    _SENT.append(True)
    results = pathlib.Path(__file__).parent / "evals" / "results"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        runs = [p for d in results.glob("*.runs") for p in d.iterdir()]
        if len(runs) >= 4:
            break
        time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGTERM)
"""


@pytest.mark.xdist
def test_after_sigterm_under_xdist_every_recording_is_a_listed_run(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite(
        "print('x')\n",
        {f"c{i:02}": CASE.format(id=f"c{i:02}") for i in range(24)},
        fixtures={"conftest.py": SIGNAL_AFTER_RECORDINGS},
        ini="eval_agent = command\neval_timeout = 60\n",
    )

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")

    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, out
    (results,) = (pytester.path / "evals" / "results").glob("*.json")
    doc = json.loads(results.read_text("utf-8"))
    assert (doc["complete"], doc["incomplete_reasons"]) == (False, ["interrupted"])
    listed = {case["recording"] for case in doc["cases"]}
    assert None not in listed
    runs = results.with_suffix(".runs")
    recorded = {f"{runs.name}/{p.name}" for p in runs.iterdir()}
    # Every recording beside the file belongs to a run the file lists: those of runs
    # whose reports never reached the controller are gone.
    assert recorded == listed, (sorted(recorded - listed), out)
    assert len(recorded) < 24
