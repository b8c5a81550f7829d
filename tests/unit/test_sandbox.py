"""The sandbox: which one is chosen, and what a command in it can and cannot do, with
the real bubblewrap."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_evalcases import process, sandbox
from pytest_evalcases.containment import refused_paths
from pytest_evalcases.errors import UsageError
from pytest_evalcases.sandbox import Sandbox
from tests.helpers.sandbox import alive_with, clear_immutable, requires_bwrap, requires_root


def contained(**kwargs: object) -> Sandbox:
    chosen = sandbox.choose("bwrap", **kwargs)  # type: ignore[arg-type]
    assert chosen.contained
    return chosen


def run_in(box: Sandbox, script: str, cwd: Path, **kwargs: object) -> process.ProcessResult:
    argv = box.wrap(script, cwd=cwd, writable=(cwd,), **kwargs)  # type: ignore[arg-type]
    return process.run(argv, cwd=cwd, timeout=30)


def test_none_leaves_the_command_as_it_is(tmp_path: Path) -> None:
    box = sandbox.choose("none")
    assert not box.contained
    assert box.reason == "eval_sandbox = none"
    assert box.wrap("echo hi", cwd=tmp_path) == "echo hi"
    assert box.wrap(["echo", "hi"], cwd=tmp_path) == ["echo", "hi"]
    assert box.describe() == "none"


def test_auto_falls_back_to_none_without_bubblewrap_and_bwrap_refuses(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    box = sandbox.choose("auto")
    assert not box.contained
    assert box.reason == "bubblewrap (bwrap) is not on PATH"
    with pytest.raises(
        UsageError, match=r"eval_sandbox = bwrap, but bubblewrap .* apt-get install"
    ):
        sandbox.choose("bwrap")


def test_a_bubblewrap_that_fails_its_trial_is_not_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # As on a kernel without unprivileged user namespaces.
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    box = sandbox.choose("auto")
    assert not box.contained
    assert box.reason == (
        f"a trial run of {fake} failed: bwrap: No permissions to create new namespace"
    )
    with pytest.raises(UsageError, match="No permissions to create new namespace"):
        sandbox.choose("bwrap")


def test_where_no_user_namespace_is_allowed_runs_are_contained_without_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # As on a kernel with user.max_user_namespaces = 0: bubblewrap fails when asked for
    # one, and runs without.
    fake = tmp_path / "bwrap"
    fake.write_text(
        '#!/bin/sh\nfor a; do [ "$a" = --unshare-user ] && '
        "{ echo 'bwrap: No space left on device' >&2; exit 1; }; done\nexit 0\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    sandbox.trial.cache_clear()

    box = sandbox.choose("bwrap")

    assert box.contained
    assert not box.user_namespace
    argv = list(box.wrap(["true"], cwd=tmp_path))
    assert "--unshare-user" not in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert {"--unshare-ipc", "--unshare-uts", "--unshare-pid"} <= set(argv)


@requires_bwrap
def test_writes_land_in_the_workspace_and_tmp_only(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    home = Path.home()
    script = (
        f"echo in > inside.txt; echo x > {home}/owned-by-eval; echo y > {outside}/new.txt; "
        f"rm -f {outside}/keep.txt; echo t > /tmp/scratch && cat /tmp/scratch; echo done"
    )
    result = run_in(contained(), script, workspace)

    assert result.returncode == 0
    assert result.stdout.split() == ["t", "done"]
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert not (home / "owned-by-eval").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    # The home is read-only; `outside`, in the real /tmp, is not in the private one.
    assert f"cannot create {home}/owned-by-eval: Read-only file system" in result.stderr
    assert f"cannot create {outside}/new.txt: Directory nonexistent" in result.stderr
    # The private /tmp is gone with the command.
    assert not Path("/tmp/scratch").exists()


@requires_bwrap
def test_other_workspaces_in_tmp_are_not_even_visible(tmp_path: Path) -> None:
    import tempfile

    other = Path(tempfile.mkdtemp(prefix="evalcases-other-"))
    mine = Path(tempfile.mkdtemp(prefix="evalcases-mine-"))
    try:
        (other / "secret.txt").write_text("s")
        result = run_in(contained(), f"ls {other}; cat {other}/secret.txt; echo end", mine)
        assert result.stdout.strip() == "end"
        assert "No such file or directory" in result.stderr
    finally:
        for path in (other, mine):
            for child in path.iterdir():
                child.unlink()
            path.rmdir()


@requires_bwrap
def test_a_process_outside_can_be_neither_seen_nor_signalled(tmp_path: Path) -> None:
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        result = run_in(
            contained(),
            f"kill -9 {sleeper.pid}; echo kill=$?; ls /proc | grep -c '^[0-9]'",
            tmp_path,
        )
        assert "kill=1" in result.stdout
        # sh, ls and grep (and bubblewrap's init): nothing of the host.
        assert int(result.stdout.split()[-1]) < 10
        time.sleep(0.1)
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()


@requires_bwrap
def test_ro_and_rw_paths_and_the_network_switch(tmp_path: Path) -> None:
    shared, tools = tmp_path / "cache", tmp_path / "tools"
    shared.mkdir()
    tools.mkdir()
    (tools / "tool.sh").write_text("echo tool")
    box = contained(writable=[shared], read_only=[tools])
    result = run_in(
        box, f"echo c > {shared}/hit; sh {tools}/tool.sh; echo x > {tools}/new", tmp_path
    )
    assert (shared / "hit").read_text() == "c\n"
    # Below /tmp, yet visible: read, not written.
    assert result.stdout.strip() == "tool"
    assert "Read-only file system" in result.stderr
    assert not (tools / "new").exists()

    server = socket.create_server(("127.0.0.1", 0))
    try:
        port = server.getsockname()[1]
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), 5)"
        reach = f'{sys.executable} -c "{connect}"'
        # The host's loopback is the network the agent shares; without it, nothing listens.
        assert run_in(box, reach, tmp_path, network=True).returncode == 0
        assert run_in(box, reach, tmp_path, network=False).returncode != 0
    finally:
        server.close()
    assert box.describe() == "bwrap"
    assert contained(network="none").describe() == "bwrap (no network for setups and checks)"


@requires_bwrap
def test_a_timeout_kills_everything_in_the_sandbox(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = (
        f"{sys.executable} -c 'import os, time; "
        f'open("{pidfile}", "w").write(str(os.getpid())); time.sleep(60)\' & '
        "setsid sleep 60 & wait"
    )
    box = contained()
    argv = box.wrap(script, cwd=tmp_path, writable=(tmp_path,))
    start = time.monotonic()
    result = process.run(argv, cwd=tmp_path, timeout=1.0)
    assert result.timed_out
    assert time.monotonic() - start < 20
    # The grandchild's pid in the host namespace: find it by its command line.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and alive_with(str(pidfile)):
        time.sleep(0.05)
    assert not alive_with(str(pidfile))


@requires_bwrap
def test_the_sandbox_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    marker = f"evalcases-orphan-{os.getpid()}"
    box = contained()
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)", marker]
    inner = box.wrap(sleeper, cwd=tmp_path, writable=(tmp_path,))
    # A parent that is SIGKILLed, as pytest itself might be: no chance to clean up.
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, time; subprocess.Popen({list(inner)!r}); time.sleep(60)",
        ],
        start_new_session=True,
    )
    # Until the sleeper itself runs: the parent and bubblewrap's own two processes carry
    # the marker in their command lines from their exec on, bubblewrap's before they
    # asked to die with their parent (a parent killed in that window leaves them
    # running: a race of bubblewrap's). Four processes: the parent, two of bubblewrap's
    # and the sleeper.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(alive_with(marker)) < 4:
        time.sleep(0.05)
    assert len(alive_with(marker)) == 4
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and alive_with(marker):
        time.sleep(0.05)
    left = alive_with(marker)
    assert not left, subprocess.run(
        ["ps", "-o", "pid,ppid,stat,etime,args", "-p", ",".join(map(str, left))],
        capture_output=True,
        text=True,
        check=False,
    ).stdout


def test_a_path_to_add_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"eval_sandbox_rw: no such path: .*/typo"):
        sandbox.choose("auto", writable=[tmp_path / "typo"])
    with pytest.raises(UsageError, match=r"eval_sandbox_ro: no such path: .*/gone"):
        sandbox.choose("bwrap", read_only=[tmp_path / "gone"])
    assert not sandbox.choose("none", writable=[tmp_path / "typo"]).contained


#: What root could do in a sandbox that left it its capabilities (docs/sandbox.md): remount
#: the visible directory writable and write to it, make a device node and set a file
#: immutable where it may write, change the host's name, and make a System V
#: shared-memory segment (which outlives the command without an IPC namespace of its own).
PRIVILEGED = (
    "mount -o remount,rw,bind {visible}; echo x > {visible}/ROGUE; "
    "mknod {rw}/disk c 1 3; echo l > {rw}/locked; chattr +i {rw}/locked; "
    "hostname owned-by-eval; echo owned-by-eval > /proc/sys/kernel/hostname; "
    "ipcmk -M 4096 -p 600"
)


@requires_bwrap
@requires_root
@pytest.mark.parametrize("user", ["root", "nobody"])
def test_a_command_has_no_privilege_as_root_or_as_an_ordinary_user(
    monkeypatch: pytest.MonkeyPatch, user: str
) -> None:
    import tempfile

    tools = ["mount", "mknod", "chattr", "lsattr", "hostname", "ipcmk", "ipcrm", "setpriv"]
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        # The as-root test of the plugin (tests/plugin/test_sandbox.py) needs none.
        pytest.skip(f"not installed: {', '.join(missing)} (util-linux, e2fsprogs)")
    # Not below pytest's temporary directory, which only root may enter.
    top = Path(tempfile.mkdtemp(prefix="evalcases-privileged-"))
    visible, rw = top / "visible", top / "rw"
    visible.mkdir()
    rw.mkdir()
    segments = _segments()
    host_name = socket.gethostname()
    prefix: list[str] = []
    if user == "nobody":
        # The options that pytest running as an ordinary user gives.
        monkeypatch.setattr(sandbox.os, "geteuid", lambda: 65534)
        for path in (top, visible, rw):
            os.chown(path, 65534, 65534)
        prefix = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--"]
    script = PRIVILEGED.format(visible=visible, rw=rw)
    box = contained(read_only=[visible], writable=[rw])
    try:
        done = process.run([*prefix, *box.wrap(script, cwd=rw)], cwd=top, timeout=60)
        left = sorted(str(p.relative_to(top)) for p in top.rglob("*"))
        locked = subprocess.run(["lsattr", str(rw / "locked")], capture_output=True, text=True)
    finally:
        clear_immutable(top)
        shutil.rmtree(top, ignore_errors=True)
        # What the command left on the host (another test's segment of the same size
        # made meanwhile would be taken for it).
        segment = sorted(_segments() - segments)
        for ident in segment:
            subprocess.run(["ipcrm", "-m", ident], check=False)
        name_now = socket.gethostname()
        if name_now != host_name:
            socket.sethostname(host_name)

    assert left == ["rw", "rw/locked", "visible"]
    assert "i" not in locked.stdout.split()[0]
    assert name_now == host_name
    # The segment was made, in the command's own IPC namespace, and went with it.
    assert "Shared memory id: " in done.stdout
    assert segment == []
    assert refused_paths(done.stdout, done.stderr) == [
        str(visible),
        f"{visible}/ROGUE",
        f"{rw}/disk",
        f"{rw}/locked",
        "/proc/sys/kernel/hostname",
    ]


def _segments() -> set[str]:
    """The ids of the host's System V shared-memory segments of 4096 bytes."""
    rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return {row.split()[1] for row in rows if row.split()[3] == "4096"}
