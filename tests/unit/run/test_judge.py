"""The judge's side of a judge check (docs/judge.md): the fixed answer format, what the
judge is shown of the workspace's changes, its read-only copy, and the same-provider
disclosure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_evalcases.errors import RunError
from pytest_evalcases.run import judge


@pytest.mark.parametrize(
    ("text", "yes", "reason"),
    [
        ("VERDICT: yes\nREASON: it names the file", True, "it names the file"),
        ("\n  VERDICT: no\nREASON:  nothing of the kind  \n\n", False, "nothing of the kind"),
    ],
)
def test_an_answer_in_the_fixed_format_is_read(text: str, yes: bool, reason: str) -> None:
    assert judge.parse(text) == (yes, reason)


@pytest.mark.parametrize(
    "text",
    [
        "yes",
        "VERDICT: yes",
        "VERDICT: Yes\nREASON: capitalised",
        "VERDICT: maybe\nREASON: unsure",
        "VERDICT: yes\nREASON:",
        "VERDICT: yes\nREASON: one\nand a second line",
        "Sure! VERDICT: yes\nREASON: chatty",
        "",
    ],
)
def test_anything_else_is_an_error_of_kind_judge_never_a_pass(text: str) -> None:
    with pytest.raises(RunError, match="not in the fixed format") as caught:
        judge.parse(text)

    assert caught.value.kind == "judge"


def test_the_judge_sees_added_changed_and_deleted_files_against_the_fixture(
    tmp_path: Path,
) -> None:
    fixture, workspace = tmp_path / "fixture", tmp_path / "workspace"
    for root in (fixture, workspace):
        (root / ".git").mkdir(parents=True)
        (root / "same.txt").write_text("unchanged\n")
    (fixture / "edited.txt").write_text("one\ntwo\n")
    (workspace / "edited.txt").write_text("one\nthree\n")
    (fixture / "gone.txt").write_text("bye\n")
    (workspace / "new.txt").write_text("hello\n")
    (workspace / "blob.bin").write_bytes(b"\0\1\2")
    (workspace / ".git" / "index").write_text("git's own")

    shown = judge.changes(fixture, workspace)

    assert "same.txt" not in shown
    assert ".git" not in shown
    assert "changed: edited.txt\n--- a/edited.txt\n+++ b/edited.txt" in shown
    assert "-two\n+three" in shown
    assert "deleted: gone.txt\n--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +0,0 @@\n-bye" in shown
    assert "new file: new.txt\n--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello" in shown
    assert "binary or unreadable file changed: blob.bin" in shown
    cut = judge.changes(fixture, workspace, limit=40)
    assert cut.endswith("… (the rest of the changes is cut)")
    assert len(cut) < 100


def test_the_prompt_holds_the_question_the_task_the_answer_and_the_changes() -> None:
    asked = judge.prompt("Is it so?", "Do the thing", "", "")

    assert "QUESTION: Is it so?" in asked
    assert "THE TASK THE AGENT WAS GIVEN:\nDo the thing" in asked
    assert "THE AGENT'S FINAL ANSWER:\n(empty)" in asked
    assert "FIXTURE IT STARTED FROM:\n(no changes)" in asked
    assert asked.endswith("VERDICT: yes|no\nREASON: <one line>\n")


def test_the_judge_works_on_a_read_only_copy_that_goes_afterwards(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "file.txt").write_text("x")

    with judge.read_only_copy(tmp_path) as copy:
        assert (copy / "sub" / "file.txt").read_text() == "x"
        assert not os.stat(copy / "sub" / "file.txt").st_mode & 0o222
        assert not os.stat(copy / "sub").st_mode & 0o222

    assert not copy.exists()
    assert os.stat(tmp_path / "sub" / "file.txt").st_mode & 0o200


@pytest.mark.parametrize(
    ("judged_by", "agent", "same"),
    [
        ("claude", "claude", True),
        ("codex", "claude", False),
        ("command", "command", True),
        ("script", "claude", False),
        ("claude", None, False),
    ],
)
def test_a_judge_of_the_agents_provider_is_disclosed(
    judged_by: str, agent: str | None, same: bool
) -> None:
    assert judge.same_provider(judged_by, agent) is same
