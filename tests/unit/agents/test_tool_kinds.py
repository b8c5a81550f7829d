"""Every driver maps its tool names onto the canonical kinds, so tool checks hold across
agents."""

from __future__ import annotations

from pytest_evalcases.agents import base, claude, gemini


def test_the_canonical_kinds() -> None:
    assert base.TOOL_KINDS == ("shell", "read", "write", "edit", "search", "web", "other")


def test_driver_tool_names_map_to_canonical_kinds_only() -> None:
    for kinds in (claude.TOOL_KINDS, gemini.TOOL_KINDS):
        assert set(kinds.values()) <= set(base.TOOL_KINDS)
    assert claude.TOOL_KINDS["Bash"] == "shell"
    assert gemini.TOOL_KINDS["run_shell_command"] == "shell"
