"""The case's ``mcp:`` field, its script turns and checks, validated at collection
(docs/mcp.md): errors name the file's line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.cases.loading import load_case_file
from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.run.checks import default_registry

REGISTRY = default_registry()

CASE = """\
id: ticket
defends: AGENTS.md
prompt: Fix T-7.
mcp:
  tracker:
    mock:
      tools:
        lookup_ticket:
          description: A ticket's text
          returns:
            - {match: 'T-7', returns: the ticket}
  github:
    command: npx
    args: [-y, server-github]
    env: {TOKEN: x}
script:
  - mcp: {server: tracker, tool: lookup_ticket}
    input: {id: T-7}
  - text: done
checks:
  - {type: mcp_called, server: tracker, tool: lookup_ticket, input: T-7}
  - {type: mcp_not_called, server: github}
"""


def load(tmp_path: Path, text: str) -> list:  # type: ignore[type-arg]
    path = tmp_path / "case.yaml"
    path.write_text(text)
    return load_case_file(path, tmp_path, REGISTRY)


def error(tmp_path: Path, text: str) -> CaseFileError:
    with pytest.raises(CaseFileError) as info:
        load(tmp_path, text)
    return info.value


def test_servers_script_turns_and_checks_load(tmp_path: Path) -> None:
    (case,) = load(tmp_path, CASE)

    names = [name for name, _ in case.mcp]
    assert names == ["tracker", "github"]
    tracker, github = (server for _, server in case.mcp)
    assert tracker.mock.tools["lookup_ticket"].returns[0].returns == "the ticket"
    assert (github.command, github.args, github.env) == (
        "npx",
        ["-y", "server-github"],
        {"TOKEN": "x"},
    )
    assert case.script[0].mcp.server == "tracker"
    assert case.script[0].input == {"id": "T-7"}
    assert [c.type for c in case.checks] == ["mcp_called", "mcp_not_called"]
    # Its checks read the transcript.
    assert case.needs_transcript


@pytest.mark.parametrize(
    ("old", "new", "line", "field", "reason"),
    [
        # Gemini CLI joins mcp_SERVER_TOOL: an `_` would make the name ambiguous.
        ("  github:", "  git_hub:", 13, "mcp.git_hub", "should match pattern"),
        (
            "match: 'T-7'",
            "match: '(T-7'",
            11,
            "mcp.tracker.mock.tools.lookup_ticket.returns",
            "invalid regular expression",
        ),
        (
            "description: A ticket's text",
            "descripton: x",
            9,
            "mcp.tracker.mock.tools.lookup_ticket.descripton",
            "unknown field 'descripton'; did you mean 'description'?",
        ),
        (
            "    env: {TOKEN: x}",
            "    env: {TOKEN: x}\n    mock: {tools: {t: {returns: x}}}",
            13,
            "mcp.github",
            "exactly one of `command` or `mock`",
        ),
        (
            "  - text: done",
            "  - text: done\n    mcp: {server: tracker, tool: t}",
            19,
            "script[1]",
            "exactly one of `shell`, `tool`, `mcp` or `text`",
        ),
        (
            "server: tracker, tool: lookup_ticket, input: T-7",
            "server: tracker, tool: '('",
            21,
            "checks[0].tool",
            "invalid regular expression",
        ),
    ],
)
def test_a_bad_server_turn_or_check_is_an_error_at_its_line_and_field(
    tmp_path: Path, old: str, new: str, line: int, field: str, reason: str
) -> None:
    assert old in CASE
    found = error(tmp_path, CASE.replace(old, new, 1))

    assert (found.line, found.field) == (line, field)
    assert reason in found.reason
