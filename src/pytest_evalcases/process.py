"""Running subprocesses in their own process group, with a timeout and bounded output.

Agents, ``setup`` commands and command checks all run through :func:`run`. Output goes
to temporary files rather than pipes, so a child that prints hundreds of megabytes
neither blocks nor fills our memory: only the first and last ``max_output`` bytes are
kept. The whole process group is killed when the command ends, times out, or the run
is interrupted, so no grandchild outlives its case.

A process can leave the group (``setsid``, a daemon's double fork) and clear its
environment (``env -i``). On Linux this process is made a child subreaper while such a
command runs (``prctl(PR_SET_CHILD_SUBREAPER)``, no privilege needed): whatever the
command orphans is adopted by this process instead of by init, so it is found among our
children, killed and reaped when the command ends (docs/sandbox.md, "Processes
without a sandbox"). Elsewhere only the processes still carrying the run's mark are
found.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, Literal

from pytest_evalcases.redact import shorten


class Cancelled(Exception):
    """A command was stopped, or not started, because its run was cancelled from
    another thread (:class:`CancelToken`): the session stops or was interrupted."""


class CancelToken:
    """Cancels the commands that the thread holding it runs (:func:`cancelling`), from
    any other thread: a running command gets SIGTERM, a moment, then SIGKILL with all it
    started, and raises :class:`Cancelled`; a command not yet started never starts.

    A pipe rather than an event only, so that the wait for a command's exit wakes at
    once (``select`` on the process's pidfd and the pipe)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self._lock = threading.Lock()
        self._closed = False
        self._children: list[CancelToken] = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        """Cancel, with every token made by :meth:`child`; after :meth:`close`, nothing
        is written (the pipe's numbers may belong to another file by then)."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            children = list(self._children)
            if not self._closed:
                with contextlib.suppress(OSError):
                    os.write(self._write, b"x")
        for child in children:
            child.cancel()

    def child(self) -> CancelToken:
        """A token of its own, cancelled also when this one is."""
        child = CancelToken()
        with self._lock:
            if not self._event.is_set():
                self._children.append(child)
                return child
        child.cancel()
        return child

    def forget(self, child: CancelToken) -> None:
        """Stop cancelling ``child`` with this token."""
        with self._lock:
            if child in self._children:
                self._children.remove(child)

    def fileno(self) -> int:
        return self._read

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)


_TOKENS = threading.local()


@contextlib.contextmanager
def cancelling(token: CancelToken) -> Iterator[CancelToken]:
    """Every command this thread runs in the block is cancelled with ``token``."""
    previous = getattr(_TOKENS, "token", None)
    _TOKENS.token = token
    try:
        yield token
    finally:
        _TOKENS.token = previous


@contextlib.contextmanager
def cancellable() -> Iterator[CancelToken]:
    """A token of the block's own for the commands this thread runs in it, which the
    thread's token (the session stopping) cancels too: a run can be ended from another
    thread (the recording proxy, on an upstream failure) without cancelling the rest of
    the thread's work."""
    outer = _token()
    token = outer.child() if outer is not None else CancelToken()
    try:
        with cancelling(token):
            yield token
    finally:
        if outer is not None:
            outer.forget(token)
        token.close()


def _token() -> CancelToken | None:
    token: CancelToken | None = getattr(_TOKENS, "token", None)
    return token


#: Bytes of each stream kept by default (head and tail together).
DEFAULT_MAX_OUTPUT = 8 * 1024 * 1024
#: The environment variable that marks every process of one run.
RUN_MARK = "EVALCASES_RUN"
#: Seconds between SIGTERM and SIGKILL when a command is stopped.
KILL_GRACE = 2.0


@dataclass(frozen=True)
class ProcessResult:
    """What a finished (or killed) command left behind."""

    returncode: int | None
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False

    @property
    def truncated(self) -> bool:
        """Whether stdout or stderr was longer than the cap and was cut."""
        return self.stdout_truncated or self.stderr_truncated

    def said(self) -> str:
        """What a failed command said, for an error message: the tail of its standard
        error, else of its standard output."""
        return tail(self.stderr) or tail(self.stdout) or "(no output)"


def run(
    args: Sequence[str] | str,
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    stdin: str | None = None,
    max_output: int = DEFAULT_MAX_OUTPUT,
    sweep: bool = False,
) -> ProcessResult:
    """Run ``args`` (a shell command line when a string) and return its outcome.

    The process runs in a group of its own, killed when it ends or times out. With
    ``sweep``, every process it started is killed too, also one that left the group and
    cleared its environment: for agents, setups and command checks, which may start
    daemons or tools in sessions of their own. On Linux they are the processes this one
    adopted as the child subreaper, and their descendants; elsewhere the processes that
    still carry the run's mark (``EVALCASES_RUN`` in their environment). The sweep reads
    ``/proc`` (a millisecond or two), so commands of the plugin's own do without it.

    Raises ``FileNotFoundError`` / ``PermissionError`` when the program cannot be
    started; every other failure is described by the result.
    """
    shell = isinstance(args, str)
    token = _token()
    if token is not None and token.cancelled:
        raise Cancelled("the run was cancelled before the command started")
    start = time.monotonic()
    # Every process of the run inherits this mark, including those that leave its
    # process group (a CLI that starts its tools in sessions of their own): where no
    # subreaper adopts them, the sweep finds them by it.
    mark = f"{RUN_MARK}={uuid.uuid4().hex}"
    env = {**(os.environ if env is None else env), RUN_MARK: mark.partition("=")[2]}
    with contextlib.ExitStack() as files:
        out = files.enter_context(tempfile.TemporaryFile())
        err = files.enter_context(tempfile.TemporaryFile())
        inp: IO[bytes] | int = subprocess.DEVNULL
        if stdin is not None:
            inp = files.enter_context(_input_file())
            inp.write(stdin.encode("utf-8"))
            inp.seek(0)
        before = None
        if sweep and files.enter_context(_SUBREAPER.adopting()):
            before = _children()
        proc: subprocess.Popen[bytes] | None = None
        # Until the leftovers are known, what the command started is found by its mark.
        leftovers = _Leftovers(mark) if sweep else None
        try:
            # A Ctrl-C from the moment the command exists ends it: inside this ``try``.
            with _SUBREAPER.spawning():
                proc = subprocess.Popen(
                    args,
                    shell=shell,
                    cwd=cwd,
                    env=env,
                    stdin=inp,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                )
                # Every command, swept or not: another's sweep must not take it for an
                # orphan (a check's search started while an agent runs in a thread).
                _SUBREAPER.running(proc.pid, mark)
                files.callback(_SUBREAPER.ended, proc.pid)
            if before is not None:
                leftovers = _Leftovers(mark, before, _start_time(proc.pid) or 0)
            status = _wait(proc, timeout, token)
        except BaseException:
            if proc is not None:
                _end(proc, leftovers, stop=True)
            raise
        timed_out = status == "timeout"
        _end(proc, leftovers, stop=status != "exited")
        if status == "cancelled":
            raise Cancelled("the run was cancelled while a command ran")
        duration = time.monotonic() - start
        stdout, out_cut = _read_capped(out, max_output)
        stderr, err_cut = _read_capped(err, max_output)
    return ProcessResult(
        returncode=None if timed_out else proc.returncode,
        stdout=stdout,
        stderr=stderr,
        duration=duration,
        timed_out=timed_out,
        stdout_truncated=out_cut,
        stderr_truncated=err_cut,
    )


def _input_file() -> IO[bytes]:
    """A file for a command's standard input (a prompt: its size is the caller's): in
    memory where the system has ``memfd_create``, else a temporary file. Creating and
    removing a temporary file costs a millisecond on a busy disk, twice what the
    command it feeds may take; its output stays in temporary files, whatever it prints."""
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is not None:
        with contextlib.suppress(OSError):
            return os.fdopen(memfd_create("evalcases-stdin", os.MFD_CLOEXEC), "w+b")
    return tempfile.TemporaryFile()


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


def kill_adopted(before: Collection[tuple[int, int]], born: int = 0, mark: str = "") -> int:
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
    """
    me = os.getpid()
    own_session = os.getsid(0)
    kept = set(before)
    out_of_reach: set[int] = set()
    killed = 0
    deadline = time.monotonic() + KILL_GRACE
    while True:
        if not _has_children():
            # The common case, and it costs no look at /proc: nothing (more) was adopted.
            return killed
        with _SUBREAPER.spawning():
            # No command of another thread starts (and is not yet known to be running)
            # while the table is read and its orphans are killed.
            running = _SUBREAPER.leaders()
            others = _SUBREAPER.marks() - {mark}
            if _reaped_orphan(running, others, kept, born, own_session):
                # One that had exited already (bubblewrap's init, as often as not):
                # reaped without reading every process.
                continue
            table = _processes()
            adopted = [
                pid
                for pid, (ppid, start, _, session) in table.items()
                if ppid == me
                and start >= born
                and session != own_session
                and (pid, start) not in kept
                and pid not in running
                and _mark_of(pid) not in others
            ]
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


def _children() -> frozenset[tuple[int, int]]:
    """(pid, start time) of this process's children; empty without a look at ``/proc``
    when it has none (the common case)."""
    if not _has_children():
        return frozenset()
    me = os.getpid()
    return frozenset(
        (pid, start) for pid, (ppid, start, _, _) in _processes().items() if ppid == me
    )


def _has_children() -> bool:
    """Whether this process has a child, alive or not yet reaped (none reaped here)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def _start_time(pid: int) -> int | None:
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

    PR_SET_CHILD_SUBREAPER = 36
    PR_GET_CHILD_SUBREAPER = 37

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
                    self._call(self.PR_SET_CHILD_SUBREAPER, 0)
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
        if prctl(self.PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value:
            return True, False
        on = self._call(self.PR_SET_CHILD_SUBREAPER, 1)
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
_SUBREAPER = _Subreaper()


def exit_status(code: int | None) -> str:
    """How a command ended, for a message: ``exit status 3``, or ``killed by SIGKILL``
    where it died of a signal (Python reports ``-9``)."""
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def exited(code: int | None) -> str:
    """``exited with status 3``, or ``was killed by SIGKILL``."""
    text = exit_status(code)
    return f"was {text}" if text.startswith("killed") else f"exited with status {code}"


def tail(text: str, limit: int = 600) -> str:
    """The last ``limit`` characters of ``text``, stripped, for error messages: redacted
    before the cut, which would leave a piece of a secret (docs/results.md, "Secrets")."""
    return shorten(text.strip(), limit, keep="tail")


def _wait(
    proc: subprocess.Popen[bytes], timeout: float | None, token: CancelToken | None = None
) -> Literal["exited", "timeout", "cancelled"]:
    """Wait for the leader to exit, for ``timeout`` to run out, or for ``token`` to be
    cancelled, whichever comes first.

    On Linux a pidfd lets the wait block until one of them; elsewhere ``Popen.wait``
    polls in growing sleeps, which costs milliseconds on short commands.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    pidfd_open = getattr(os, "pidfd_open", None)
    fd = None
    if pidfd_open is not None:
        with contextlib.suppress(OSError):
            fd = pidfd_open(proc.pid)
    if fd is not None:
        try:
            watched = [fd] if token is None else [fd, token.fileno()]
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select(watched, [], [], left)
        finally:
            os.close(fd)
        if fd in ready:
            proc.wait()
            return "exited"
        return "cancelled" if token is not None and token.cancelled else "timeout"
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return "timeout"
        if token is not None and token.cancelled:
            return "cancelled"
        # Without a token, one wait to the deadline; with one, a look at it every 50 ms.
        step = left if token is None else min(left if left is not None else 0.05, 0.05)
        try:
            proc.wait(timeout=step)
        except subprocess.TimeoutExpired:
            continue
        return "exited"


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


@dataclass(frozen=True)
class _Leftovers:
    """How to find what a command leaves running outside its group: where this process
    is the subreaper, its children started since the command (``born``) but those it
    had ``before``; else the processes with ``mark`` in their environment."""

    mark: str
    before: frozenset[tuple[int, int]] | None = None
    born: int = 0

    def kill(self) -> None:
        if self.before is None:
            kill_marked(self.mark)
        else:
            kill_adopted(self.before, self.born, self.mark)


def _end(proc: subprocess.Popen[bytes], leftovers: _Leftovers | None, *, stop: bool) -> None:
    """Kill the command's group and reap its leader, then what it left elsewhere; with
    ``stop`` (a timeout, an interrupt) the group gets SIGTERM and a moment first.

    A Ctrl-C meanwhile (a second one, when the first stops the command) ends the grace
    at once, not the kill: it is raised once everything is dead, so no process survives
    an impatient user.
    """
    interrupted: KeyboardInterrupt | None = None
    try:
        if stop:
            try:
                # A command that answers SIGTERM with a Ctrl-C of ours may have it land
                # as soon as the signal is sent: inside this ``try``, never past the kill.
                _signal_group(proc.pid, signal.SIGTERM)
                proc.wait(timeout=KILL_GRACE)
            except subprocess.TimeoutExpired:
                pass
            except KeyboardInterrupt as exc:
                interrupted = exc
    finally:
        while True:
            try:
                # The leader may have exited; anything it left in its group goes too.
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
                if leftovers is not None:
                    leftovers.kill()
                break
            except KeyboardInterrupt as exc:
                interrupted = exc
    if interrupted is not None:
        raise interrupted


def _read_capped(f: IO[bytes], limit: int) -> tuple[str, bool]:
    """Decode the head and tail of a spooled stream, at most ``limit`` bytes in all."""
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(0)
    if size <= limit:
        return f.read().decode("utf-8", errors="replace"), False
    half = limit // 2
    head = f.read(half)
    f.seek(size - half)
    tail = f.read(half)
    cut = size - 2 * half
    marker = f"\n[... {cut} bytes cut by pytest-evalcases ...]\n".encode()
    return (head + marker + tail).decode("utf-8", errors="replace"), True
