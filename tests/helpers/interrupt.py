"""Shared by the Ctrl-C tests: run pytest in a subprocess and interrupt it mid-run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path


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
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    full_env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=cwd,
        start_new_session=group,
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
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out
