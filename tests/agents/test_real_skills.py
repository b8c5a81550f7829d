"""The skill checks on the real ``claude`` CLI (docs/skills.md): Claude Code discovers
a skill in the case's fixture, the scripted Messages API answers with a ``Skill`` tool
call naming it, and the checks read that call from the CLI's own stream-json output.
Codex and Gemini CLI likewise: what they discover, and what their output shows of a
load (docs/skills.md, "What counts as using a skill")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents.test_real_clis import (  # noqa: F401 (fixtures)
    CLAUDE_INI,
    GEMINI_INI,
    claude_env,
    codex_ini,
    gemini_server,
)
from tests.helpers.model_server import ModelServer, Reply, Request
from tests.helpers.results import only_results

pytestmark = pytest.mark.real_cli

SKILL = """---
name: todo-triage
description: Sorts TODO comments by urgency. MARK-skill-description
---
List every TODO with its file and line, most urgent first.
"""

CASE = """
id: triage
defends: .claude/skills/todo-triage
cwd: fixture
bare: false
prompt: Which TODOs are there?
checks:
  - {type: skill_used, skill: todo-triage}
  - {type: skill_not_used, skill: release-notes}
  - {id: wrong, type: skill_used, skill: release-notes}
"""


def loads_the_skill(request: Request) -> Reply:
    if request.tool_results == 0:
        return Reply(tool="Skill", tool_input={"skill": "todo-triage"})
    return Reply(text="triaged: " + " ".join(request.markers))


def test_a_scripted_skill_call_of_the_real_claude_passes_skill_used(
    pytester: pytest.Pytester,
    claude_env: ModelServer,  # noqa: F811
) -> None:
    claude_env.script = loads_the_skill
    pytester.makefile(".ini", tox=CLAUDE_INI)
    skill = pytester.path / "evals" / "fixture" / ".claude" / "skills" / "todo-triage"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    (pytester.path / "evals" / "triage.yaml").write_text(CASE)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(failed=1)
    record = only_results(pytester.path)["cases"][0]
    checks = {c["id"]: c for c in record["checks"]}
    assert checks["skill_used-0"]["passed"], checks["skill_used-0"]["message"]
    assert checks["skill_used-0"]["message"] == "skill 'todo-triage' loaded 1 time(s)"
    assert checks["skill_not_used-1"]["passed"]
    assert checks["wrong"]["message"] == (
        "skill 'release-notes' not loaded (skills loaded: todo-triage)"
    )
    # The CLI discovered the skill (its description reached the model) and ran the call.
    first, second = claude_env.conversation()[:2]
    assert "MARK-skill-description" in first.text
    assert second.tool_results == 1


def skill_file(root: Path, where: str, name: str) -> None:
    path = root / "evals" / "fixture" / where / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(SKILL.replace("todo-triage", name).replace("skill-description", name))


def test_codex_discovers_workspace_skills_and_reading_one_is_a_load(
    pytester: pytest.Pytester,
    codex_ini: tuple[ModelServer, str],  # noqa: F811
) -> None:
    server, ini = codex_ini
    server.script = lambda request: (
        Reply(shell="cat .agents/skills/todo-triage/SKILL.md")
        if request.tool_results == 0
        else Reply(text="triaged")
    )
    pytester.makefile(".ini", tox=ini)
    for where in (".agents/skills", ".codex/skills"):
        name = "todo-triage" if where == ".agents/skills" else "release-notes"
        skill_file(pytester.path, where, name)
    (pytester.path / "evals" / "triage.yaml").write_text(CASE)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(failed=1)
    # Codex 0.171 lists the skills of both workspace directories to the model.
    assert server.conversation()[0].markers == ["MARK-release-notes", "MARK-todo-triage"]
    checks = only_results(pytester.path)["cases"][0]["checks"]
    assert [c["passed"] for c in checks] == [True, True, False]
    assert checks[0]["message"] == "skill 'todo-triage' loaded 1 time(s)"


def test_gemini_activating_a_skill_is_a_load_of_that_skill(
    pytester: pytest.Pytester,
    gemini_server: ModelServer,  # noqa: F811
) -> None:
    gemini_server.script = lambda request: (
        Reply(tool="activate_skill", tool_input={"name": "todo-triage"})
        if request.tool_results == 0
        else Reply(text="triaged " + " ".join(request.markers))
    )
    pytester.makefile(".ini", tox=GEMINI_INI)
    skill_file(pytester.path, ".gemini/skills", "todo-triage")
    skill_file(pytester.path, ".agents/skills", "release-notes")
    (pytester.path / "evals" / "triage.yaml").write_text(CASE)

    result = pytester.runpytest("-p", "no:cacheprovider")

    # Gemini CLI 0.61 lists the skills of both workspace directories and runs the
    # call; the transcript (-o stream-json) names the skill it activated.
    result.assert_outcomes(failed=1)
    first, second = gemini_server.conversation()[:2]
    assert first.markers == ["MARK-release-notes", "MARK-todo-triage"]
    assert second.tool_results == 1
    checks = only_results(pytester.path)["cases"][0]["checks"]
    assert [c["passed"] for c in checks] == [True, True, False]
    assert checks[0]["message"] == "skill 'todo-triage' loaded 1 time(s)"
