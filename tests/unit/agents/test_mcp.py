"""Each CLI's name of an MCP tool read back into server, tool and input (docs/mcp.md,
"The checks")."""

from __future__ import annotations

import pytest

from pytest_evalcases.agents.base import ToolCall
from pytest_evalcases.agents.mcp import McpCall, transcript_calls

#: One lookup of T-7 as each CLI's transcript names it.
TRANSCRIPTS = {
    "claude": ToolCall("mcp__tracker__lookup_ticket", "other", '{"id":"T-7"}'),
    "codex": ToolCall("tracker.lookup_ticket", "other", '{"id":"T-7"}'),
    "gemini": ToolCall("mcp_tracker_lookup_ticket", "other", '{"id":"T-7"}'),
}


@pytest.mark.parametrize("agent", sorted(TRANSCRIPTS))
def test_each_clis_name_of_an_mcp_tool_is_read_back(agent: str) -> None:
    shell = ToolCall("Bash", "shell", "ls")
    assert transcript_calls(agent, [shell, TRANSCRIPTS[agent]]) == (
        McpCall("tracker", "lookup_ticket", '{"id":"T-7"}'),
    )


def test_a_gemini_name_is_split_after_a_known_server_with_an_underscore() -> None:
    call = ToolCall("mcp_my_server_get_it", "other", "{}")
    assert transcript_calls("gemini", [call], ["my_server"]) == (
        McpCall("my_server", "get_it", "{}"),
    )
    assert transcript_calls("gemini", [call]) == (McpCall("my", "server_get_it", "{}"),)


def test_another_agents_tools_are_no_mcp_calls() -> None:
    calls = [ToolCall("mcp__tracker__lookup_ticket", "other", "{}"), ToolCall("a.b", "other", "")]
    assert transcript_calls("command", calls) == ()
    assert transcript_calls("codex", [ToolCall("file_change", "edit", "x")]) == ()
