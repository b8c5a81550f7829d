"""A run's stored answer, transcript and workspace changes (docs/replay.md, "What else is
stored"), and their restoring over a fresh fixture: real files, real archives."""

from __future__ import annotations

import gzip
import io
import json
import os
import stat
import tarfile
from pathlib import Path

import pytest

from pytest_evalcases.agents.base import AgentResult, Denial, HookRun, ToolCall, Usage
from pytest_evalcases.recording.format import RecordingError
from pytest_evalcases.redact import Redactor
from pytest_evalcases.run import artifacts
from pytest_evalcases.run.changes import CHANGES, Changes, CorruptRecording
from pytest_evalcases.run.workspace import populate, snapshot

SECRET = "hunter2-Zq7xK2pW9mR4-secret"
HEADER = {"run": "c", "case": "c", "variant": "", "agent": "command"}


def make_fixture(root: Path) -> Path:
    fixture = root / "fixture"
    (fixture / "src").mkdir(parents=True)
    (fixture / "src" / "keep.py").write_text("kept\n")
    (fixture / "src" / "edit.py").write_text("before\n")
    (fixture / "gone.txt").write_text("bye\n")
    (fixture / "olddir" / "deep").mkdir(parents=True)
    (fixture / "olddir" / "deep" / "x").write_text("x\n")
    (fixture / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    return fixture


def store(
    tmp_path: Path,
    workspace: Path,
    populated: dict[str, tuple[int, int, int, str]],
    *,
    result: AgentResult | None = None,
    error: tuple[str, str] | None = None,
    max_bytes: int = 10_000_000,
    env: dict[str, str] | None = None,
) -> Path:
    directory = tmp_path / "results.runs" / "c"
    artifacts.store(
        directory,
        workspace,
        populated,
        populated,
        HEADER,
        result if result is not None or error is not None else AgentResult(text="done"),
        error,
        tool_inputs=True,
        redact=Redactor(env or {}),
        max_bytes=max_bytes,
    )
    return directory


def run_dir_with_changes(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A workspace changed every way a run can: a file added, one changed, one deleted,
    a directory deleted, a binary file, an executable bit, an empty directory, a link."""
    fixture = make_fixture(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    populate(workspace, fixture)
    populated = snapshot(workspace)
    (workspace / "src" / "edit.py").write_text("after, longer\n")
    (workspace / "src" / "new.py").write_text("new\n")
    (workspace / "gone.txt").unlink()
    for path in sorted((workspace / "olddir").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (workspace / "olddir").rmdir()
    (workspace / "blob.bin").write_bytes(bytes(range(256)) * 4)
    os.chmod(workspace / "tool.sh", 0o755)
    (workspace / "empty").mkdir()
    (workspace / "link").symlink_to("src/new.py")
    directory = store(tmp_path, workspace, populated)
    return fixture, workspace, directory


def tree(root: Path) -> dict[str, tuple[str, bytes | str, int]]:
    """Every entry below ``root``: its kind, content or link target, permission bits."""
    found: dict[str, tuple[str, bytes | str, int]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        st = path.lstat()
        if path.is_symlink():
            found[rel] = ("link", os.readlink(path), 0)
        elif path.is_dir():
            found[rel] = ("dir", "", stat.S_IMODE(st.st_mode))
        else:
            found[rel] = ("file", path.read_bytes(), stat.S_IMODE(st.st_mode))
    return found


def test_the_changes_restored_over_a_fresh_fixture_give_the_workspace_back(
    tmp_path: Path,
) -> None:
    fixture, workspace, directory = run_dir_with_changes(tmp_path)

    stored = artifacts.load(directory)
    assert stored is not None
    assert stored.changes.deleted == ("gone.txt", "olddir")
    with tarfile.open(directory / CHANGES) as tar:
        names = sorted(tar.getnames())
    # Unchanged files and the directories that only had their contents change are left out.
    assert names == ["blob.bin", "empty", "link", "src/edit.py", "src/new.py", "tool.sh"]
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    populate(fresh, fixture)
    artifacts.restore(stored, fresh)
    assert tree(fresh) == tree(workspace)
    assert tree(fresh)["tool.sh"][2] & stat.S_IXUSR


def test_run_json_holds_the_answer_the_transcript_and_the_outcome(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    populate(workspace, fixture)
    result = AgentResult(
        text="the answer",
        tool_calls=(ToolCall("Bash", "shell", "ls"), ToolCall("Edit", "edit", '{"a":1}')),
        usage=Usage(input_tokens=10, output_tokens=5),
        cost_usd=0.25,
        models=("m1",),
        num_turns=3,
        exit_code=0,
    )

    directory = store(tmp_path, workspace, snapshot(workspace), result=result)

    data = json.loads((directory / artifacts.RUN_FILE).read_text())
    assert (data["format"], data["version"]) == (artifacts.FORMAT, artifacts.FORMAT_VERSION)
    assert data["answer"] == "the answer"
    assert data["tool_calls"] == [
        {"name": "Bash", "kind": "shell", "input": "ls"},
        {"name": "Edit", "kind": "edit", "input": '{"a":1}'},
    ]
    assert (data["cost_usd"], data["num_turns"], data["models"]) == (0.25, 3, ["m1"])
    assert data["error"] is None
    assert data["workspace_unchanged"] is True
    assert data["changes"]["archive"] is None
    assert not (directory / CHANGES).exists()
    stored = artifacts.load(directory)
    assert stored is not None
    assert stored.result is not None
    assert stored.result.tool_calls == result.tool_calls
    assert stored.result.usage == result.usage


@pytest.mark.parametrize(
    "denials",
    [
        (Denial("Bash", "shell", "git push", "hook"), Denial("Edit", "edit", "{}", None)),
        (),
        None,
    ],
    ids=["refused", "none-refused", "cannot-show"],
)
def test_refused_calls_are_stored_and_read_back_as_the_agent_showed_them(
    tmp_path: Path, denials: tuple[Denial, ...] | None
) -> None:
    """A regrade grades ``tool_blocked`` from them, and an agent that cannot show
    refusals stays one that cannot (``null``), never one that had none."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = AgentResult(text="done", denials=denials)

    directory = store(tmp_path, workspace, snapshot(workspace), result=result)

    stored = artifacts.load(directory)
    assert stored is not None
    assert stored.result is not None
    assert stored.result.denials == denials


@pytest.mark.parametrize(
    "hooks",
    [
        (
            HookRun("PreToolUse", "block-push.sh", "PreToolUse:Bash", True),
            HookRun("Stop", None, "Stop"),
        ),
        (),
        None,
    ],
    ids=["ran", "none-ran", "cannot-show"],
)
def test_the_hooks_that_ran_are_stored_and_read_back_as_the_agent_showed_them(
    tmp_path: Path, hooks: tuple[HookRun, ...] | None
) -> None:
    """A regrade grades ``hook_fired`` from them; an agent that cannot show hooks stays
    one that cannot (``null``), never one that ran none."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = AgentResult(text="done", hooks=hooks)

    directory = store(tmp_path, workspace, snapshot(workspace), result=result)

    stored = artifacts.load(directory)
    assert stored is not None
    assert stored.result is not None
    assert stored.result.hooks == hooks


def test_refused_calls_stored_as_text_by_an_earlier_release_read_back(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    directory = store(tmp_path, workspace, snapshot(workspace))
    data = json.loads((directory / artifacts.RUN_FILE).read_text())
    data["denials"] = ["Bash: git push origin HEAD"]
    (directory / artifacts.RUN_FILE).write_text(json.dumps(data))

    stored = artifacts.load(directory)

    assert stored is not None
    assert stored.result is not None
    assert stored.result.denials == (Denial("Bash", "other", "git push origin HEAD"),)


def test_an_error_is_stored_without_an_answer(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()

    directory = store(tmp_path, workspace, {}, error=("timeout", "agent timed out after 5s"))

    stored = artifacts.load(directory)
    assert stored is not None
    assert stored.result is None
    assert stored.error == ("timeout", "agent timed out after 5s")


def test_a_symlink_out_of_the_workspace_is_stored_as_a_link_never_followed(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE CONTENT\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    populated = snapshot(workspace)
    (workspace / "escape").symlink_to(outside)
    (workspace / "escape-dir").symlink_to(tmp_path)

    directory = store(tmp_path, workspace, populated)

    with tarfile.open(directory / CHANGES) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert {name: m.issym() for name, m in members.items()} == {
            "escape": True,
            "escape-dir": True,
        }
        assert members["escape"].linkname == str(outside)
    assert b"OUTSIDE CONTENT" not in gzip.decompress((directory / CHANGES).read_bytes())
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    stored = artifacts.load(directory)
    assert stored is not None
    artifacts.restore(stored, fresh)
    assert os.readlink(fresh / "escape") == str(outside)


def test_past_the_size_cap_files_are_listed_not_stored(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    populated = snapshot(workspace)
    (workspace / "a-small.txt").write_text("x" * 100)
    (workspace / "b-big.bin").write_bytes(b"y" * 5000)
    (workspace / "c-small.txt").write_text("z" * 100)

    directory = store(tmp_path, workspace, populated, max_bytes=1000)

    data = json.loads((directory / artifacts.RUN_FILE).read_text())["changes"]
    assert data["truncated"] is True
    assert data["omitted"] == [{"path": "b-big.bin", "bytes": 5000, "reason": "size"}]
    assert data["bytes"] == 200
    with tarfile.open(directory / CHANGES) as tar:
        assert sorted(tar.getnames()) == ["a-small.txt", "c-small.txt"]


def test_no_secret_of_the_environment_is_stored(tmp_path: Path) -> None:
    env = {"MY_API_TOKEN": SECRET}
    workspace = tmp_path / "ws"
    workspace.mkdir()
    populated = snapshot(workspace)
    (workspace / "leak.txt").write_text(f"the key is {SECRET}\n")
    (workspace / f"named-{SECRET}.txt").write_text("x")
    result = AgentResult(
        text=f"I found {SECRET}", tool_calls=(ToolCall("Bash", "shell", f"echo {SECRET}"),)
    )

    directory = store(tmp_path, workspace, populated, result=result, env=env)

    run_json = (directory / artifacts.RUN_FILE).read_text()
    assert SECRET not in run_json
    assert "[REDACTED]" in run_json
    with tarfile.open(directory / CHANGES) as tar:
        listing = [m.name for m in tar.getmembers()]
        contents = b"".join(
            f.read() for m in tar.getmembers() if (f := tar.extractfile(m)) is not None
        )
    assert SECRET.encode() not in contents
    assert listing == ["leak.txt"]
    changes = json.loads(run_json)["changes"]
    assert changes["redacted"] == ["leak.txt"]
    assert changes["omitted"] == [
        {"path": "named-[REDACTED].txt", "bytes": 1, "reason": "its name holds a secret"}
    ]


def test_a_path_whose_kind_changed_is_restored_as_its_new_kind(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    populate(workspace, fixture)
    populated = snapshot(workspace)
    (workspace / "gone.txt").unlink()
    (workspace / "gone.txt").mkdir()
    (workspace / "gone.txt" / "inside").write_text("in\n")
    (workspace / "src" / "keep.py").unlink()
    (workspace / "src" / "keep.py").symlink_to("edit.py")

    directory = store(tmp_path, workspace, populated)

    stored = artifacts.load(directory)
    assert stored is not None
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    populate(fresh, fixture)
    artifacts.restore(stored, fresh)
    assert tree(fresh) == tree(workspace)


@pytest.mark.parametrize("name", ["../evil", "/abs/evil", "link/through"])
def test_an_archive_entry_outside_the_workspace_is_refused(tmp_path: Path, name: str) -> None:
    directory = tmp_path / "run"
    directory.mkdir()
    with tarfile.open(directory / CHANGES, "w:gz") as tar:
        info = tarfile.TarInfo(name)
        info.size = 4
        tar.addfile(info, io.BytesIO(b"evil"))
    stored = artifacts.StoredRun(directory=directory, result=None, changes=Changes(archive=CHANGES))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "link").symlink_to(tmp_path)

    with pytest.raises(CorruptRecording, match=r"changes\.tar\.gz"):
        artifacts.restore(stored, workspace)

    assert not (tmp_path / "evil").exists()
    assert not (tmp_path / "through").exists()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{not json", "Expecting property name"),
        (b'{"format": "something else"}', "not a stored run"),
        (b'{"format": "pytest-evalcases run", "version": 99}', "version 99"),
    ],
)
def test_a_corrupt_run_json_is_an_error_naming_the_file(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    (tmp_path / artifacts.RUN_FILE).write_bytes(content)

    # The error of any unreadable part of a recording, the exchange's included.
    with pytest.raises(RecordingError) as raised:
        artifacts.load(tmp_path)

    assert isinstance(raised.value, CorruptRecording)
    assert str(tmp_path / artifacts.RUN_FILE) in str(raised.value)
    assert reason in str(raised.value)


def test_a_run_without_run_json_is_none(tmp_path: Path) -> None:
    assert artifacts.load(tmp_path) is None
