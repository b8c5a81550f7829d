"""run/workspace.py: where workspaces are made, how they are filled, ``setup``."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pytest_evalcases.errors import SetupError
from pytest_evalcases.run.workspace import (
    Overlay,
    WorkspaceDirs,
    inherited_configuration,
    populate,
    run_setup,
)


def test_workspaces_come_from_pytests_mktemp_when_given(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    labels: list[str] = []

    def mktemp(label: str) -> Path:
        labels.append(label)
        return tmp_path_factory.mktemp(label, numbered=True)

    dirs = WorkspaceDirs(mktemp, temproot=tmp_path)
    made = [dirs.new("fails"), dirs.new("fails"), dirs.new("case-id[v1-r0]")]

    base = tmp_path_factory.getbasetemp()
    assert made == [base / "fails0", base / "fails1", base / "case-id-v1-r0-0"]
    assert labels == ["fails", "fails", "case-id-v1-r0-"]
    assert all(p.is_dir() and not any(p.iterdir()) for p in made)
    # pytest's directory served: no session directory of our own was made.
    assert os.listdir(tmp_path) == []


def test_a_workspace_inside_a_git_repository_falls_back_to_the_session_directory(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    temproot = tmp_path / "tmp"
    temproot.mkdir()

    def mktemp(label: str) -> Path:
        path = repo / "tmp" / f"{label}0"
        path.mkdir(parents=True)
        return path

    made = WorkspaceDirs(mktemp, temproot=temproot).new("x")

    assert made.parent.parent.parent == temproot.resolve()
    assert made.parent.name == "session-0"
    assert made.name == "x0"
    assert inherited_configuration(made) is None
    # The directory made inside the repository is not left behind.
    assert not (repo / "tmp" / "x0").exists()


def test_a_recent_session_of_another_process_is_never_pruned(tmp_path: Path) -> None:
    # Five xdist workers start at once, each with a session of its own.
    workers = [WorkspaceDirs(temproot=tmp_path, keep=3) for _ in range(5)]
    made = [worker.new("case") for worker in workers]

    assert all(path.is_dir() for path in made)


def test_session_directories_are_numbered_and_the_newest_kept(tmp_path: Path) -> None:
    sessions = []
    for _ in range(5):
        dirs = WorkspaceDirs(temproot=tmp_path, keep=3)
        dirs.new("case")
        sessions.append(dirs.root)
        # Idle for two hours: no longer in use by a process of its own.
        hours_ago = time.time() - 2 * 3600
        os.utime(dirs.root, (hours_ago, hours_ago))

    parent = sessions[0].parent
    assert parent.name.startswith("evalcases-of-")
    assert [p.name for p in sessions] == [f"session-{n}" for n in range(5)]
    assert sorted(os.listdir(parent)) == ["session-2", "session-3", "session-4"]
    assert os.listdir(sessions[-1]) == ["case0"]


def test_no_directory_is_made_before_the_first_workspace(tmp_path: Path) -> None:
    WorkspaceDirs(temproot=tmp_path)

    assert os.listdir(tmp_path) == []


def test_inherited_configuration_names_a_repository_or_an_instruction_file_above(
    tmp_path: Path,
) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "repo" / "a" / "b").mkdir(parents=True)
    (tmp_path / "project" / ".claude").mkdir(parents=True)
    (tmp_path / "project" / "tmp" / "w").mkdir(parents=True)
    (tmp_path / "other" / "w").mkdir(parents=True)

    assert inherited_configuration(tmp_path / "repo" / "a" / "b") == (
        f"it is inside the git repository {tmp_path / 'repo'}"
    )
    assert inherited_configuration(tmp_path / "other" / "w") is None
    for name in ("CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md", "GEMINI.md"):
        (tmp_path / "project" / name).write_text("rules")
        assert inherited_configuration(tmp_path / "project" / "tmp" / "w") == (
            f"agents would also read {tmp_path / 'project' / name}"
        )
        (tmp_path / "project" / name).unlink()
    assert inherited_configuration(tmp_path / "project" / "tmp" / "w") is None
    # The workspace's own files are the case's: only the directories above count.
    (tmp_path / "other" / "w" / "CLAUDE.md").write_text("the case's own")
    assert inherited_configuration(tmp_path / "other" / "w") is None


def test_an_empty_git_directory_is_no_repository_and_a_git_file_is_one(tmp_path: Path) -> None:
    """Codex's sandbox (workspace-write) mounts over ``.git`` in each directory the agent
    may write, ``/tmp`` among them, and makes an empty one where there was none: while a
    Codex case runs, every other run of the machine would otherwise find itself in the
    git repository ``/tmp``."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "w").mkdir()
    assert inherited_configuration(tmp_path / "w") is None
    (tmp_path / ".git").rmdir()
    (tmp_path / ".git").write_text("gitdir: /elsewhere/.git/worktrees/w\n")
    assert inherited_configuration(tmp_path / "w") == (
        f"it is inside the git repository {tmp_path}"
    )


def test_a_workspace_below_an_instruction_file_falls_back_to_the_session_directory(
    tmp_path: Path,
) -> None:
    """A --basetemp inside a project that is no git repository but has a CLAUDE.md:
    Claude Code would read it in every run, whatever configuration the case tests."""
    project = tmp_path / "project"
    (project / "basetemp").mkdir(parents=True)
    (project / "CLAUDE.md").write_text("the project's own rules")
    temproot = tmp_path / "tmp"
    temproot.mkdir()

    def mktemp(label: str) -> Path:
        path = project / "basetemp" / f"{label}0"
        path.mkdir()
        return path

    made = WorkspaceDirs(mktemp, temproot=temproot).new("x")

    assert made.is_relative_to(temproot.resolve())
    assert not (project / "basetemp" / "x0").exists()


def test_no_workspace_where_even_the_session_directory_inherits_configuration(
    tmp_path: Path,
) -> None:
    (tmp_path / "AGENTS.md").write_text("somebody else's rules")
    temproot = tmp_path / "tmp"
    temproot.mkdir()

    with pytest.raises(SetupError, match=r"agents would also read .*AGENTS\.md; set TMPDIR"):
        WorkspaceDirs(temproot=temproot).new("x")

    # Nothing is left for the agent to run in.
    assert not list(temproot.glob("evalcases-of-*/session-*/x*"))


def test_populate_copies_the_fixture_then_lays_the_overlays(tmp_path: Path) -> None:
    fixture = tmp_path / "fixture"
    (fixture / "src").mkdir(parents=True)
    (fixture / "src" / "app.py").write_text("app")
    (fixture / "AGENTS.md").write_text("fixture's")
    config = tmp_path / "config"
    config.mkdir()
    (config / "AGENTS.md").write_text("variant's")
    single = tmp_path / "rule.md"
    single.write_text("rule")
    workspace = tmp_path / "ws"
    workspace.mkdir()

    populate(workspace, fixture, [Overlay(config), Overlay(single, "rules/rule.md")])

    assert (workspace / "src" / "app.py").read_text() == "app"
    assert (workspace / "AGENTS.md").read_text() == "variant's"
    assert (workspace / "rules" / "rule.md").read_text() == "rule"
    assert (fixture / "AGENTS.md").read_text() == "fixture's"


def test_populate_names_the_workspace_when_it_cannot_copy(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()

    with pytest.raises(SetupError) as caught:
        populate(workspace, None, [Overlay(tmp_path / "missing.md", "x.md")])

    assert str(caught.value).startswith(f"could not prepare the workspace {workspace}: ")


def test_setup_runs_in_the_workspace_with_the_env(tmp_path: Path) -> None:
    run_setup(tmp_path, 'echo "$GREETING" > out.txt', {"GREETING": "hi", "PATH": "/usr/bin:/bin"})

    assert (tmp_path / "out.txt").read_text() == "hi\n"


def test_setup_timeout_is_a_setup_error(tmp_path: Path) -> None:
    with pytest.raises(SetupError) as caught:
        run_setup(tmp_path, "sleep 5", {"PATH": "/usr/bin:/bin"}, timeout=0.2)

    assert str(caught.value) == "setup timed out: `sleep 5`"
