"""bubblewrap in the tests: where it is missing, its tests skip, but not in CI, where
``.ci/run`` installs it and a missing one must fail them."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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

#: The as-root tests: CI runs as root with bubblewrap, so there they run; elsewhere the
#: skip says why (pytest -rs lists it).
requires_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="runs only as root (as CI does): what root keeps in a sandbox"
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


@dataclass
class Hostile:
    """What a hostile agent goes after, made by a test outside its suite: a home outside
    /tmp (read-only, not merely hidden, in the sandbox), the repository under test, a
    file elsewhere in /tmp, a directory shared with the runs (where the first run leaves
    its workspace's path, ``neighbour-workspace``, for the next to go after) and a
    process outside."""

    repo: Path
    home: Path
    keep: Path
    shared: Path
    sleeper: subprocess.Popen[bytes]

    def neighbour(self) -> Path:
        return Path((self.shared / "neighbour-workspace").read_text().strip())

    def landed(self) -> list[str]:
        """What of the attempts reached its target (``*ROGUE*`` files in the repository,
        ``home``, ``deleted``, ``neighbour``, ``killed``)."""
        found = [p.name for p in self.repo.iterdir() if "ROGUE" in p.name]
        if (self.home / "owned-by-eval").exists():
            found.append("home")
        if not self.keep.exists():
            found.append("deleted")
        if (self.neighbour() / "planted.txt").exists():
            found.append("neighbour")
        if self.sleeper.poll() is not None:
            found.append("killed")
        return sorted(found)


@contextmanager
def hostile_targets(repo: Path, scratch: Path) -> Iterator[Hostile]:
    """The targets of a hostile agent for the suite in ``repo``; ``scratch`` is the
    test's own temporary directory. The home and the process go afterwards."""
    home = USER_CACHE / f"evalcases-test-home-{uuid.uuid4().hex[:8]}"
    home.mkdir(parents=True)
    keep = scratch / "elsewhere" / "keep.txt"
    keep.parent.mkdir()
    keep.write_text("keep")
    shared = scratch / "shared"
    shared.mkdir()
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        yield Hostile(repo, home, keep, shared, sleeper)
    finally:
        sleeper.kill()
        sleeper.wait()
        shutil.rmtree(home, ignore_errors=True)


#: ``FS_IOC_GETFLAGS`` / ``FS_IOC_SETFLAGS`` (linux/fs.h, 64-bit) and the immutable flag.
_GETFLAGS, _SETFLAGS, _IMMUTABLE = 0x80086601, 0x40086602, 0x10


def clear_immutable(root: Path) -> None:
    """Clears ``chattr +i`` on every file below ``root`` (as root; a hostile agent that
    was not contained may have set it), so that the test's temporary directory can go."""
    import array
    import fcntl

    for path in (root, *root.rglob("*")):
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            flags = array.array("l", [0])
            fcntl.ioctl(fd, _GETFLAGS, flags, True)
            if flags[0] & _IMMUTABLE:
                flags[0] &= ~_IMMUTABLE
                fcntl.ioctl(fd, _SETFLAGS, flags, True)
        except OSError:
            pass
        finally:
            os.close(fd)
