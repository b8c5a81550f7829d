"""The judge's side of a judge check (docs/judge.md): the fixed answer format, what the
judge is shown of the workspace's changes, its read-only copy, and the same-provider
disclosure."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.cases.loading import load_case_file
from pytest_evalcases.cases.registry import CheckContext
from pytest_evalcases.errors import RunError
from pytest_evalcases.results.calibration import CheckCalibration, Confusion
from pytest_evalcases.results.record import CheckRecord, JudgeRecord
from pytest_evalcases.run import judge
from pytest_evalcases.run.checks import default_registry


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


SCRIPTED = """\
id: scripted
defends: AGENTS.md
prompt: go
script:
  - text: done
checks:
  - id: asked
    type: judge
    question: Is it done?
  - id: played
    type: judge
    question: Is it done?
    script: ["VERDICT: no\\nREASON: first", "VERDICT: yes\\nREASON: then"]
"""


def _judging(tmp_path: Path, **kwargs: Any) -> tuple[judge.Judging, list[Any]]:
    evals = tmp_path / "evals"
    evals.mkdir(exist_ok=True)
    (evals / "scripted.yaml").write_text(SCRIPTED)
    (case,) = load_case_file(evals / "scripted.yaml", evals, default_registry())
    return judge.Judging(case, agent=None, agent_name="claude", **kwargs), list(case.checks)


def _ctx(tmp_path: Path) -> CheckContext:
    return CheckContext(workspace=tmp_path, fixture=None, output="done", tool_calls=None, env={})


def test_a_scripted_judge_answers_by_repetition_the_last_answer_repeating(tmp_path: Path) -> None:
    answers = []
    for repetition in (0, 1, 5):
        judging, (_, played) = _judging(tmp_path, setup=judge.JudgeSetup(), repetition=repetition)
        outcome = judging(played, _ctx(tmp_path))
        answers.append((outcome.passed, judging.judgements["played"].reason))

    assert answers == [(False, "first"), (True, "then"), (True, "then")]
    assert judging.judgements["played"].source == "scripted"
    assert judging.spent is None


def test_a_judge_check_of_a_scripted_case_without_a_script_is_an_error(tmp_path: Path) -> None:
    judging, (asked, _) = _judging(tmp_path, setup=judge.JudgeSetup())

    with pytest.raises(RunError, match="needs a `script:` of its own") as caught:
        judging(asked, _ctx(tmp_path))

    assert caught.value.kind == "judge"


def test_a_stored_judgement_is_kept_and_the_calibration_decides_whether_it_blocks(
    tmp_path: Path,
) -> None:
    stored = JudgeRecord(False, "stored reason", "codex", source="asked", blocking=True)
    calibrated = CheckCalibration("asked", Confusion(13, 2, 2, 13))
    setup = judge.JudgeSetup(calibration={"asked": calibrated})
    judging, (asked, _) = _judging(tmp_path, setup=setup, stored={"asked": stored})

    outcome = judging(asked, _ctx(tmp_path))

    assert not outcome.passed
    assert outcome.message == "the judge (codex) answered no: stored reason"
    kept = judging.judgements["asked"]
    assert (kept.source, kept.blocking, kept.labels) == ("stored", True, 30)
    assert kept.kappa == pytest.approx(0.7333, abs=1e-4)
    (record,) = judging.attach([CheckRecord("asked", "judge", None, False, "m")])
    assert record.judge == kept
    assert not judging.attach([CheckRecord("other", "t", None, True, "m")])[0].judge


def test_a_fifo_or_a_symlink_out_of_the_workspace_is_named_never_read(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    os.mkfifo(workspace / "pipe")
    (tmp_path / "secret.txt").write_text("the operator's secret\n")
    (workspace / "link").symlink_to(tmp_path / "secret.txt")

    shown = judge.changes(None, workspace)

    assert "binary or unreadable file changed: pipe" in shown
    assert f"new file: link\n--- a/link\n+++ b/link\n@@ -0,0 +1 @@\n+-> {tmp_path}" in shown
    assert "the operator's secret" not in shown
    with judge.read_only_copy(workspace) as copy:
        assert sorted(p.name for p in copy.iterdir()) == ["link"]
