"""The ``mcp_called`` / ``mcp_not_called`` checks (docs/mcp.md, "The checks"): a mock
server's own log decides for the case's mocks, each CLI's transcript for other servers,
and a negative check of a mock that never listed its tools reaches no verdict."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_evalcases.agents.base import ToolCall
from pytest_evalcases.agents.mcp import McpCall, McpServed
from pytest_evalcases.errors import RunError
from pytest_evalcases.results.record import CheckRecord
from tests.helpers import checks
from tests.unit.agents.test_mcp import TRANSCRIPTS


def evaluate(
    check: dict[str, Any],
    agent: str,
    calls: tuple[ToolCall, ...] | None,
    served: McpServed | None = None,
) -> CheckRecord:
    return checks.evaluate(check, agent=agent, tool_calls=calls, mcp=served)


@pytest.mark.parametrize("agent", sorted(TRANSCRIPTS))
def test_a_server_of_no_mock_is_graded_on_the_transcript(agent: str) -> None:
    calls = (TRANSCRIPTS[agent],)
    called = evaluate({"type": "mcp_called", "server": "tracker", "input": "T-7"}, agent, calls)
    other = evaluate({"type": "mcp_called", "server": "tracker", "tool": "close"}, agent, calls)
    not_called = evaluate({"type": "mcp_not_called", "server": "tracker"}, agent, calls)

    assert (called.passed, other.passed, not_called.passed) == (True, False, False)
    assert not_called.message == (
        """MCP server 'tracker' must not be called; called lookup_ticket '{"id":"T-7"}'"""
    )


def test_a_mock_is_graded_on_its_own_log_not_the_transcript() -> None:
    # Claude asked (its transcript has the call), but a permission refused it: the mock
    # never answered, so the tool was not called.
    asked = (TRANSCRIPTS["claude"],)
    served = McpServed(mocks=("tracker",), listed=("tracker",), calls=((),))
    called = evaluate({"type": "mcp_called", "server": "tracker"}, "claude", asked, served)
    not_called = evaluate({"type": "mcp_not_called", "server": "tracker"}, "claude", asked, served)

    assert (called.passed, called.message) == (False, "no call of MCP server 'tracker'")
    assert not_called.passed

    answered = McpServed(
        mocks=("tracker",),
        listed=("tracker",),
        calls=((McpCall("tracker", "lookup_ticket", '{"id":"T-7"}'),), ()),
    )
    again = evaluate({"type": "mcp_called", "server": "tracker"}, "claude", None, answered)
    assert again.passed


def test_mcp_not_called_of_a_mock_that_never_listed_its_tools_reaches_no_verdict() -> None:
    served = McpServed(mocks=("tracker",), listed=(), calls=((),))
    with pytest.raises(RunError, match="never listed its tools to the codex agent") as info:
        evaluate({"type": "mcp_not_called", "server": "tracker"}, "codex", (), served)
    called = evaluate({"type": "mcp_called", "server": "tracker"}, "codex", (), served)

    assert info.value.kind == "no-transcript"
    assert called.passed is False


def test_without_a_transcript_there_is_no_verdict() -> None:
    with pytest.raises(RunError, match="needs a transcript of tool calls"):
        evaluate({"type": "mcp_not_called", "server": "github"}, "command", None)


def test_the_served_calls_are_stored_and_read_back() -> None:
    served = McpServed(
        mocks=("tracker",),
        listed=("tracker",),
        calls=((McpCall("tracker", "t", "{}"),), (McpCall("tracker", "u", '{"a":1}'),)),
    )
    assert McpServed.from_json(served.as_json()) == served
    assert McpServed.from_json(None) is None
    assert served.every_call == (McpCall("tracker", "t", "{}"), McpCall("tracker", "u", '{"a":1}'))


def test_mcp_not_called_of_a_server_the_cli_did_not_connect_to_reaches_no_verdict() -> None:
    check = {"type": "mcp_not_called", "server": "github"}
    with pytest.raises(RunError, match=r"did not connect to the server \(connected: tracker\)"):
        checks.evaluate(check, agent="claude", tool_calls=(), mcp_connected=("tracker",))
    # Connected and not called: a pass; a CLI that does not say: the transcript alone.
    connected = checks.evaluate(check, agent="claude", tool_calls=(), mcp_connected=("github",))
    unknown = checks.evaluate(check, agent="codex", tool_calls=())
    assert (connected.passed, unknown.passed) == (True, True)
    called = checks.evaluate(
        {**check, "type": "mcp_called"}, agent="claude", tool_calls=(), mcp_connected=()
    )
    assert called.passed is False
