"""The request checks on the real agent CLIs (docs/case-format.md, "What a request check
reads"; docs/config-contract.md, "What reached the model"): each CLI discovers the
instruction file of the case's fixture and runs against the scripted model server
through the plugin's proxy (recording off: the checks alone send the run through it);
the checks read what it sent. A path-scoped rule of Claude Code reaches the model only
after the agent reads a file it names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agents.test_real_clis import (  # noqa: F401 (fixtures)
    CLAUDE_INI,
    GEMINI_INI,
    claude_env,
    codex_at_openai,
    gemini_server,
)
from tests.helpers.model_server import ModelServer, Reply, Script
from tests.helpers.results import only_results

pytestmark = pytest.mark.real_cli

#: The checks of every CLI's case: its instruction file reached the model; a text that
#: is in no file did not; a rule that is in the file, forbidden, fails.
CHECKS = """
  - {id: reached, type: request_matches, pattern: '^Never push to main: MARK-rule$'}
  - {id: absent, type: request_not_matches, pattern: MARK-retired}
  - {id: caught, type: request_not_matches, pattern: MARK-rule}
"""


def case(defends: str, checks: str = CHECKS) -> str:
    return (
        f"id: reach\ndefends: {defends}\ncwd: fixture\nbare: false\n"
        f"prompt: Tidy up src/api.\nchecks:{checks}"
    )


def run(
    pytester: pytest.Pytester, ini: str, instructions: str, text: str, checks: str
) -> dict[str, Any]:
    """Run the case with ``instructions`` (a path in the fixture) holding ``text``, with
    recording off; the checks of its one run by id."""
    pytester.makefile(".ini", tox=ini + "eval_record = false\n")
    fixture = pytester.path / "evals" / "fixture"
    (fixture / instructions).parent.mkdir(parents=True, exist_ok=True)
    (fixture / instructions).write_text(text)
    (pytester.path / "evals" / "reach.yaml").write_text(case(instructions, checks))
    pytester.runpytest("-p", "no:cacheprovider")
    record = only_results(pytester.path)["cases"][0]
    assert record["outcome"] in ("passed", "failed"), record.get("error")
    return {c["id"]: c for c in record["checks"]}


RULE = "# Rules\n\nNever push to main: MARK-rule\n"


def assert_reached(checks: dict[str, Any]) -> None:
    assert checks["reached"]["passed"], checks["reached"]["message"]
    assert checks["absent"]["passed"], checks["absent"]["message"]
    assert not checks["caught"]["passed"]
    assert (
        "must not match what the CLI sent its model; it matched request 1, "
        in (checks["caught"]["message"])
    )


@pytest.mark.parametrize(
    ("server", "ini", "instructions"),
    [("claude_env", CLAUDE_INI, "CLAUDE.md"), ("gemini_server", GEMINI_INI, "GEMINI.md")],
    ids=["claude", "gemini"],
)
def test_the_instruction_file_reaches_the_model_of_the_real_cli(
    pytester: pytest.Pytester,
    request: pytest.FixtureRequest,
    server: str,
    ini: str,
    instructions: str,
) -> None:
    scripted: ModelServer = request.getfixturevalue(server)
    scripted.script = lambda request: Reply(text="tidy")

    checks = run(pytester, ini, instructions, RULE, CHECKS)

    assert_reached(checks)
    # Claude Code 2.1.197 and Gemini CLI 0.61 send it in the first user message.
    assert "it matched request 1, message 1 (user)," in checks["caught"]["message"]


PATH_RULE = """---
paths: ["src/api/**"]
---
API handlers validate their input: MARK-api-rule
"""

PATH_CHECKS = """
  - {id: before, type: request_not_matches, request: 1, pattern: MARK-api-rule}
  - {id: after, type: request_matches, request: 2, pattern: MARK-api-rule}
"""


def reads(call: Reply) -> Script:
    """Answer the first request with ``call`` (a read of ``src/api/orders.py``), the
    next with text."""
    return lambda request: call if request.tool_results == 0 else Reply(text="read")


def test_a_path_scoped_rule_reaches_the_real_claude_only_after_a_matching_read(
    pytester: pytest.Pytester,
    claude_env: ModelServer,  # noqa: F811
) -> None:
    claude_env.script = reads(Reply(tool="Read", tool_input={"file_path": "src/api/orders.py"}))
    api_file(pytester)

    checks = run(pytester, CLAUDE_INI, ".claude/rules/api.md", PATH_RULE, PATH_CHECKS)

    assert checks["before"]["passed"], checks["before"]["message"]
    assert checks["after"]["passed"], checks["after"]["message"]
    # Claude Code 2.1.197 adds the rule as a system message after the Read's result.
    assert "found in request 2, message 5 (system), line 3:" in checks["after"]["message"]


def test_agents_md_reaches_the_model_of_the_real_codex(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with codex_at_openai(monkeypatch, tmp_path, lambda request: Reply(text="tidy")) as (_, ini):
        checks = run(pytester, ini, "AGENTS.md", RULE, CHECKS)

    assert_reached(checks)
    assert "it matched request 1, message 6 (user), line 6:" in checks["caught"]["message"]


def api_file(pytester: pytest.Pytester) -> None:
    api = pytester.path / "evals" / "fixture" / "src" / "api"
    api.mkdir(parents=True)
    (api / "orders.py").write_text("def create_order(payload):\n    return payload\n")


SUBDIRECTORY = "API handlers validate their input: MARK-api-rule\n"


def test_a_subdirectory_gemini_md_reaches_the_real_gemini_only_after_a_read_there(
    pytester: pytest.Pytester,
    gemini_server: ModelServer,  # noqa: F811
) -> None:
    gemini_server.script = reads(
        Reply(tool="read_file", tool_input={"file_path": "src/api/orders.py"})
    )
    api_file(pytester)

    checks = run(pytester, GEMINI_INI, "src/api/GEMINI.md", SUBDIRECTORY, PATH_CHECKS)

    assert checks["before"]["passed"], checks["before"]["message"]
    assert checks["after"]["passed"], checks["after"]["message"]
    assert "found in request 2, message 3 (user)" in checks["after"]["message"]


def test_a_nested_agents_md_never_reaches_the_real_codex_on_a_read_there(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    script = reads(Reply(shell="cat src/api/orders.py"))
    with codex_at_openai(monkeypatch, tmp_path, script) as (_, ini):
        api_file(pytester)
        checks = run(pytester, ini, "src/api/AGENTS.md", SUBDIRECTORY, PATH_CHECKS)

    # Codex reads the AGENTS.md files from the workspace's root to its working
    # directory when it starts, never one below it later (0.171).
    assert checks["before"]["passed"], checks["before"]["message"]
    assert not checks["after"]["passed"]
    assert "not found in request 2 (of 2 requests;" in checks["after"]["message"]


OPERATOR = """
  - {id: operator, type: request_not_matches, pattern: MARK-operator}
"""


@pytest.mark.parametrize(("home", "reached"), [("inherit", True), ("isolated", False)])
def test_request_not_matches_catches_the_operators_own_claude_md_with_an_inherited_home(
    pytester: pytest.Pytester,
    claude_env: ModelServer,  # noqa: F811
    tmp_path: Path,
    home: str,
    reached: bool,
) -> None:
    claude_env.script = lambda request: Reply(text="tidy")
    operator = tmp_path / "claude-home"
    operator.mkdir(exist_ok=True)
    (operator / "CLAUDE.md").write_text("Always answer in French: MARK-operator\n")

    checks = run(pytester, CLAUDE_INI + f"eval_agent_home = {home}\n", "CLAUDE.md", RULE, OPERATOR)

    assert checks["operator"]["passed"] is not reached, checks["operator"]["message"]


SKILL = """---
name: todo-triage
description: Sorts TODO comments by urgency. MARK-skill-description
---
List every TODO with its file and line, most urgent first.
"""


def test_a_skills_description_is_offered_to_the_model_of_the_real_claude(
    pytester: pytest.Pytester,
    claude_env: ModelServer,  # noqa: F811
) -> None:
    claude_env.script = lambda request: Reply(text="tidy")
    checks = """
  - {id: offered, type: request_matches, request: 1, pattern: '^- todo-triage: Sorts TODO'}
  - {id: body, type: request_not_matches, pattern: 'most urgent first'}
"""

    checks = run(pytester, CLAUDE_INI, ".claude/skills/todo-triage/SKILL.md", SKILL, checks)

    assert checks["offered"]["passed"], checks["offered"]["message"]
    # Claude Code 2.1.197 lists its skills in a system message, one line each.
    assert "found in request 1, message 2 (system)" in checks["offered"]["message"]
    # Only the description: the skill's body reaches the model when it is loaded.
    assert checks["body"]["passed"], checks["body"]["message"]
