"""The ``skill_used`` / ``skill_not_used`` checks on each agent's transcript
(docs/skills.md, "What counts as using a skill")."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from pytest_evalcases.agents.base import ToolCall
from pytest_evalcases.agents.skills import skill_loads
from pytest_evalcases.cases.registry import CheckContext
from pytest_evalcases.errors import RunError
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run.checks import default_registry

REGISTRY = default_registry()


def evaluate(
    type_: str, skill: str, agent: str | None, calls: tuple[ToolCall, ...] | None
) -> CheckRecord:
    model = REGISTRY.check_adapter.validate_python({"type": type_, "skill": skill})
    ctx = CheckContext(
        workspace=Path(os.getcwd()),
        fixture=None,
        output="",
        tool_calls=calls,
        env=dict(os.environ),
        agent=agent,
    )
    return REGISTRY.evaluate(0, model, ctx)


def skill(name: str) -> ToolCall:
    return ToolCall("Skill", "other", json.dumps({"skill": name}))


CLAUDE = (
    ToolCall("Read", "read", '{"file_path":"README.md"}'),
    skill("commit-style"),
    ToolCall("Bash", "shell", "git commit -m x"),
)


def test_claude_counts_skill_tool_calls_by_name() -> None:
    used = evaluate("skill_used", "commit-style", "claude", CLAUDE)
    assert used.passed
    assert used.message == "skill 'commit-style' loaded 1 time(s)"
    other = evaluate("skill_used", "release-notes", "claude", CLAUDE)
    assert not other.passed
    assert other.message == "skill 'release-notes' not loaded (skills loaded: commit-style)"
    assert evaluate("skill_not_used", "release-notes", "claude", CLAUDE).passed
    refused = evaluate("skill_not_used", "commit-style", "claude", CLAUDE)
    assert not refused.passed
    assert refused.message == "skill 'commit-style' must not be loaded; loaded 1 time(s)"


def test_claude_plugin_skills_match_by_their_own_name() -> None:
    calls = (skill("tools:commit-style"), ToolCall("Skill", "other", '{"command":"/lint"}'))
    assert skill_loads("claude", calls) is not None
    assert evaluate("skill_used", "commit-style", "claude", calls).passed
    assert evaluate("skill_used", "lint", "claude", calls).passed


def test_reading_a_skill_file_is_not_a_claude_skill_load() -> None:
    calls = (ToolCall("Read", "read", '{"file_path":".claude/skills/commit-style/SKILL.md"}'),)
    assert not evaluate("skill_used", "commit-style", "claude", calls).passed


def test_codex_counts_a_shell_read_of_the_skill_file() -> None:
    calls = (
        ToolCall("command_execution", "shell", "/bin/bash -lc 'ls'"),
        ToolCall(
            "command_execution",
            "shell",
            "/bin/bash -lc 'sed -n 1,200p .agents/skills/db-migrate/SKILL.md'",
        ),
        ToolCall("command_execution", "shell", "cat ~/.codex/skills/release/SKILL.md"),
    )
    assert skill_loads("codex", calls) == skill_loads("codex", calls[1:])
    assert evaluate("skill_used", "db-migrate", "codex", calls).passed
    assert evaluate("skill_used", "release", "codex", calls).passed
    assert not evaluate("skill_not_used", "db-migrate", "codex", calls).passed
    # Another file of the skill's directory, or a similar name, is no load of it.
    other = (ToolCall("command_execution", "shell", "cat .agents/skills/db-migrate/notes.md"),)
    assert evaluate("skill_not_used", "db-migrate", "codex", other).passed
    assert not evaluate("skill_used", "migrate", "codex", calls).passed


def test_gemini_without_inputs_shows_only_that_a_skill_was_activated() -> None:
    none = (ToolCall("read_file", "read", ""),)
    assert evaluate("skill_not_used", "commit-style", "gemini", none).passed
    assert not evaluate("skill_used", "commit-style", "gemini", none).passed
    activated = (ToolCall("activate_skill", "other", ""),)
    for type_ in ("skill_used", "skill_not_used"):
        with pytest.raises(RunError, match=r"gemini agent loaded 1 skill.*does not say which"):
            evaluate(type_, "commit-style", "gemini", activated)


def test_gemini_with_inputs_names_the_skill() -> None:
    calls = (ToolCall("activate_skill", "other", '{"name":"commit-style"}'),)
    assert evaluate("skill_used", "commit-style", "gemini", calls).passed
    assert evaluate("skill_not_used", "other", "gemini", calls).passed


@pytest.mark.parametrize(
    "call",
    [
        ToolCall("Skill", "other", '{"skill":"commit-style"}'),
        ToolCall("activate_skill", "other", '{"name":"commit-style"}'),
        ToolCall("read_file", "read", '{"path":".agents/skills/commit-style/SKILL.md"}'),
        ToolCall("bash", "shell", "cat skills/commit-style/SKILL.md"),
    ],
    ids=["Skill", "activate_skill", "read", "shell"],
)
def test_the_command_agents_trajectory_shows_a_load_any_of_these_ways(call: ToolCall) -> None:
    # Its calls come from the ATIF trajectory it wrote (docs/trajectories.md).
    assert evaluate("skill_used", "commit-style", "command", (call,)).passed
    assert evaluate("skill_not_used", "other", "command", (call,)).passed
    other = ToolCall("bash", "shell", "cat README.md")
    assert not evaluate("skill_used", "commit-style", "command", (other,)).passed


@pytest.mark.parametrize("agent", ["my-agent", None])
def test_an_agent_that_cannot_show_skills_makes_both_checks_errors(agent: str | None) -> None:
    name = agent or "(unknown)"
    for type_ in ("skill_used", "skill_not_used"):
        with pytest.raises(RunError, match=re.escape(f"the {name} agent's transcript")):
            evaluate(type_, "commit-style", agent, CLAUDE)


def test_no_transcript_is_an_error_naming_the_agent() -> None:
    with pytest.raises(RunError, match="the claude agent gave none") as info:
        evaluate("skill_not_used", "commit-style", "claude", None)
    assert info.value.kind == "no-transcript"
