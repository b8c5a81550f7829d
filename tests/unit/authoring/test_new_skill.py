"""``evalcases new --skill NAME``: a pair of starter cases, should fire and should not
(docs/skills.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases import cli
from pytest_evalcases.authoring import lint
from pytest_evalcases.cases.loading import load_case_file
from pytest_evalcases.run.checks import default_registry


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_the_pair_validates_and_checks_the_skill_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    monkeypatch.chdir(tmp_path)

    status = cli.main(["new", "--skill", "todo-triage", "--format", fmt])

    assert status == 0
    out, err = capsys.readouterr()
    fires, quiet = (Path(f"evals/todo-triage-{s}.{fmt}") for s in ("fires", "stays-quiet"))
    assert out.splitlines() == [fires.as_posix(), quiet.as_posix()]
    assert f"pytest {fires.as_posix()} {quiet.as_posix()} --eval-repeat 5" in err
    registry = default_registry()
    cases = [
        case
        for path in (fires, quiet)
        for case in load_case_file(tmp_path / path, tmp_path / "evals", registry)
    ]
    assert [(c.id, c.severity, c.bare) for c in cases] == [
        ("todo-triage-fires", "normal", False),
        ("todo-triage-stays-quiet", "advisory", False),
    ]
    checks = [(c.checks[0].type, c.checks[0].skill) for c in cases]  # type: ignore[attr-defined]
    assert checks == [("skill_used", "todo-triage"), ("skill_not_used", "todo-triage")]
    assert {c.defends for c in cases} == {".claude/skills/todo-triage"}


def test_an_id_is_the_prefix_and_nothing_is_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "triage-stays-quiet.yaml").write_text("mine\n")

    status = cli.main(["new", "triage", "--skill", "todo-triage"])

    assert status == 2
    assert "triage-stays-quiet.yaml already exists" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "evals").iterdir()) == ["triage-stays-quiet.yaml"]
    assert cli.main(["new", "--skill", "Todo Triage"]) == 2
    assert "skill name 'Todo Triage' is not kebab-case" in capsys.readouterr().err
    assert cli.main(["new"]) == 2
    assert "give a case ID, or --skill NAME" in capsys.readouterr().err


def test_lint_finds_nothing_wrong_with_the_should_not_fire_starter_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``skill_not_used`` is a negative check: the starter case that ``new --skill``
    writes was warned of having "only positive checks" beside a skill that says never."""
    monkeypatch.chdir(tmp_path)
    skill = tmp_path / ".claude" / "skills" / "db-migration" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: db-migration\ndescription: Use when writing a database migration.\n---\n"
        "Never edit a migration that was applied; write a new one.\n"
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    assert cli.main(["new", "--skill", "db-migration"]) == 0
    quiet = tmp_path / "evals" / "db-migration-stays-quiet.yaml"

    findings = lint.lint_files(lint.discover([quiet]), tmp_path)

    assert findings == []
    assert "skill_not_used" in lint.NEGATIVE_CHECKS
