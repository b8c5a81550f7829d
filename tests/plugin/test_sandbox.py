"""The sandbox (docs/sandbox.md): a hostile agent, setup and command check try to write
to a home directory, the repository, another run's workspace and ``/tmp``, and to kill a
process outside. Under bubblewrap none of it lands and the runs get their verdicts; with
``eval_sandbox = none`` it lands, the summary says runs were not contained, and the run
that changed the repository is an ``escaped-workspace`` error."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.git import git
from tests.helpers.results import only_results
from tests.helpers.sandbox import (
    Hostile,
    clear_immutable,
    hostile_targets,
    requires_bwrap,
    requires_root,
)
from tests.helpers.suite import SuiteBuilder

#: The command agent: does the case's work in the workspace, then tries everything else.
HOSTILE_AGENT = """
import os, pathlib, signal, sys, time

here = pathlib.Path.cwd()
(here / "result.txt").write_text("done")
case = os.environ["EVALCASES_CASE_ID"]
shared = pathlib.Path(os.environ["HOSTILE_SHARED"])
if case == "neighbour":
    # Leaves its workspace's path where the hostile run will find it.
    # Whole or not at all (renamed into place): the hostile run may be reading.
    (shared / "neighbour-workspace.part").write_text(str(here))
    (shared / "neighbour-workspace.part").rename(shared / "neighbour-workspace")
    print("ok")
    sys.exit(0)


def attempt(label, action):
    try:
        action()
        print(f"{label}: done", file=sys.stderr)
    except OSError as exc:
        print(f"{label}: {exc}", file=sys.stderr)


# Under xdist the neighbour runs at the same time, on the other worker.
handed = shared / "neighbour-workspace"
for _ in range(600):
    if handed.exists():
        break
    time.sleep(0.05)
neighbour = pathlib.Path(handed.read_text())
home, repo = pathlib.Path(os.environ["HOSTILE_HOME"]), pathlib.Path(os.environ["HOSTILE_REPO"])
attempt("home", lambda: (home / "owned-by-eval").write_text("x"))
attempt("repo", lambda: (repo / "ROGUE.md").write_text("y"))
attempt("elsewhere", lambda: os.remove(os.environ["HOSTILE_KEEP"]))
attempt("neighbour", lambda: (neighbour / "planted.txt").write_text("z"))
attempt("kill", lambda: os.kill(int(os.environ["HOSTILE_PID"]), signal.SIGKILL))
print("ok")
"""

CASES = {
    # Runs first (file order): its workspace is the one the hostile run goes after.
    "evals/a-neighbour.yaml": """
        id: neighbour
        defends: AGENTS.md
        prompt: Work.
        checks:
          - {type: file_contains, path: result.txt, pattern: done}
        """,
    "evals/b-hostile.yaml": """
        id: hostile
        defends: AGENTS.md
        prompt: Work, and nothing else.
        setup: 'echo s > "$HOSTILE_REPO/SETUP-ROGUE.md" 2>/dev/null; echo setup > from-setup.txt'
        checks:
          - {type: file_contains, path: result.txt, pattern: done}
          - {type: file_contains, path: from-setup.txt, pattern: setup}
          - {type: output_matches, pattern: "^ok$"}
          - type: command_succeeds
            command: 'echo c > "$HOSTILE_REPO/CHECK-ROGUE.md" 2>/dev/null; true'
        """,
}


@pytest.fixture
def hostile(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> Iterator[Hostile]:
    """The suite in a git repository, the targets of the hostile agent, and the
    environment that names them."""
    with hostile_targets(pytester.path, tmp_path) as hostile:
        for name, value in {
            "HOSTILE_HOME": hostile.home,
            "HOSTILE_REPO": pytester.path,
            "HOSTILE_KEEP": hostile.keep,
            "HOSTILE_SHARED": hostile.shared,
            "HOSTILE_PID": hostile.sleeper.pid,
        }.items():
            monkeypatch.setenv(name, str(value))
        make_suite(HOSTILE_AGENT, CASES, fixtures={"AGENTS.md": "Work in the workspace only.\n"})
        ini = (pytester.path / "tox.ini").read_text()
        # Only the shared directory is writable: not the repository, as the suite
        # builder lets its test agents by default.
        lines = [line for line in ini.splitlines() if not line.startswith("eval_sandbox")]
        (pytester.path / "tox.ini").write_text(
            "\n".join(lines) + f"\neval_sandbox_rw = {hostile.shared}\n"
        )
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "suite"]):
            git(pytester.path, *args)
        yield hostile


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "-rA", *args)


@requires_bwrap
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_under_bubblewrap_nothing_lands_and_the_runs_get_their_verdicts(
    hostile: Hostile, pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    result = run(pytester, "--eval-sandbox=bwrap", *workers)

    assert hostile.landed() == []
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    assert "configuration from the working tree; sandbox bwrap\n" in out
    doc = only_results(pytester.path)
    assert doc["pins"]["sandbox"] == "bwrap"
    records = {r["id"]: r for r in doc["cases"]}
    # The two writes that failed with EROFS (a read-only path); the rest were not even
    # there to find: /tmp is private, and the process is in another PID namespace.
    assert records["hostile"]["refused_writes"] == [
        str(hostile.home / "owned-by-eval"),
        str(hostile.repo / "ROGUE.md"),
    ]
    assert records["neighbour"]["refused_writes"] == []
    result.stdout.fnmatch_lines(
        [
            "sandbox: 1 run(s) tried to write outside the workspace (refused):",
            f"  hostile: {hostile.home}/owned-by-eval, {hostile.repo}/ROGUE.md",
        ]
    )
    assert "runs were not contained" not in out


def test_without_a_sandbox_it_lands_and_the_repository_change_is_an_error(
    hostile: Hostile, pytester: pytest.Pytester
) -> None:
    result = run(pytester, "--eval-sandbox=none")

    assert hostile.landed() == [
        "CHECK-ROGUE.md",
        "ROGUE.md",
        "SETUP-ROGUE.md",
        "deleted",
        "home",
        "killed",
        "neighbour",
    ]
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*case hostile (normal) defends AGENTS.md: no verdict (escaped-workspace)",
            "the run changed the repository outside its workspace "
            f"({hostile.repo}): CHECK-ROGUE.md, ROGUE.md, SETUP-ROGUE.md; runs are not "
            "contained (eval_sandbox = none): see docs/sandbox.md",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "sandbox: none (eval_sandbox = none): runs were not contained, the agent could "
            "change files outside its workspace; eval_sandbox = auto contains them",
        ]
    )
    assert "configuration from the working tree; sandbox none\n" in result.stdout.str()
    records = {r["id"]: r for r in only_results(pytester.path)["cases"]}
    assert records["hostile"]["error_kind"] == "escaped-workspace"
    assert records["neighbour"]["outcome"] == "passed"


def test_an_escaped_run_is_not_retried_into_a_pass(
    hostile: Hostile, pytester: pytest.Pytester
) -> None:
    result = run(pytester, "--eval-sandbox=none", "--eval-retry-errors=2")

    result.assert_outcomes(passed=1, errors=1)
    record = {r["id"]: r for r in only_results(pytester.path)["cases"]}["hostile"]
    assert (record["error_kind"], record["attempts"]) == ("escaped-workspace", 1)


@pytest.fixture
def failing_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``bwrap`` first on PATH that fails as on a kernel without user namespaces."""
    bin_dir = tmp_path / "no-userns-bin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return fake


def test_auto_falls_back_and_says_so_once(
    hostile: Hostile, pytester: pytest.Pytester, failing_bwrap: Path
) -> None:
    result = run(pytester)

    out = result.stdout.str()
    assert "configuration from the working tree; sandbox none\n" in out
    assert out.count("runs were not contained") == 1
    result.stdout.fnmatch_lines(
        [
            f"sandbox: none (a trial run of {failing_bwrap} failed: bwrap: No permissions to "
            "create new namespace): runs were not contained*apt-get install bubblewrap*"
        ]
    )
    # The working tree is still watched.
    result.assert_outcomes(passed=1, errors=1)


def test_bwrap_where_it_cannot_run_stops_the_session_before_any_case(
    hostile: Hostile, pytester: pytest.Pytester, failing_bwrap: Path
) -> None:
    result = run(pytester, "--eval-sandbox=bwrap")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*eval_sandbox = bwrap, but a trial run of * failed: bwrap: No permissions*"]
    )
    # No case ran: not even the neighbour, which leaves its workspace's path.
    assert not (hostile.shared / "neighbour-workspace").exists()


def test_bad_sandbox_values_are_usage_errors(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\neval_sandbox_network = off\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini option eval_sandbox_network expects shared or none, got 'off'*"]
    )
    pytester.makeini("[pytest]\neval_sandbox = docker\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini option eval_sandbox expects auto or bwrap or none*"])


#: Connects to the test's server: exit status 0 when it could.
REACH = """
import os, socket, sys
try:
    socket.create_connection(("127.0.0.1", int(os.environ["NET_PORT"])), timeout=5).close()
except OSError as exc:
    print(f"unreachable: {exc}")
    sys.exit(1)
print("reached")
"""


@pytest.fixture
def listening(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """A TCP port on the loopback interface that accepts connections."""
    server = socket.create_server(("127.0.0.1", 0))
    server.listen(16)
    port = server.getsockname()[1]
    monkeypatch.setenv("NET_PORT", str(port))
    try:
        yield port
    finally:
        server.close()


@requires_bwrap
@pytest.mark.parametrize(
    ("network", "check", "setup"),
    [("shared", "command_succeeds", "reached"), ("none", "command_fails", "unreachable")],
)
def test_the_agent_always_has_the_network_and_checks_only_when_shared(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    listening: int,
    network: str,
    check: str,
    setup: str,
) -> None:
    reach = f"{sys.executable} {pytester.path}/reach.py"
    make_suite(
        # The agent is the same script, and writes what it found.
        REACH,
        {
            "net": f"""
                id: net
                defends: AGENTS.md
                prompt: Reach the server.
                setup: '{reach} > setup-net.txt || true'
                checks:
                  - {{type: output_matches, pattern: "^reached$"}}
                  - {{type: file_contains, path: setup-net.txt, pattern: "^{setup}"}}
                  - {{type: {check}, command: "{reach}"}}
                """
        },
        fixtures={"reach.py": REACH},
        ini=f"eval_sandbox = bwrap\neval_sandbox_network = {network}\n",
    )

    result = run(pytester)

    result.assert_outcomes(passed=1)
    expected = "bwrap" if network == "shared" else "bwrap (no network for setups and checks)"
    assert only_results(pytester.path)["pins"]["sandbox"] == expected


def test_a_missing_path_to_add_stops_the_session_before_any_case(
    hostile: Hostile, pytester: pytest.Pytester
) -> None:
    ini = pytester.path / "tox.ini"
    ini.write_text(ini.read_text() + "eval_sandbox_ro = does-not-exist\n")

    # A run that asks for the eval cases (a plain `pytest` would skip them and say why).
    result = run(pytester, "evals")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini option eval_sandbox_ro: no such path: */does-not-exist*"])
    assert not (hostile.shared / "neighbour-workspace").exists()


#: An agent that uses what root could do in a sandbox that left it its capabilities:
#: remount the repository writable and write to it, make a device node and set a file
#: immutable where it may write, change the host's name (by the system call and through
#: /proc/sys) and leave a shared-memory segment behind. It says what each attempt did as
#: the tools would, naming the file (docs/sandbox.md, "What a run can see and change").
PRIVILEGED_AGENT = """
import ctypes, fcntl, os, pathlib, socket, stat, sys

here = pathlib.Path.cwd()
(here / "result.txt").write_text("done")
repo, shared = pathlib.Path(os.environ["HOSTILE_REPO"]), pathlib.Path(os.environ["HOSTILE_SHARED"])
libc = ctypes.CDLL(None, use_errno=True)


def attempt(label, path, action):
    try:
        action()
        print(f"{label}: done", file=sys.stderr)
    except OSError as exc:
        named = OSError(exc.errno, exc.strerror, *([str(path)] if path else []))
        print(f"{label}: {named}", file=sys.stderr)


def called(result):
    if result < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def remount():
    # mount -o remount,rw,bind REPO: MS_REMOUNT | MS_BIND, without MS_RDONLY.
    called(libc.mount(None, os.fsencode(repo), None, 32 | 4096, None))


def immutable():
    locked = shared / "locked.txt"
    locked.write_text("l")
    fd = os.open(locked, os.O_RDONLY)
    # chattr +i: FS_IOC_SETFLAGS with FS_IMMUTABLE_FL.
    fcntl.ioctl(fd, 0x40086602, (0x10).to_bytes(8, "little"))


def shared_memory():
    # ipcmk -M 4096: a System V segment, which would outlive the run.
    called(libc.shmget(int(os.environ["HOSTILE_SHM_KEY"]), 4096, 0o1000 | 0o600))


attempt("remount", repo, remount)
attempt("write", repo / "ROGUE2.md", lambda: (repo / "ROGUE2.md").write_text("y"))
# The device of /dev/null: what matters is whether a device node can be made at all.
device = stat.S_IFCHR | 0o600, os.makedev(1, 3)
attempt("mknod", shared / "disk", lambda: os.mknod(shared / "disk", *device))
attempt("chattr", shared / "locked.txt", immutable)
attempt("sethostname", None, lambda: socket.sethostname(os.environ["HOSTILE_NAME"]))
name = pathlib.Path("/proc/sys/kernel/hostname")
attempt("hostname", name, lambda: name.write_text(os.environ["HOSTILE_NAME"]))
attempt("shm", None, shared_memory)
print("ok")
"""

#: A setup and a command check that pass only without capabilities, in IPC, UTS and
#: cgroup namespaces other than pytest's.
WITHOUT_PRIVILEGES = (
    'grep -Eq "^CapEff:[[:space:]]+0+$" /proc/self/status && '
    "for ns in ipc uts; do "
    '[ "$(readlink /proc/self/ns/$ns)" != "$(printenv HOST_NS_$ns)" ] || exit 1; done'
)


def _segment(key: int) -> bool:
    """Whether the host has a System V shared-memory segment of ``key``."""
    rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return any(int(row.split()[0]) == key for row in rows)


def _remove_segment(key: int) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    ident = libc.shmget(key, 0, 0)
    if ident >= 0:
        libc.shmctl(ident, 0, None)  # IPC_RMID


def _immutable(path: Path) -> bool:
    import array
    import fcntl

    fd = os.open(path, os.O_RDONLY)
    try:
        flags = array.array("l", [0])
        fcntl.ioctl(fd, 0x80086601, flags, True)  # FS_IOC_GETFLAGS
        return bool(flags[0] & 0x10)
    finally:
        os.close(fd)


@requires_bwrap
@requires_root
@pytest.mark.parametrize("mode", ["auto", "bwrap"])
def test_as_root_the_agent_has_no_privilege_and_each_attempt_is_a_refused_write(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    mode: str,
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    key = int.from_bytes(os.urandom(3), "little") + 1
    host_name = socket.gethostname()
    env = {
        "HOSTILE_REPO": pytester.path,
        "HOSTILE_SHARED": shared,
        "HOSTILE_SHM_KEY": key,
        "HOSTILE_NAME": "owned-by-eval",
        **{f"HOST_NS_{ns}": os.readlink(f"/proc/self/ns/{ns}") for ns in ("ipc", "uts")},
    }
    for name, value in env.items():
        monkeypatch.setenv(name, str(value))
    make_suite(
        PRIVILEGED_AGENT,
        {
            "evals/root.yaml": f"""
                id: root
                defends: AGENTS.md
                prompt: Work, and nothing else.
                setup: '({WITHOUT_PRIVILEGES}) && echo unprivileged > setup.txt; true'
                checks:
                  - {{type: file_contains, path: result.txt, pattern: done}}
                  - {{type: file_contains, path: setup.txt, pattern: unprivileged}}
                  - {{type: output_matches, pattern: "^ok$"}}
                  - {{type: command_succeeds, command: '{WITHOUT_PRIVILEGES}'}}
                """
        },
        fixtures={"AGENTS.md": "Work in the workspace only.\n"},
        ini=f"eval_sandbox = {mode}\neval_sandbox_rw = {shared}\n",
    )
    git(pytester.path, "init", "-q")
    try:
        result = run(pytester)
    finally:
        clear_immutable(shared)
        landed_segment = _segment(key)
        _remove_segment(key)
        name_now = socket.gethostname()
        if name_now != host_name:
            socket.sethostname(host_name)

    assert not (pytester.path / "ROGUE2.md").exists()
    assert not (shared / "disk").exists()
    assert not _immutable(shared / "locked.txt")
    assert name_now == host_name
    # The segment went with the sandbox's IPC namespace.
    assert not landed_segment
    result.assert_outcomes(passed=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["refused_writes"] == [
        str(pytester.path),
        str(pytester.path / "ROGUE2.md"),
        str(shared / "disk"),
        str(shared / "locked.txt"),
        "/proc/sys/kernel/hostname",
    ]
    result.stdout.fnmatch_lines(
        ["sandbox: 1 run(s) tried to write outside the workspace (refused):", "  root: *"]
    )


#: Without a sandbox, changes that ``git status`` does not show: a commit, a file hidden
#: by the excludes, a hook, a file-system monitor that git would run (and that writes
#: the marker if it ever runs), a branch; by the case.
GIT_AGENT = """
import os, pathlib, subprocess

repo = pathlib.Path(os.environ["HOSTILE_REPO"])
case = os.environ["EVALCASES_CASE_ID"]


def git(*args):
    # Its own git commands do not run the monitor: only the plugin's could.
    config = ["-c", "user.name=a", "-c", "user.email=a@example.com", "-c", "core.fsmonitor="]
    subprocess.run(["git", *config, "-C", repo, *args], check=True)


if case == "commit":
    (repo / "AGENTS.md").write_text("Anything goes.\\\\n")
    git("commit", "-q", "-am", "relax")
elif case == "exclude":
    with (repo / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write("ROGUE.md\\\\n")
    (repo / "ROGUE.md").write_text("hidden")
elif case == "hook":
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\\\\ntouch $HOME/owned\\\\n")
    hook.chmod(0o755)
elif case == "fsmonitor":
    git("config", "core.fsmonitor", f"touch {os.environ['HOSTILE_MARKER']}; false")
elif case == "branch":
    git("branch", "evil")
elif case == "broken":
    with (repo / ".git" / "config").open("a") as config:
        config.write("[core\\n")
print("ok")
"""

GIT_CASES = {
    f"evals/{n}-{case}.yaml": f"""
        id: {case}
        defends: AGENTS.md
        prompt: Work.
        checks: [{{type: output_matches, pattern: "^ok$"}}]
        """
    for n, case in enumerate(
        ["fsmonitor", "commit", "exclude", "hook", "branch", "clean", "broken", "after"]
    )
}


@pytest.mark.slow
def test_without_a_sandbox_what_git_status_does_not_show_is_an_escape_and_git_runs_nothing(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = pytester.path.parent / f"{pytester.path.name}-fsmonitor-ran"
    monkeypatch.setenv("HOSTILE_REPO", str(pytester.path))
    monkeypatch.setenv("HOSTILE_MARKER", str(marker))
    make_suite(
        GIT_AGENT,
        GIT_CASES,
        fixtures={"AGENTS.md": "Work in the workspace only.\n"},
        ini="eval_sandbox = none\n",
    )
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "suite"]):
        git(pytester.path, *args)
    main = git(pytester.path, "symbolic-ref", "HEAD").strip()

    result = run(pytester)

    # The file-system monitor the first run set up never ran: not after that run, nor
    # before and after the runs that followed.
    assert not marker.exists()
    result.assert_outcomes(passed=1, errors=7)
    records = {r["id"]: r for r in only_results(pytester.path)["cases"]}
    assert {
        i: r["error_kind"] for i, r in records.items() if r["outcome"] == "error"
    } == dict.fromkeys(
        ["fsmonitor", "commit", "exclude", "hook", "branch", "broken", "after"],
        "escaped-workspace",
    )
    repo = pytester.path
    result.stdout.fnmatch_lines(
        [
            f"the run changed the repository outside its workspace ({repo}): .git/config; *",
            f"the run changed the repository outside its workspace ({repo}): AGENTS.md, "
            f".git/index, .git/{main}; *",
            f"the run changed the repository outside its workspace ({repo}): .git/info/exclude; *",
            f"the run changed the repository outside its workspace ({repo}): "
            ".git/hooks/pre-commit; *",
            f"the run changed the repository outside its workspace ({repo}): "
            ".git/refs/heads/evil; *",
            # A configuration git cannot read: the run that wrote it, and the next, which
            # could not be watched.
            f"the run changed the repository outside its workspace ({repo}): git cannot "
            "read it: fatal: bad config line *",
            f"git cannot read the repository ({repo}) any more, so what the run would "
            "change there cannot be seen *",
        ],
        consecutive=False,
    )
    assert records["clean"]["outcome"] == "passed"
