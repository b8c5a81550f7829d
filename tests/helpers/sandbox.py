"""bubblewrap in the tests: where it is missing, its tests skip, but not in CI, where
``.ci/run`` installs it and a missing one must fail them."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

BWRAP = shutil.which("bwrap")
#: The real user's cache directory, read before pytester moves ``HOME`` below /tmp: a
#: place outside /tmp (which the sandbox hides) for what must be read-only instead.
USER_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")

requires_bwrap = pytest.mark.skipif(
    BWRAP is None and not os.environ.get("CI"),
    reason="bubblewrap (bwrap) is not installed: apt-get install bubblewrap",
)


def alive_with(text: str) -> list[int]:
    """The live processes (zombies left out) whose command line contains ``text``, by
    their pid in this PID namespace: a sandbox's processes have other pids inside."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().decode(errors="replace")
            state = Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if text in cmdline and state != "Z":
            found.append(int(name))
    return found


def gone(text: str, within: float = 5.0) -> bool:
    """Whether no process with ``text`` in its command line is left, waiting up to
    ``within`` seconds for ones already killed to be reaped."""
    deadline = time.monotonic() + within
    while alive_with(text):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
