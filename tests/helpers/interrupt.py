"""Shared by the Ctrl-C tests: run pytest in a subprocess and interrupt it mid-run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

#: A conftest (or the end of one) for a suite interrupted once an item is reported:
#: pytest, the xdist controller under xdist, touches ``reported/<case>`` after it has
#: taken in the item's last report. A signal sent after that cannot beat the item's
#: record, as one sent when the next agent starts can (the controller takes a worker's
#: reports in its own time).
REPORTED_HOOK = """
import pathlib as _pathlib

import pytest as _pytest

_CONTROLLER = []


def pytest_configure(config):
    # Not PYTEST_XDIST_WORKER: the outer suite's xdist worker leaves it to this pytest.
    if not hasattr(config, "workerinput"):
        _CONTROLLER.append(True)


@_pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report):
    if report.when == "teardown" and _CONTROLLER:
        done = _pathlib.Path(__file__).parent / "reported"
        done.mkdir(exist_ok=True)
        (done / report.nodeid.rsplit("::", 1)[-1]).touch()
"""


def reported(root: Path) -> set[str]:
    """The cases whose reports pytest has taken in (see :data:`REPORTED_HOOK`)."""
    directory = root / "reported"
    return {p.name for p in directory.iterdir()} if directory.is_dir() else set()


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupted_pytest(
    cwd: Path,
    ready: Callable[[], bool],
    env: Mapping[str, str] | None = None,
    *,
    sig: signal.Signals = signal.SIGINT,
    args: Sequence[str] = (),
    group: bool = False,
) -> tuple[int, str]:
    """Start ``pytest -q ARGS`` in ``cwd``, send ``sig`` once ``ready()`` holds (to its
    whole process group with ``group``, as a CI runner cancelling a job does), and
    return its exit status and output."""
    # PYTHONFAULTHANDLER: a pytest that does not end after the signal is sent SIGABRT,
    # and the failure shows where each of its threads was.
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1", **(env or {})}
    full_env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=cwd,
        start_new_session=group,
        # Ctrl-C as a terminal has it: a suite started in the background of a script
        # (``pytest &``) has SIGINT ignored, its children too, and Python and the plugin
        # leave an ignored SIGINT ignored.
        preexec_fn=_default_sigint,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready():
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, "the run never got ready to interrupt"
            time.sleep(0.05)
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        try:
            out, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            out, _ = proc.communicate(timeout=30)
            raise AssertionError(f"pytest did not end after {sig.name}:\n{out}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out
