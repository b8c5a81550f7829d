"""Running subprocesses in their own process group, with a timeout and bounded output.

Agents, ``setup`` commands and command checks all run through :func:`run`. Output goes
to temporary files rather than pipes, so a child that prints hundreds of megabytes
neither blocks nor fills our memory: only the first and last ``max_output`` bytes are
kept. The whole process group is killed when the command ends, times out, or the run
is interrupted, so no grandchild outlives its case.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from pytest_evalcases.redact import shorten

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
    ``sweep``, every process that still carries the run's mark (``EVALCASES_RUN`` in its
    environment) is killed too, also one that left the group: for agent CLIs, which may
    start their tools in sessions of their own. The sweep reads ``/proc`` (about half a
    millisecond), so commands of the plugin's own do without it.

    Raises ``FileNotFoundError`` / ``PermissionError`` when the program cannot be
    started; every other failure is described by the result.
    """
    shell = isinstance(args, str)
    start = time.monotonic()
    # Every process of the run inherits this mark, including those that leave its
    # process group (a CLI that starts its tools in sessions of their own): the sweep
    # below finds them by it.
    mark = f"{RUN_MARK}={uuid.uuid4().hex}"
    env = {**(os.environ if env is None else env), RUN_MARK: mark.partition("=")[2]}
    with contextlib.ExitStack() as files:
        out = files.enter_context(tempfile.TemporaryFile())
        err = files.enter_context(tempfile.TemporaryFile())
        inp: IO[bytes] | int = subprocess.DEVNULL
        if stdin is not None:
            inp = files.enter_context(tempfile.TemporaryFile())
            inp.write(stdin.encode("utf-8"))
            inp.seek(0)
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
        try:
            timed_out = not _wait(proc, timeout)
        except BaseException:
            _kill_group(proc)
            if sweep:
                kill_marked(mark)
            raise
        if timed_out:
            _kill_group(proc)
        # The leader exited; anything it left running goes too, in its group or not.
        _signal_group(proc.pid, signal.SIGKILL)
        if sweep:
            kill_marked(mark)
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


def kill_marked(mark: str) -> int:
    """SIGKILL every process whose environment holds ``mark`` (``NAME=VALUE``); returns
    how many were signalled. Reads ``/proc``: elsewhere it does nothing."""
    needle = mark.encode() + b"\0"
    killed = 0
    for _ in range(3):
        found = []
        try:
            entries = os.scandir("/proc")
        except OSError:
            return killed
        with entries:
            for entry in entries:
                if not entry.name.isdigit():
                    continue
                try:
                    with open(f"/proc/{entry.name}/environ", "rb") as f:
                        environ = f.read() + b"\0"
                except OSError:
                    continue
                if b"\0" + needle in b"\0" + environ:
                    found.append(int(entry.name))
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        # A process forked while the first were read is found the next time round.
        time.sleep(0.01)
    return killed


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


def _wait(proc: subprocess.Popen[bytes], timeout: float | None) -> bool:
    """Wait for the leader to exit; ``False`` when ``timeout`` ran out first.

    On Linux a pidfd lets the wait block until the exit or the timeout; elsewhere
    ``Popen.wait`` polls in growing sleeps, which costs milliseconds on short commands.
    """
    if timeout is None:
        proc.wait()
        return True
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None:
        try:
            fd = pidfd_open(proc.pid)
        except OSError:
            fd = None
        if fd is not None:
            try:
                ready, _, _ = select.select([fd], [], [], timeout)
            finally:
                os.close(fd)
            if not ready:
                return False
            proc.wait()
            return True
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the group, give it a moment, then SIGKILL it and reap the leader."""
    _signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_GRACE)
    _signal_group(proc.pid, signal.SIGKILL)
    proc.wait()


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
