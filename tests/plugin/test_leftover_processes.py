"""No process of a run outlives it (docs/sandbox.md, "Processes without a sandbox"):
daemons that an agent, a setup or a command check starts, that leave the run's session
(``setsid``), fork twice and clear their environment (so no ``EVALCASES_RUN`` mark finds
them), die when the command ends, times out or is interrupted, with and without the
sandbox, serially and under xdist."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers.interrupt import interrupted_pytest
from tests.helpers.sandbox import gone, requires_bwrap
from tests.helpers.suite import SuiteBuilder
from tests.helpers.timeouts import READY_CONFTEST

#: ``daemon.py NAME DIR TOKEN``: start a daemon as a dev server does (fork, setsid,
#: fork again, exec with an empty environment), wait until it runs, and return; the
#: daemon writes DIR/NAME and sleeps, TOKEN on its command line.
DAEMON = """
import os, pathlib, sys, time
name, where, token = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
ready = where / name
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        code = "import pathlib, sys, time; pathlib.Path(sys.argv[1]).touch(); time.sleep(600)"
        os.execve(sys.executable, [sys.executable, "-c", code, str(ready), token], {})
    os._exit(0)
while not ready.exists():
    time.sleep(0.02)
"""

#: The agent starts a daemon named after its case, then answers (``ends``) or hangs
#: (``hangs``, which times out or is interrupted).
AGENT = """
import os, subprocess, sys, time
case = os.environ["EVALCASES_CASE_ID"]
subprocess.run([sys.executable, sys.argv[1], "agent-" + case, sys.argv[2], sys.argv[3]], check=True)
print("x")
if case == "hangs":
    time.sleep(600)
"""

CASE = """
id: {id}
defends: AGENTS.md
prompt: x
setup: {setup}
{more}
checks:
  - type: output_matches
    pattern: x
  - type: command_succeeds
    command: {check}
"""


#: The timeout of the case named ``hangs``: its agent's daemon must run before it runs
#: out, after three Python start-ups (agent, daemon.py, the daemon), in bwrap too, on a
#: loaded machine. An interrupted run never waits for it; the test of the timeout starts
#: counting it once that daemon runs (READY_CONFTEST), and waits only that long.
HANGS_TIMEOUT = 20
#: The timeout of ``hangs`` where it starts once its agent's daemon runs.
READY_TIMEOUT = 1


def daemon_suite(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, sandbox: str, timeout: float
) -> Path:
    """Two cases whose agent, setup and command check each start a daemon; the one
    named ``hangs`` times out after its daemons started. Returns where the daemons
    say they run."""
    root = pytester.path
    up = root / "up"
    up.mkdir()
    token = token_of(pytester)

    def daemon(name: str) -> str:
        return f"{sys.executable} {root / 'daemon.py'} {name} {up} {token}"

    cases = {
        case_id: CASE.format(
            id=case_id,
            setup=daemon(f"setup-{case_id}"),
            check=daemon(f"check-{case_id}"),
            more=more,
        )
        for case_id, more in (("ends", ""), ("hangs", f"timeout: {timeout:g}"))
    }
    make_suite(
        AGENT,
        cases,
        fixtures={"daemon.py": DAEMON},
        command=f"{{python}} {{rootdir}}/agent.py {root / 'daemon.py'} {up} {token}",
        ini=f"eval_agent = command\neval_timeout = 60\neval_sandbox = {sandbox}\n"
        f"eval_sandbox_rw = {root}\n",
    )
    return up


def token_of(pytester: pytest.Pytester) -> str:
    return f"evalcases-daemon-{pytester.path}"


SANDBOXES = [pytest.param("none"), pytest.param("bwrap", marks=requires_bwrap)]


@pytest.mark.slow
@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["serial", "xdist"])
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_daemons_die_when_the_command_ends_or_times_out(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, sandbox: str, args: tuple[str, ...]
) -> None:
    up = daemon_suite(make_suite, pytester, sandbox, READY_TIMEOUT)
    pytester.makeconftest(READY_CONFTEST.format(ready=str(up / "agent-hangs")))

    result = pytester.runpytest("-p", "no:cacheprovider", *args)

    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([f"*timed out after {READY_TIMEOUT:g}s*"])
    # Every daemon ran: the agent's, the setup's and the check's of the case that
    # passed, the setup's and the agent's of the one that timed out.
    assert sorted(p.name for p in up.iterdir()) == [
        "agent-ends",
        "agent-hangs",
        "check-ends",
        "setup-ends",
        "setup-hangs",
    ]
    assert gone(token_of(pytester))
    assert gone(str(pytester.path / "agent.py"))


@pytest.mark.slow
@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["serial", "xdist"])
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_daemons_die_when_the_run_is_interrupted(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, sandbox: str, args: tuple[str, ...]
) -> None:
    up = daemon_suite(make_suite, pytester, sandbox, HANGS_TIMEOUT)

    returncode, out = interrupted_pytest(
        pytester.path, (up / "agent-hangs").exists, args=("-k", "hangs", *args)
    )

    assert returncode == pytest.ExitCode.INTERRUPTED, out
    assert (up / "setup-hangs").exists()
    assert gone(token_of(pytester))
    assert gone(str(pytester.path / "agent.py"))
