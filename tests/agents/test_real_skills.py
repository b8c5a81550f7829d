"""The skill checks on the real ``claude`` CLI (docs/skills.md): Claude Code discovers
a skill in the case's fixture, the scripted Messages API answers with a ``Skill`` tool
call naming it, and the checks read that call from the CLI's own stream-json output."""

from __future__ import annotations

import pytest

from tests.agents.test_real_clis import CLAUDE_INI, claude_env  # noqa: F401 (a fixture)
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
