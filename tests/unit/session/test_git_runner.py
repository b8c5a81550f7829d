"""git.py: the one git runner, as --eval-changed and --eval-config git:REF use it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases import git
from tests.helpers.git import make_repo


def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"a.bin": bytes(range(256))})


def test_run_returns_the_result_whatever_the_exit_status(tmp_path: Path) -> None:
    root = repo(tmp_path)

    listed = git.run(root, ["ls-files"])
    missing = git.run(root, ["rev-parse", "--verify", "--quiet", "nope"])

    assert (listed.returncode, listed.stdout) == (0, "a.bin\n")
    assert missing.returncode == 1
    assert missing.stdout == ""


def test_run_passes_stdin(tmp_path: Path) -> None:
    root = repo(tmp_path)

    sha = git.run(root, ["rev-parse", "HEAD"]).stdout.strip()

    done = git.run(root, ["cat-file", "--batch-check"], stdin=f"{sha}\n")

    assert done.stdout.startswith(f"{sha} commit ")


def test_run_to_file_keeps_binary_content(tmp_path: Path) -> None:
    root = repo(tmp_path)
    sha = git.run(root, ["rev-parse", "HEAD:a.bin"]).stdout.strip()
    out = tmp_path / "blob"

    done = git.run_to_file(root, ["cat-file", "--batch"], out, stdin=f"{sha}\n")

    assert done.returncode == 0
    assert out.read_bytes() == f"{sha} blob 256\n".encode() + bytes(range(256)) + b"\n"


def test_a_missing_git_is_git_not_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))

    with pytest.raises(git.GitNotFound):
        git.run(tmp_path, ["status"])
    with pytest.raises(git.GitNotFound):
        git.run_to_file(tmp_path, ["status"], tmp_path / "out")


def test_a_git_that_runs_too_long_is_git_timed_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text("#!/bin/sh\nsleep 5\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")

    with pytest.raises(git.GitTimedOut) as caught:
        git.run(tmp_path, ["status"], timeout=0.2)

    assert str(caught.value) == "git status"
