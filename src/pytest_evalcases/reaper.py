"""What a command leaves running when it ends, found and killed: this process as the
child subreaper of the commands it runs (Linux, ``prctl(PR_SET_CHILD_SUBREAPER)``), the
process table read from ``/proc``, and the processes that still carry a run's mark in
their environment where no subreaper adopts them. :func:`pytest_evalcases.process.run`
sweeps with :class:`Leftovers` (docs/sandbox.md, "Processes without a sandbox").
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

#: The environment variable that marks every process of one run.
RUN_MARK = "EVALCASES_RUN"
#: Seconds between SIGTERM and SIGKILL when a command is stopped.
KILL_GRACE = 2.0


def kill_marked(mark: str) -> int:
    """SIGKILL every process whose environment holds ``mark`` (``NAME=VALUE``); returns
    how many were signalled. Reads ``/proc``: elsewhere it does nothing."""
    needle = mark.encode() + b"\0"
    killed = 0
    for _ in range(3):
        found = []
        for pid in _pids():
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    environ = f.read() + b"\0"
            except OSError:
                continue
            if b"\0" + needle in b"\0" + environ:
                found.append(pid)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        # A process forked while the first were read is found the next time round.
        time.sleep(0.01)
    return killed


def kill_adopted(
    before: Collection[tuple[int, int]], born: int = 0, mark: str = "", leader: int = 0
) -> int:
    """SIGKILL every child of this process that started at or after ``born`` (clock
    ticks since boot, as ``/proc/PID/stat`` counts them) in a session other than this
    process's own, but those it had ``before`` (pid and start time pairs, from
    :func:`_children`) and the commands still running, with their descendants, and reap
    those children; returns how many were signalled. Processes it may not signal
    (another user's) are left alone.

    With this process the child subreaper, those children are what the command started
    at ``born`` orphaned: the daemons it left, whatever session or environment they
    gave themselves. What another command running at the same time orphaned is left to
    it where it still carries that command's mark, and taken where it cleared its
    environment (``mark`` is this command's, ``NAME=VALUE``). A child
    that other code starts with :mod:`subprocess` stays in this process's session and
    is left alone; the commands of :func:`run` in other threads are known as they
    start (:meth:`_Subreaper.spawning`). Reads ``/proc``: elsewhere it does nothing.

    ``leader`` is the command's first process: what it orphaned is looked for first
    among the few process ids after its own (:func:`_near`), and every process only when
    none of those is an orphan of it.
    """
    me = os.getpid()
    own_session = os.getsid(0)
    kept = set(before)
    out_of_reach: set[int] = set()
    killed = 0
    deadline = time.monotonic() + KILL_GRACE
    first = True
    while True:
        if not _haschildren():
            # The common case, and it costs no look at /proc: nothing (more) was adopted.
            return killed
        with SUBREAPER.spawning():
            # No command of another thread starts (and is not yet known to be running)
            # while the table is read and its orphans are killed.
            running = SUBREAPER.leaders()
            others = SUBREAPER.marks() - {mark}
            if _reaped_orphan(running, others, kept, born, own_session):
                # One that had exited already (bubblewrap's init, as often as not):
                # reaped without reading every process.
                continue
            # bubblewrap's init, still tearing its namespaces down as its leader exits,
            # has one of the ids after the leader's as often as not: found there, it is
            # killed (and with it every process of its PID namespace) without a look at
            # every process. Whatever else is left is found the next time round.
            partial = first and leader > 0
            first = False
            table = _near(leader) if partial else {}
            orphan = _Orphan(me, born, own_session, kept, running, others)
            adopted = [pid for pid, entry in table.items() if orphan(pid, entry)]
            if not adopted:
                partial = False
                table = _processes()
                adopted = [pid for pid, entry in table.items() if orphan(pid, entry)]
            doomed = _descendants(table, adopted) - out_of_reach
            dying: list[int] = []
            for pid in doomed:
                if table[pid][2] == "Z":
                    # Dead already (bubblewrap's init, left as its leader exits):
                    # reaped below, or by its own parent.
                    continue
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
                    dying.append(pid)
                except ProcessLookupError:
                    pass
                except PermissionError:
                    out_of_reach.add(pid)
            for pid in adopted:
                # Only the children found above: a child of anyone else's
                # subprocess.Popen must be left for its own wait().
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
        if partial and not dying:
            # Reaped already: any other orphan is looked for among every process.
            continue
        if not dying or time.monotonic() > deadline:
            return killed
        # Until none is left: a killed parent's children are adopted next, and a
        # process forked while the table was read is found the next time round,
        # once those killed have exited.
        _await_exit(dying, deadline)
        for pid in adopted:
            # Reaped now, those that were: none left, no second look at /proc.
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


@dataclass(frozen=True)
class _Orphan:
    """Whether a process of the table is one that :func:`kill_adopted` kills: a child of
    this process (``me``), started since ``born`` in a session of its own, neither kept
    from ``before`` nor a running command, nor marked as another's."""

    me: int
    born: int
    own_session: int
    kept: Collection[tuple[int, int]]
    running: Collection[int]
    others: Collection[str]

    def __call__(self, pid: int, entry: tuple[int, int, str, int]) -> bool:
        ppid, start, _, session = entry
        return (
            ppid == self.me
            and start >= self.born
            and session != self.own_session
            and (pid, start) not in self.kept
            and pid not in self.running
            and _mark_of(pid) not in self.others
        )


def _reaped_orphan(
    running: Collection[int],
    others: Collection[str],
    kept: Collection[tuple[int, int]],
    born: int,
    own_session: int,
) -> bool:
    """Whether a child that has exited, and that :func:`kill_adopted`'s look at every
    process would take for an orphan, was found and reaped: one ``waitid`` and one
    ``/proc`` file instead of them all."""
    try:
        info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    if info is None or info.si_pid in running:
        return False
    pid = info.si_pid
    fields = _stat(pid)
    if fields is None:
        return False
    start, session = int(fields[19]), int(fields[3])
    if start < born or session == own_session or (pid, start) in kept:
        return False
    if _mark_of(pid) in others:
        return False
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    return True


def _await_exit(pids: Iterable[int], deadline: float) -> None:
    """Until every process of ``pids`` has exited (or ``deadline``): woken by their
    pidfds as each exits, where the system has them, rather than by sleeps that cost a
    run milliseconds each time a command leaves a process that is already exiting."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        time.sleep(0.005)
        return
    poll = select.poll()
    fds: list[int] = []
    try:
        for pid in pids:
            try:
                fd = pidfd_open(pid)
            except ProcessLookupError:
                continue
            except OSError:
                # No pidfds here (an old kernel): a short sleep, as before them.
                time.sleep(0.005)
                return
            fds.append(fd)
            poll.register(fd, select.POLLIN)
        left = len(fds)
        while left:
            wait = deadline - time.monotonic()
            if wait <= 0:
                return
            ready = poll.poll(wait * 1000)
            for fd, _ in ready:
                poll.unregister(fd)
                left -= 1
    finally:
        for fd in fds:
            os.close(fd)


def _mark_of(pid: int) -> str:
    """The run mark (``NAME=VALUE``) in the environment of ``pid``; empty without one
    or where it cannot be read."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:
        return ""
    prefix = RUN_MARK.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return entry.decode("ascii", "replace")
    return ""


def children() -> frozenset[tuple[int, int]]:
    """(pid, start time) of this process's children; empty without a look at ``/proc``
    when it has none (the common case)."""
    if not _haschildren():
        return frozenset()
    me = os.getpid()
    return frozenset(
        (pid, start) for pid, (ppid, start, _, _) in _processes().items() if ppid == me
    )


def _haschildren() -> bool:
    """Whether this process has a child, alive or not yet reaped (none reaped here)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def start_time(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[19]) if fields is not None else None


def _processes() -> dict[int, tuple[int, int, str, int]]:
    """pid -> (parent pid, start time in clock ticks since boot, state, session id) of
    every process."""
    table: dict[int, tuple[int, int, str, int]] = {}
    for pid in _pids():
        fields = _stat(pid)
        if fields is not None:
            table[pid] = (int(fields[1]), int(fields[19]), fields[0], int(fields[3]))
    return table


#: How many process ids after a command's leader :func:`_near` reads.
NEAR = 4


def _near(leader: int) -> dict[int, tuple[int, int, str, int]]:
    """:func:`_processes`, of the :data:`NEAR` process ids after ``leader`` alone."""
    table: dict[int, tuple[int, int, str, int]] = {}
    for pid in range(leader + 1, leader + 1 + NEAR):
        fields = _stat(pid)
        if fields is not None:
            table[pid] = (int(fields[1]), int(fields[19]), fields[0], int(fields[3]))
    return table


def _pids() -> list[int]:
    """The pid of every process in ``/proc``; none where there is no ``/proc``."""
    try:
        with os.scandir("/proc") as entries:
            return [int(entry.name) for entry in entries if entry.name.isdigit()]
    except OSError:
        return []


def _stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first)."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    # The command name, in parentheses, may itself hold spaces and parentheses.
    fields = data.rpartition(b")")[2].decode("ascii", "replace").split()
    return fields if len(fields) > 19 else None


def _descendants(table: Mapping[int, tuple[int, int, str, int]], roots: Iterable[int]) -> set[int]:
    """``roots`` and every process below them in ``table``."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, *_) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


class _Subreaper:
    """This process as the child subreaper of the commands it runs, on Linux.

    The attribute belongs to the whole process, so this object is process-wide too: it
    is set while at least one command runs (counted, for commands run from threads) and
    cleared after the last, so that other code's orphans go to init as they always did
    between runs. Where someone else made the process a subreaper it stays one.
    """

    PR_SET_CHILDSUBREAPER = 36
    PR_GET_CHILDSUBREAPER = 37

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spawn_lock = threading.RLock()
        self._users = 0
        self._ours = False
        self._active = False
        self._running: dict[int, str] = {}
        self._prctl: Any = None

    @contextlib.contextmanager
    def adopting(self) -> Iterator[bool]:
        """Adopt orphans for the block; whether this process does (not elsewhere)."""
        with self._lock:
            if self._users == 0:
                self._active, self._ours = self._switch_on()
            self._users += 1
            active = self._active
        try:
            yield active
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0 and self._ours:
                    self._call(self.PR_SET_CHILDSUBREAPER, 0)
                    self._ours = False

    @contextlib.contextmanager
    def spawning(self) -> Iterator[None]:
        """Hold off the orphan sweeps of other threads while a command starts and is
        noted as running: until then it would look like an orphan to them."""
        with self._spawn_lock:
            yield

    def running(self, pid: int, mark: str = "") -> None:
        """Note a command's leader and mark: another command's cleanup must not take it,
        nor what it orphaned, for its own orphans (until :meth:`ended`)."""
        with self._lock:
            self._running[pid] = mark

    def ended(self, pid: int) -> None:
        with self._lock:
            self._running.pop(pid, None)

    def leaders(self) -> frozenset[int]:
        with self._lock:
            return frozenset(self._running)

    def marks(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._running.values())

    def _switch_on(self) -> tuple[bool, bool]:
        """(whether this process is a subreaper now, whether we made it one)."""
        prctl = self._load()
        if prctl is None:
            return False, False
        import ctypes

        flag = ctypes.c_int(0)
        if prctl(self.PR_GET_CHILDSUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value:
            return True, False
        on = self._call(self.PR_SET_CHILDSUBREAPER, 1)
        return on, on

    def _load(self) -> Any:
        """libc's ``prctl``; ``None`` off Linux or where it cannot be reached."""
        if self._prctl is None:
            self._prctl = False
            if sys.platform == "linux" and os.path.isdir("/proc/self"):
                # Imported on the first command that needs it: ctypes costs
                # milliseconds, which a pytest run without eval cases should not pay.
                import ctypes

                with contextlib.suppress(OSError, AttributeError):
                    self._prctl = ctypes.CDLL(None, use_errno=True).prctl
        return self._prctl or None

    def _call(self, option: int, value: int) -> bool:
        return bool(self._prctl(option, value, 0, 0, 0) == 0)


#: The one per process, as the attribute it sets.
SUBREAPER = _Subreaper()


@dataclass(frozen=True)
class Leftovers:
    """How to find what a command leaves running outside its group: where this process
    is the subreaper, its children started since the command (``born``) but those it
    had ``before``; else the processes with ``mark`` in their environment."""

    mark: str
    before: frozenset[tuple[int, int]] | None = None
    born: int = 0
    #: The command's first process (:func:`kill_adopted`).
    leader: int = 0

    def kill(self) -> None:
        if self.before is None:
            kill_marked(self.mark)
        else:
            kill_adopted(self.before, self.born, self.mark, self.leader)
