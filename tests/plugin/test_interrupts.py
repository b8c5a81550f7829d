"""A second Ctrl-C while the first one winds the session down (docs/reference.md, "Exit
statuses of pytest"): the run stays incomplete and never PASS, and no process of it
survives, whenever the second signal lands.

Each timing is hit on purpose rather than by a race: the agent signals pytest from its
SIGTERM handler (while pytest waits for it to stop), or the suite's conftest does from
the hook that runs at that moment.
"""

from __future__ import annotations

import json
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

import pytest_evalcases.results.files as resultsfile

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


def test_a_second_ctrl_c_while_the_agent_is_stopped_kills_it_at_once(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    # Without a sandbox only: in one, the agent cannot see pytest to signal it (and the
    # sandbox dies with its first process, whatever the agent does with SIGTERM).
    returncode, out, doc = interrupted_twice(make_suite, pytester, "cleanup", "none")

    assert (doc["complete"], doc["verdict"]) == (False, "INCONCLUSIVE"), out
    assert returncode == pytest.ExitCode.INTERRUPTED, out
    assert "eval gate: INCONCLUSIVE (run incomplete: interrupted)" in out


def test_a_second_ctrl_c_during_the_summary_leaves_the_file_incomplete(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    returncode, out, doc = interrupted_twice(make_suite, pytester, "summary", "none")

    # The file was written before; the summary is cut short where the signal landed.
    assert (doc["complete"], doc["verdict"]) == (False, "INCONCLUSIVE"), out
    assert returncode != 0


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_second_ctrl_c_under_xdist(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, sandbox: str
) -> None:
    returncode, out, doc = interrupted_twice(make_suite, pytester, "report", sandbox, "-n", "2")

    assert (doc["complete"], doc["verdict"]) == (False, "INCONCLUSIVE"), out
    assert "interrupted" in doc["incomplete_reasons"]
    assert returncode == pytest.ExitCode.INTERRUPTED, out


def test_one_ctrl_c_after_a_passing_case_is_not_a_pass(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    returncode, out, doc = interrupted_twice(make_suite, pytester, "", "none")

    assert (doc["complete"], doc["verdict"]) == (False, "INCONCLUSIVE"), out
    assert returncode == pytest.ExitCode.INTERRUPTED, out
    assert "eval gate: INCONCLUSIVE (run incomplete: interrupted)" in out
