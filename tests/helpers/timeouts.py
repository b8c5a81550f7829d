"""Timeouts that start counting once a command is ready, for tests of what a timeout
kills or keeps: on a loaded machine a command's start-up alone may outlast a short
timeout, and the test would see it killed before it did what the test checks."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any, Literal

import pytest

from pytest_evalcases import process


def timeout_once(monkeypatch: pytest.MonkeyPatch, ready: Callable[[int], bool]) -> None:
    """Make :func:`process.run` start each command's timeout once ``ready(pid)`` holds
    (at most a minute, or until the command exits). The timeout itself is the real one,
    with the real kill."""
    real = process._wait

    def wait(
        proc: subprocess.Popen[bytes], timeout: float | None, token: Any = None
    ) -> Literal["exited", "timeout", "cancelled"]:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                if ready(proc.pid):
                    break
            except OSError:
                pass
            time.sleep(0.01)
        return real(proc, timeout, token)

    monkeypatch.setattr(process, "_wait", wait)


#: :func:`timeout_once` for a pytest session of its own, xdist workers included: a
#: ``conftest.py`` for its rootdir, formatted with ``ready`` (a file's path), that makes
#: each command's timeout start once that file exists (or the command exited).
READY_CONFTEST = """
import pathlib, time
from pytest_evalcases import process

real = process._wait
ready = pathlib.Path({ready!r})


def wait(proc, timeout, token=None):
    while proc.poll() is None and not ready.exists():
        time.sleep(0.01)
    return real(proc, timeout, token)


process._wait = wait
"""
