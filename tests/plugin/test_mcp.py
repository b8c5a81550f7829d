"""A case's ``mcp:`` in a pytest session (docs/mcp.md): an agent that cannot be given
MCP servers makes the case an error of kind ``case`` naming it, before anything runs."""

from __future__ import annotations

import pytest

from tests.helpers.results import only_results

CASE = """\
id: ticket
defends: AGENTS.md
prompt: Fix T-7.
mcp:
  tracker:
    mock:
      tools:
        lookup_ticket: {returns: the ticket}
checks:
  - {type: mcp_called, server: tracker}
"""


def test_mcp_on_an_agent_that_cannot_be_given_servers_is_a_case_error(
    pytester: pytest.Pytester,
) -> None:
    marker = pytester.path / "agent-ran"
    ini = f"[pytest]\neval_agent = command\neval_agent_command = touch {marker}\n"
    pytester.makefile(".ini", tox=ini)
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "ticket.yaml").write_text(CASE)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*ticket.yaml:1: `mcp:` gives MCP servers to claude, codex and gemini only*'command'*"]
    )
    (record,) = only_results(pytester.path)["cases"]
    assert (record["outcome"], record["error_kind"]) == ("error", "case")
    assert not marker.exists()
