"""Running subprocesses in their own process group, with a timeout and bounded output.

Agents, ``setup`` commands and command checks all run through :func:`run`. Output goes
to temporary files rather than pipes, so a child that prints hundreds of megabytes
neither blocks nor fills our memory: only the first and last ``max_output`` bytes are
kept. The whole process group is killed when the command ends, times out, or the run
is interrupted, so no grandchild outlives its case.

A process can leave the group (``setsid``, a daemon's double fork) and clear its
environment (``env -i``). On Linux this process is made a child subreaper while such a
command runs (``prctl(PR_SET_CHILDSUBREAPER)``, no privilege needed): whatever the
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
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Literal

from pytest_evalcases import reaper
from pytest_evalcases.reaper import KILL_GRACE, RUN_MARK
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
        if sweep and files.enter_context(reaper.SUBREAPER.adopting()):
            before = reaper.children()
        proc: subprocess.Popen[bytes] | None = None
        # Until the leftovers are known, what the command started is found by its mark.
        leftovers = reaper.Leftovers(mark) if sweep else None
        try:
            # A Ctrl-C from the moment the command exists ends it: inside this ``try``.
            with reaper.SUBREAPER.spawning():
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
                reaper.SUBREAPER.running(proc.pid, mark)
                files.callback(reaper.SUBREAPER.ended, proc.pid)
            if before is not None:
                leftovers = reaper.Leftovers(
                    mark, before, reaper.start_time(proc.pid) or 0, proc.pid
                )
            status = _wait(proc, timeout, token)
        except BaseException:
            if proc is not None:
                _end(proc, leftovers, stop=True)
            else:
                # A Ctrl-C inside Popen, after the fork: the command runs, and nothing
                # but its mark knows it.
                reaper.kill_marked(mark)
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


def _end(proc: subprocess.Popen[bytes], leftovers: reaper.Leftovers | None, *, stop: bool) -> None:
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
