"""A case's ``mcp:`` in a pytest session (docs/mcp.md): an agent that cannot be given
MCP servers makes the case an error of kind ``case`` naming it, before anything runs."""

from __future__ import annotations

from tests.helpers.results import only_results
from tests.helpers.suite import SuiteBuilder
from tests.unit.cases.test_mcp_field import CASE

#: The case of the schema's tests, without its script (which no command agent plays).
UNSCRIPTED = CASE.split("script:")[0] + "checks:\n  - {type: mcp_called, server: tracker}\n"


def test_mcp_on_an_agent_that_cannot_be_given_servers_is_a_case_error(
    make_suite: SuiteBuilder,
) -> None:
    marker = make_suite.root / "agent-ran"
    make_suite(None, {"ticket": UNSCRIPTED}, ini=f"eval_agent_command = touch {marker}\n")

    result = make_suite.pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    said = "`mcp:` gives MCP servers to claude, codex and gemini only"
    result.stdout.fnmatch_lines([f"*ticket.yaml:1: {said}*'command'*"])
    (record,) = only_results(make_suite.root)["cases"]
    assert (record["outcome"], record["error_kind"]) == ("error", "case")
    assert not marker.exists()
