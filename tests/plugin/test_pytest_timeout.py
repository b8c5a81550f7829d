"""pytest-timeout and an eval case (docs/agents.md, "pytest-timeout"): when its limit
is the shorter, the case's own timeout report and the kill of its processes win over
pytest-timeout's stack dump, whichever of its methods runs.

pytest-timeout is no dependency of the project: its mechanism is reproduced by a
``conftest.py`` (:data:`FAKE_TIMEOUT`, after its ``pytest_timeout.py``), and the real
plugin is run too, installed apart (:mod:`tests.helpers.plugins`)."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.plugins import load_apart
from tests.helpers.results import only_results
from tests.helpers.sandbox import alive_with, gone
from tests.helpers.suite import SuiteBuilder

#: pytest-timeout 2.x as its ``pytest_timeout.py`` works: ``--timeout`` and
#: ``--timeout-method``; a timer set around the whole runtest protocol through the
#: ``pytest_timeout_set_timer`` hook (there since 2.1; ``HOOKS = False`` is 2.0, which
#: sets it directly); the ``signal`` method dumps the stacks and fails the test from
#: SIGALRM, the ``thread`` method dumps them and ends the process with ``os._exit(1)``.
FAKE_TIMEOUT = '''
import os, signal, sys, threading, traceback
from collections import namedtuple

import pytest

HOOKS = {hooks}
Settings = namedtuple("Settings", ["timeout", "method", "func_only", "disable_debugger_detection"])


def pytest_addoption(parser):
    group = parser.getgroup("timeout")
    group.addoption("--timeout", type=float)
    group.addoption(
        "--timeout-method", dest="timeout_method", choices=["signal", "thread"], default="signal"
    )


class Hooks:
    @staticmethod
    @pytest.hookspec(firstresult=True)
    def pytest_timeout_set_timer(item, settings):
        """Set the timer of an item."""

    @staticmethod
    @pytest.hookspec(firstresult=True)
    def pytest_timeout_cancel_timer(item):
        """Cancel it."""


def pytest_addhooks(pluginmanager):
    if HOOKS:
        pluginmanager.add_hookspecs(Hooks)


def pytest_configure(config):
    if HOOKS:
        config.pluginmanager.register(Defaults(), "fake-timeout-defaults")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    config = item.config
    method = config.getoption("timeout_method")
    settings = Settings(config.getoption("timeout"), method, False, False)
    if settings.timeout:
        if HOOKS:
            config.hook.pytest_timeout_set_timer(item=item, settings=settings)
        else:
            set_timer(item, settings)
    yield
    if settings.timeout:
        if HOOKS:
            config.hook.pytest_timeout_cancel_timer(item=item)
        else:
            cancel_timer(item)


def dump_stacks():
    for ident, frame in sys._current_frames().items():
        if ident != threading.get_ident():
            sys.stderr.write("".join(traceback.format_stack(frame)))


def set_timer(item, settings):
    if settings.method == "signal":
        def handler(signum, frame):
            dump_stacks()
            pytest.fail("Timeout (>%ss) from pytest-timeout." % settings.timeout)

        def cancel():
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)

        signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, settings.timeout)
    else:
        def expire():
            dump_stacks()
            os._exit(1)

        timer = threading.Timer(settings.timeout, expire)

        def cancel():
            timer.cancel()
            timer.join()

        timer.start()
    item.cancel_timeout = cancel
    return True


def cancel_timer(item):
    cancel = getattr(item, "cancel_timeout", None)
    if cancel:
        cancel()
    return True


class Defaults:
    @pytest.hookimpl(trylast=True)
    def pytest_timeout_set_timer(self, item, settings):
        return set_timer(item, settings)

    @pytest.hookimpl(trylast=True)
    def pytest_timeout_cancel_timer(self, item):
        return cancel_timer(item)
'''

#: ``start.py TOKEN``: starts a daemon as a dev server does (fork, setsid), TOKEN on its
#: command line, then hangs; the agent and the setup below run it.
START = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", sys.argv[1]])
print("x", flush=True)
time.sleep(600)
"""

#: The agent's timeout when pytest-timeout's limit of 3 s is the shorter: what is left of
#: it once the item's setup ran (to a tenth of a second), however long that took.
AGENT_TIMED_OUT = r"agent 'command' timed out after (?P<left>[0-9.]+)s "
SETUP_TIMED_OUT = re.escape("setup timed out")


@pytest.fixture
def token(pytester: pytest.Pytester) -> Iterator[str]:
    """What the daemons carry on their command line; any left are killed afterwards."""
    mark = f"evalcases-timeout-daemon-{pytester.path}"
    yield mark
    for pid in alive_with(mark):
        os.kill(pid, signal.SIGKILL)


def slow_suite(make_suite: SuiteBuilder, token: str, *, hang_in: str) -> Path:
    """One case whose agent (``hang_in="agent"``) or setup (``"setup"``) starts a daemon
    and hangs, far within the case's own timeout of 60 s."""
    start = f"{sys.executable} {{rootdir}}/start.py {token}"
    setup = start.replace("{rootdir}", str(make_suite.root))
    return make_suite(
        cases={
            "slow": "id: slow\ndefends: AGENTS.md\nprompt: x\n"
            + (f"setup: '{setup}'\n" if hang_in == "setup" else "")
            + "checks: [{type: output_matches, pattern: x}]\n"
        },
        fixtures={"start.py": START},
        ini=f"eval_agent = command\neval_agent_command = {start}\neval_timeout = 60\n",
    )


def run_with(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=120)


def assert_the_case_reported_its_timeout(
    result: pytest.RunResult, root: Path, token: str, *, phase: str
) -> None:
    """``phase``: a pattern the case's error matches, naming the phase that timed out."""
    out = result.stdout.str()
    assert result.ret == 2, out  # INCONCLUSIVE: the case errored
    result.assert_outcomes(errors=1)
    assert "case slow (normal) defends AGENTS.md: no verdict (timeout)" in out
    assert "pytest-timeout's limit of 3s (--timeout" in out
    # No traceback of pytest, pluggy or the plugin: the case's report alone.
    for internal in ("Traceback", "_pytest/", "pluggy/", "pytest_evalcases/"):
        assert internal not in out, internal
    (record,) = only_results(root)["cases"]
    assert record["error_kind"] == "timeout"
    found = re.search(phase, record["error"])
    assert found is not None, record["error"]
    if "left" in found.groupdict():
        # The agent got what was left of the 3 s, not its own 60 s, and something was left.
        assert 0 < float(found["left"]) < 3, record["error"]
    assert Path(record["workspace"]).is_dir()
    assert gone(token)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["signal", "thread"])
@pytest.mark.parametrize("hang_in", ["agent", "setup"])
def test_pytest_timeouts_limit_ends_the_case_as_its_own_timeout_would(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, token: str, method: str, hang_in: str
) -> None:
    root = slow_suite(make_suite, token, hang_in=hang_in)
    pytester.makeconftest(FAKE_TIMEOUT.format(hooks=True))

    result = run_with(pytester, "-p", "no:timeout", "--timeout=3", f"--timeout-method={method}")

    phase = AGENT_TIMED_OUT if hang_in == "agent" else SETUP_TIMED_OUT
    assert_the_case_reported_its_timeout(result, root, token, phase=phase)


@pytest.mark.parametrize("method", ["signal", "thread"])
def test_the_real_pytest_timeout(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    token: str,
    method: str,
) -> None:
    load_apart(monkeypatch, "pytest_timeout", "pytest-timeout")
    root = slow_suite(make_suite, token, hang_in="agent")

    result = run_with(pytester, "--timeout=3", f"--timeout-method={method}")

    assert_the_case_reported_its_timeout(result, root, token, phase=AGENT_TIMED_OUT)


@pytest.mark.slow
def test_pytest_timeout_without_the_hook_fails_the_case_cleanly_and_kills_its_processes(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, token: str
) -> None:
    # pytest-timeout 2.0: no hook, so its SIGALRM handler fails the test mid-run.
    root = slow_suite(make_suite, token, hang_in="agent")
    pytester.makeconftest(FAKE_TIMEOUT.format(hooks=False))

    result = run_with(pytester, "-p", "no:timeout", "--timeout=3")

    out = result.stdout.str()
    assert result.ret == 2, out
    result.assert_outcomes(errors=1)
    assert "stopped by 'Timeout (>3.0s) from pytest-timeout.' while the case ran" in out
    for internal in ("Traceback", "_pytest/", "pluggy/", "pytest_evalcases/"):
        assert internal not in out, internal
    (record,) = json.loads(sorted((root / "evals" / "results").glob("*.json"))[0].read_text())[
        "cases"
    ]
    assert record["error_kind"] == "timeout"
    assert Path(record["workspace"]).is_dir()
    assert gone(token)
