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
from tests.helpers.sandbox import Hostile, hostile_targets, requires_bwrap
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
