"""process.run: process-group cleanup, bounded output, tolerant decoding."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases import process, reaper
from tests.helpers.sandbox import gone
from tests.helpers.timeouts import timeout_once


def alive(pid: int, wait: float = 5.0) -> bool:
    """Whether ``pid`` still runs after up to ``wait`` seconds.

    A zombie counts as gone: it has stopped and only waits for its new parent (PID 1 in
    a container may be slow to reap it).
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, IndexError):
            return False
        if state == "Z":
            return False
        if time.monotonic() > deadline:
            return True
        time.sleep(0.05)


def timing_out_once(monkeypatch: pytest.MonkeyPatch, pidfile: Path) -> None:
    """Timeouts count from the moment ``pidfile`` holds a pid: the command has started
    what the test kills, however long its start-up took."""
    timeout_once(monkeypatch, lambda pid: bool(pidfile.read_text().strip()))


def test_timeout_kills_the_whole_process_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pidfile = tmp_path / "pid"
    timing_out_once(monkeypatch, pidfile)
    started = time.monotonic()
    result = process.run(
        ["sh", "-c", f"sleep 300 & echo $! > {pidfile}; wait"], cwd=tmp_path, timeout=1
    )
    assert result.timed_out
    assert result.returncode is None
    assert time.monotonic() - started < 15
    pid = int(pidfile.read_text())
    assert not alive(pid)


def test_children_left_behind_by_a_finished_command_are_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    # The shell exits at once; its background child would otherwise run for 5 minutes.
    result = process.run(f"sleep 300 & echo $! > {pidfile}", cwd=tmp_path, timeout=30)
    assert result.returncode == 0
    assert not result.timed_out
    assert not alive(int(pidfile.read_text()))


@pytest.mark.parametrize("on_timeout", [True, False], ids=["on-timeout", "after-exit"])
def test_a_child_in_a_session_of_its_own_is_killed_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_timeout: bool
) -> None:
    # setsid takes the child out of the run's process group, as a CLI that starts its
    # tools detached does; the run's mark in its environment still finds it.
    pidfile = tmp_path / "pid"
    wait = "; sleep 300" if on_timeout else ""
    if on_timeout:
        timing_out_once(monkeypatch, pidfile)
    result = process.run(
        f"setsid sh -c 'echo $$ > {pidfile}.tmp; mv {pidfile}.tmp {pidfile}; exec sleep 300' & "
        f"until [ -s {pidfile} ]; do sleep 0.05; done{wait}",
        cwd=tmp_path,
        timeout=1.0 if on_timeout else 30.0,
        sweep=True,
    )
    assert result.timed_out is on_timeout
    assert not alive(int(pidfile.read_text()))


#: Start a daemon as a dev server does (fork, setsid, fork again, exec with an empty
#: environment, so that no mark finds it), write its pid to the file argv[1] once it
#: runs, and return.
DAEMON = """
import os, sys, time
pidfile = sys.argv[1]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        code = "import os, sys, time; "
        code += "open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(300)"
        os.execve(sys.executable, [sys.executable, "-c", code, pidfile + ".tmp"], {})
    os._exit(0)
while not os.path.exists(pidfile + ".tmp") or not open(pidfile + ".tmp").read():
    time.sleep(0.02)
os.rename(pidfile + ".tmp", pidfile)
"""


def reaped(pid: int, wait: float = 5.0) -> bool:
    """Whether ``pid`` is gone from ``/proc``: dead and reaped, not even a zombie."""
    deadline = time.monotonic() + wait
    while Path(f"/proc/{pid}").exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper is Linux's")
@pytest.mark.parametrize("on_timeout", [True, False], ids=["on-timeout", "after-exit"])
def test_a_daemon_that_left_the_session_and_cleared_its_environment_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_timeout: bool
) -> None:
    pidfile = tmp_path / "pid"
    (tmp_path / "daemon.py").write_text(DAEMON)
    wait = "; sleep 300" if on_timeout else ""
    if on_timeout:
        timing_out_once(monkeypatch, pidfile)
    result = process.run(
        f"{sys.executable} daemon.py {pidfile}{wait}",
        cwd=tmp_path,
        timeout=1.5 if on_timeout else 30.0,
        sweep=True,
    )
    assert result.timed_out is on_timeout, result.stderr
    pid = int(pidfile.read_text())
    # Killed and reaped by this process, which adopted it: no zombie is left either.
    assert reaped(pid)


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper is Linux's")
def test_an_orphan_is_killed_reaped_and_awaited_with_one_look_at_proc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # bubblewrap leaves its init exiting as its leader exits: every sandboxed command
    # has such an orphan. The sweep waits for what it killed to exit (a pidfd), then
    # reaps it: no sleeps in between, and /proc is read once, not until it looks empty.
    pidfile = tmp_path / "pid"
    (tmp_path / "daemon.py").write_text(DAEMON)
    reads: list[int] = []
    descendants = reaper._descendants

    def counted(table: dict[int, tuple[int, int, str, int]], roots: list[int]) -> set[int]:
        reads.append(1)
        return descendants(table, roots)

    def no_sleep(seconds: float) -> None:
        raise AssertionError(f"the sweep slept {seconds}s")

    monkeypatch.setattr(reaper, "_descendants", counted)
    monkeypatch.setattr(reaper.time, "sleep", no_sleep)
    process.run(f"{sys.executable} daemon.py {pidfile}", cwd=tmp_path, timeout=30, sweep=True)
    monkeypatch.undo()
    assert len(reads) == 1
    assert reaped(int(pidfile.read_text()))


ORPHAN = """
import os, time
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.write(w, str(pid).encode())
    os._exit(0)
os.wait()
pid = int(os.read(r, 32))
def state():
    try:
        return open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[0]
    except OSError:
        return ""
while state() not in ("Z", ""):
    time.sleep(0.01)
print(pid)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper is Linux's")
def test_an_orphan_that_exited_already_is_reaped_without_a_look_at_every_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As bubblewrap's init often is by the time its leader has exited: found by waitid.
    (tmp_path / "orphan.py").write_text(ORPHAN)
    reads: list[int] = []
    descendants = reaper._descendants

    def counted(table: dict[int, tuple[int, int, str, int]], roots: list[int]) -> set[int]:
        reads.append(1)
        return descendants(table, roots)

    monkeypatch.setattr(reaper, "_descendants", counted)
    result = process.run([sys.executable, "orphan.py"], cwd=tmp_path, timeout=30, sweep=True)
    monkeypatch.undo()
    assert result.returncode == 0, result.stderr
    assert reads == []
    assert reaped(int(result.stdout))


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper is Linux's")
def test_a_live_orphan_beside_its_leader_is_killed_without_a_look_at_every_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As bubblewrap's init is when it still tears its namespaces down as its leader
    # exits: its id follows the leader's, and only those few /proc files are read.
    tables: list[int] = []
    processes = reaper._processes

    def counted() -> dict[int, tuple[int, int, str, int]]:
        tables.append(1)
        return processes()

    command = ["sh", "-c", "setsid sleep 300 & echo $$ $!"]
    for _ in range(5):
        monkeypatch.setattr(reaper, "_processes", counted)
        result = process.run(command, cwd=tmp_path, timeout=30, sweep=True)
        monkeypatch.undo()
        leader, orphan = map(int, result.stdout.split())
        assert reaped(orphan)
        if 0 < orphan - leader <= reaper.NEAR:
            assert tables == []
            return
        # Another process took the ids in between: every process was read.
        tables.clear()
    pytest.skip("process ids were not handed out in order here")


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper is Linux's")
def test_a_daemon_is_killed_when_the_run_is_interrupted(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    (tmp_path / "daemon.py").write_text(DAEMON)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    def once_the_daemon_runs() -> None:
        while not pidfile.exists():
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGUSR1)

    previous = signal.signal(signal.SIGUSR1, interrupt)
    try:
        threading.Thread(target=once_the_daemon_runs, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            process.run(
                f"{sys.executable} daemon.py {pidfile}; sleep 300",
                cwd=tmp_path,
                timeout=60,
                sweep=True,
            )
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert reaped(int(pidfile.read_text()))


def interrupted_leaves_nothing(tmp_path: Path, mark: str, *, sweep: bool) -> bool:
    """Run a command marked ``mark`` that a patched step interrupts: whether the Ctrl-C
    reached the caller and nothing of the command is left."""
    with pytest.raises(KeyboardInterrupt):
        process.run(
            [sys.executable, "-c", "import time; time.sleep(300)", mark],
            cwd=tmp_path,
            timeout=60,
            sweep=sweep,
        )
    return gone(mark)


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper is Linux's")
def test_a_ctrl_c_as_the_command_starts_kills_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Ctrl-C lands after the command exists and before run() waits for it: where it
    # notes when the command started (for its sweep).
    mark = f"evalcases-mark-{tmp_path}"

    def interrupted(pid: int) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(reaper, "start_time", interrupted)
    assert interrupted_leaves_nothing(tmp_path, mark, sweep=True)


@pytest.mark.skipif(sys.platform != "linux", reason="the mark is read in /proc")
@pytest.mark.parametrize("sweep", [True, False], ids=["swept", "unswept"])
def test_a_ctrl_c_inside_popen_after_the_fork_kills_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sweep: bool
) -> None:
    # Popen has started the command and not returned it yet (a signal handler runs as
    # it reads whether the exec worked): run() never holds the process.
    mark = f"evalcases-mark-{tmp_path}"
    real = subprocess.Popen

    def interrupted(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        started = real(*args, **kwargs)
        assert started.pid
        raise KeyboardInterrupt

    monkeypatch.setattr(subprocess, "Popen", interrupted)
    assert interrupted_leaves_nothing(tmp_path, mark, sweep=sweep)


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper is Linux's")
def test_the_sweep_leaves_this_process_as_it_was(tmp_path: Path) -> None:
    # A child of pytest's own (another plugin's server) survives the sweep, and its
    # owner still reads its exit status: the sweep reaps only what it adopted.
    before = subprocess.Popen(["sleep", "300"])
    try:
        process.run("sleep 300 & exit 0", cwd=tmp_path, timeout=30, sweep=True)
        assert alive(before.pid, wait=0)
    finally:
        before.terminate()
    assert before.wait(timeout=5) == -15
    # Between runs this process is no subreaper: another daemon goes to init (or
    # whoever adopted orphans before), as it always did.
    pidfile = tmp_path / "pid"
    (tmp_path / "daemon.py").write_text(DAEMON)
    subprocess.run([sys.executable, "daemon.py", str(pidfile)], cwd=tmp_path, check=True)
    pid = int(pidfile.read_text())
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        assert int(stat[1]) != os.getpid()
    finally:
        os.kill(pid, signal.SIGKILL)


def test_kill_marked_finds_processes_by_their_environment(tmp_path: Path) -> None:
    env = {**os.environ, "EVALCASES_RUN": "mark-of-this-test"}
    proc = subprocess.Popen(["sleep", "300"], env=env, start_new_session=True)
    other = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        # Until the child has exec'd, /proc shows the environment it forked with.
        deadline = time.monotonic() + 5
        while b"mark-of-this-test" not in Path(f"/proc/{proc.pid}/environ").read_bytes():
            assert time.monotonic() < deadline, "the child never exec'd"
            time.sleep(0.005)
        assert reaper.kill_marked("EVALCASES_RUN=mark-of-this-test") == 1
        assert proc.wait(timeout=5) == -9
        assert other.poll() is None
    finally:
        for child in (proc, other):
            child.kill()
            child.wait()


def test_alive_sees_a_running_process(tmp_path: Path) -> None:
    # Guards the helper above: the tests that rely on it could otherwise never fail.
    child = subprocess.Popen(["sleep", "30"])
    try:
        assert alive(child.pid, wait=0)
    finally:
        child.kill()
        child.wait()
    assert not alive(child.pid, wait=0)


@pytest.mark.slow
def test_huge_output_is_cut_without_filling_memory(tmp_path: Path) -> None:
    writer = (
        "import sys\n"
        "out = sys.stdout.buffer\n"
        "out.write(b'HEAD\\n')\n"
        "chunk = b'x' * (1 << 20)\n"
        "for _ in range(200):\n"
        "    out.write(chunk)\n"
        "out.write(b'\\nTAIL\\n')\n"
    )
    tracemalloc.start()
    try:
        result = process.run([sys.executable, "-c", writer], cwd=tmp_path, timeout=120)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.returncode == 0
    assert result.stdout_truncated
    assert not result.stderr_truncated
    assert len(result.stdout) <= process.DEFAULT_MAX_OUTPUT + 200
    # Head and tail survive: a JSON stream's last line carries the result.
    assert result.stdout.startswith("HEAD\n")
    assert result.stdout.endswith("\nTAIL\n")
    assert "bytes cut by pytest-evalcases" in result.stdout
    # 200 MB went through; only the kept part (and its decoded copy) was in memory.
    assert peak < 5 * process.DEFAULT_MAX_OUTPUT


def test_cut_is_reported_per_stream(tmp_path: Path) -> None:
    result = process.run(
        "head -c 5000 /dev/zero | tr '\\0' e >&2; echo ok", cwd=tmp_path, max_output=1000
    )
    assert result.stderr_truncated
    assert not result.stdout_truncated
    assert result.stdout == "ok\n"
    assert result.stderr.startswith("e" * 500)
    assert "4000 bytes cut" in result.stderr


def test_non_utf8_bytes_decode_with_replacement(tmp_path: Path) -> None:
    result = process.run(r"printf 'caf\351 \377\376 ok\n'; printf '\200err' >&2", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "caf\ufffd \ufffd\ufffd ok\n"
    assert result.stderr == "\ufffderr"


def test_cut_inside_a_multibyte_character_does_not_raise(tmp_path: Path) -> None:
    # 3-byte characters and an odd cap: both cut points fall inside a character.
    result = process.run(
        [sys.executable, "-c", "print('€' * 1000)"],
        cwd=tmp_path,
        max_output=1001,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    assert result.stdout_truncated
    assert "\ufffd" in result.stdout
    assert result.stdout.startswith("€" * 100)


def test_stdin_env_and_cwd(tmp_path: Path) -> None:
    result = process.run(
        'cat; echo "$EVAL_X"; pwd',
        cwd=tmp_path,
        stdin="from stdin\n",
        env={"PATH": os.defpath, "EVAL_X": "42"},
    )
    assert result.stdout.splitlines() == ["from stdin", "42", str(tmp_path)]


def test_exit_status_and_missing_program(tmp_path: Path) -> None:
    assert process.run("exit 7", cwd=tmp_path).returncode == 7
    with pytest.raises(FileNotFoundError):
        process.run(["/nonexistent/agent-cli"], cwd=tmp_path)


def test_a_death_by_signal_is_named(tmp_path: Path) -> None:
    result = process.run("kill -9 $$", cwd=tmp_path, timeout=10)
    assert result.returncode == -9
    assert process.exit_status(result.returncode) == "killed by SIGKILL"
    assert process.exited(result.returncode) == "was killed by SIGKILL"
    assert process.exit_status(3) == "exit status 3"
    assert process.exited(3) == "exited with status 3"


def _in_thread(work: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    """Run ``work`` in a thread; the list gets its result or the exception it raised."""
    outcome: list[object] = []

    def target() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome


def _wait_for(path: Path, wait: float = 10.0) -> str:
    deadline = time.monotonic() + wait
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return path.read_text().strip()


@pytest.mark.parametrize("sweep", [False, True], ids=["group", "sweep"])
def test_a_cancelled_command_is_killed_with_what_it_started(tmp_path: Path, sweep: bool) -> None:
    pidfile = tmp_path / "pid"
    token = process.CancelToken()

    def work() -> object:
        with process.cancelling(token):
            return process.run(
                f"sleep 300 & echo $! > {pidfile}; wait", cwd=tmp_path, timeout=600, sweep=sweep
            )

    thread, outcome = _in_thread(work)
    child = int(_wait_for(pidfile))
    token.cancel()
    thread.join(15)
    assert not thread.is_alive()
    assert isinstance(outcome[0], process.Cancelled), outcome
    assert not alive(child)
    token.close()


def test_a_cancelled_token_starts_no_command(tmp_path: Path) -> None:
    token = process.CancelToken()
    token.cancel()
    with process.cancelling(token), pytest.raises(process.Cancelled):
        process.run(f"touch {tmp_path / 'ran'}", cwd=tmp_path, timeout=30)
    assert not (tmp_path / "ran").exists()
    # The token belongs to the block: after it, commands run again.
    assert process.run("true", cwd=tmp_path, timeout=30).returncode == 0
    token.close()


def test_a_block_of_its_own_is_cancelled_alone_or_with_the_thread(tmp_path: Path) -> None:
    outer = process.CancelToken()
    with process.cancelling(outer):
        with process.cancellable() as inner:
            inner.cancel()
            with pytest.raises(process.Cancelled):
                process.run("true", cwd=tmp_path, timeout=30)
        # Its own cancel leaves the thread's commands alone.
        assert not outer.cancelled
        assert process.run("true", cwd=tmp_path, timeout=30).returncode == 0
        with process.cancellable() as inner:
            # The thread's cancel (the session stops) reaches the block's commands.
            outer.cancel()
            assert inner.cancelled
            with pytest.raises(process.Cancelled):
                process.run("true", cwd=tmp_path, timeout=30)
        # Once the block is over, its token is closed: a late cancel writes nothing.
        inner.cancel()
    outer.close()


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper is Linux's")
def test_commands_running_at_once_leave_each_other_s_processes_alone(tmp_path: Path) -> None:
    # While A runs, B orphans a process that keeps its environment (and so B's mark),
    # and this process starts a child of its own with subprocess. A ends and sweeps what
    # it orphaned: its own background child, never B's orphan or this process's child.
    def path(name: str) -> Path:
        return tmp_path / name

    def until(name: str) -> str:
        # At most 30 s: a failing test must not leave its commands spinning.
        return f"i=0; until [ -e {path(name)} ] || [ $i -ge 1500 ]; do i=$((i+1)); sleep 0.02; done"

    command_b = (
        f"{until('a-started')}; (setsid sleep 300 & echo $! > {path('orphan')}); "
        f"{until('orphan')}; echo x > {path('b-orphaned')}; {until('a-done')}; "
        f"kill -0 $(cat {path('orphan')}) && echo alive > {path('status')}"
    )
    command_a = (
        f"sleep 300 & echo $! > {path('a-child')}; echo x > {path('a-started')}; "
        f"{until('b-orphaned')}; {until('own')}"
    )
    thread_b, outcome_b = _in_thread(
        lambda: process.run(command_b, cwd=tmp_path, timeout=60, sweep=True)
    )
    thread_a, outcome_a = _in_thread(
        lambda: process.run(command_a, cwd=tmp_path, timeout=60, sweep=True)
    )
    _wait_for(path("b-orphaned"))
    own = subprocess.Popen(["sleep", "300"])
    try:
        path("own").write_text("x")
        thread_a.join(30)
        assert not isinstance(outcome_a[0], BaseException), outcome_a
        assert not alive(int(path("a-child").read_text()))
        assert alive(own.pid, wait=0), "A's sweep killed a child of this process's own"
    finally:
        own.kill()
        own.wait()
    path("a-done").write_text("x")
    thread_b.join(30)
    assert not isinstance(outcome_b[0], BaseException), outcome_b
    assert path("status").read_text().strip() == "alive", "A's sweep killed B's orphan"
    # Once B ends, its orphan goes with it.
    assert not alive(int(path("orphan").read_text()))


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper is Linux's")
def test_a_command_without_a_sweep_is_left_to_run_by_another_commands_sweep(
    tmp_path: Path,
) -> None:
    # A runs with its sweep (an agent); while it runs, this thread starts B without one
    # (the child a regex check searches in, under --eval-concurrency). A ends and sweeps
    # what it orphaned: B, a command still running, is none of that.
    started, release = tmp_path / "b-started", tmp_path / "a-may-end"
    thread_a, outcome_a = _in_thread(
        lambda: process.run(
            f"i=0; until [ -e {release} ] || [ $i -ge 1500 ]; do i=$((i+1)); sleep 0.02; done",
            cwd=tmp_path,
            timeout=60,
            sweep=True,
        )
    )
    time.sleep(0.05)  # B starts after A, as an orphan of A's would

    def b_waits_for_a_to_end() -> None:
        _wait_for(started)
        release.write_text("x")
        thread_a.join(30)

    ending = threading.Thread(target=b_waits_for_a_to_end, daemon=True)
    ending.start()
    b = process.run(
        [sys.executable, "-c", f"import pathlib, time; pathlib.Path({str(started)!r})"
         ".write_text('x'); time.sleep(1); print('searched')"],
        cwd=tmp_path,
        timeout=60,
    )  # fmt: skip
    ending.join(30)
    assert not isinstance(outcome_a[0], BaseException), outcome_a
    assert (b.returncode, b.stdout) == (0, "searched\n"), "A's sweep killed B"
