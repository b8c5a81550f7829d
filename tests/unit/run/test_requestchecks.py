"""The ``request_matches`` / ``request_not_matches`` checks on the requests a run's CLI
sent its model (docs/case-format.md, "What a request check reads"): where a pattern
matched, one request by its number, and no verdict where nothing is known."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.agents.base import ModelRequest, RequestPart
from pytest_evalcases.cases.loading import load_case_file
from pytest_evalcases.cases.registry import CheckContext
from pytest_evalcases.errors import CaseFileError, RunError
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run.checks import default_registry

REGISTRY = default_registry()

FIRST = ModelRequest(
    (
        RequestPart("system prompt", "You are Claude Code.\n# CLAUDE.md\nNever push to main."),
        RequestPart("tools", "Bash: Runs a command.\nRead: Reads a file."),
        RequestPart("message 1 (user)", "Tidy up src/api."),
    )
)
SECOND = ModelRequest(
    (
        *FIRST.parts,
        RequestPart("message 2 (assistant)", 'tool call Read {"file_path": "src/api/a.py"}'),
        RequestPart("message 3 (user)", "1\tx = 1"),
        RequestPart("message 4 (system)", "Contents of .claude/rules/api.md:\n\nValidate input."),
    )
)


def evaluate(
    requests: tuple[ModelRequest, ...] | None, unknown: str = "", **check: Any
) -> CheckRecord:
    model = REGISTRY.check_adapter.validate_python(check)
    ctx = CheckContext(
        workspace=Path(os.getcwd()),
        fixture=None,
        output="",
        tool_calls=None,
        env=dict(os.environ),
        agent="claude",
        requests=requests,
        requests_unknown=unknown,
    )
    return REGISTRY.evaluate(0, model, ctx)


def test_request_matches_says_which_request_part_and_line_matched() -> None:
    found = evaluate((FIRST, SECOND), type="request_matches", pattern="^Never push to main\\.$")
    assert found.passed
    assert found.message == (
        "pattern '^Never push to main\\.$' found in request 1, system prompt, line 3: "
        "'Never push to main.'"
    )
    rule = evaluate((FIRST, SECOND), type="request_matches", pattern="^Validate input")
    assert rule.message.endswith(
        "found in request 2, message 4 (system), line 3: 'Validate input.'"
    )
    # Each part begins a line of its own: `^` anchors at a tool, a message, a call.
    assert evaluate((FIRST,), type="request_matches", pattern="^Read: Reads").passed
    assert evaluate((FIRST,), type="request_matches", pattern="^Tidy up src/api\\.$").passed
    assert evaluate((SECOND,), type="request_matches", pattern="^tool call Read ").passed


def test_request_matches_fails_saying_what_the_requests_held() -> None:
    missing = evaluate((FIRST, SECOND), type="request_matches", pattern="Always rebase")
    assert not missing.passed
    assert missing.message == (
        "pattern 'Always rebase' not found in what the CLI sent its model (2 requests; the "
        "last held: system prompt, tools, 4 messages)"
    )


def test_one_request_by_its_number() -> None:
    before = evaluate((FIRST, SECOND), type="request_not_matches", request=1, pattern="Validate")
    assert before.passed
    assert before.message == (
        "pattern 'Validate' absent from request 1 (of 2 requests; it held: system prompt, "
        "tools, 1 message)"
    )
    after = evaluate((FIRST, SECOND), type="request_matches", request=2, pattern="Validate")
    assert after.passed
    beyond = evaluate((FIRST, SECOND), type="request_matches", request=3, pattern="x")
    assert not beyond.passed
    assert beyond.message == "request 3: the CLI sent its model only 2 requests"
    # A request the run did not send holds nothing: not a pass of request_not_matches.
    assert not evaluate((FIRST,), type="request_not_matches", request=2, pattern="x").passed


def test_request_not_matches_quotes_the_first_match_and_counts_the_others() -> None:
    leaked = evaluate((FIRST, SECOND), type="request_not_matches", pattern="(?i)never push")
    assert not leaked.passed
    assert leaked.message == (
        "pattern '(?i)never push' must not match what the CLI sent its model; it matched "
        "request 1, system prompt, line 3: 'Never push to main.' (and 1 more request)"
    )


def test_a_pattern_may_span_the_parts_of_a_request() -> None:
    assert evaluate((FIRST,), type="request_matches", pattern="(?s)CLAUDE.md.*^Tidy up").passed


def test_a_request_with_no_text_is_searched_as_empty() -> None:
    empty = evaluate((ModelRequest(),), type="request_matches", pattern="^$")
    assert empty.message == "pattern '^$' found in request 1, no text, line 1: ''"
    assert not evaluate((ModelRequest(),), type="request_matches", pattern="x").passed


@pytest.mark.parametrize(
    ("requests", "unknown", "said"),
    [
        (
            None,
            "",
            "request_not_matches needs the requests the CLI sent its model, and the claude "
            "agent does not talk to its model API through the plugin's proxy, so the check "
            'reached no verdict (docs/case-format.md, "What a request check reads")',
        ),
        (
            None,
            "its stored run cannot say: no recording",
            "request_not_matches needs the requests the CLI sent its model, and its stored run "
            "cannot say: no recording, so the check",
        ),
        (
            (),
            "",
            "request_not_matches: the proxy saw no request of the claude agent to its model, "
            "so the check reached no verdict",
        ),
        (
            (ModelRequest(unreadable="its body was left out of the recording"),),
            "",
            "request_not_matches: request 1 cannot be read: its body was left out of the "
            "recording, so the check reached no verdict",
        ),
    ],
    ids=["not-proxied", "regrade-without-recording", "no-request", "unreadable"],
)
def test_no_verdict_where_the_requests_are_not_known_never_a_pass(
    requests: tuple[ModelRequest, ...] | None, unknown: str, said: str
) -> None:
    with pytest.raises(RunError) as info:
        evaluate(requests, unknown, type="request_not_matches", pattern="anything")
    assert info.value.kind == "no-transcript"
    assert said in str(info.value)


@pytest.mark.parametrize(
    ("check", "field", "reason"),
    [
        (
            "{type: request_matches, pattern: '(unclosed'}",
            "checks[0].pattern",
            "invalid regular expression '(unclosed'",
        ),
        (
            "{type: request_not_matches, request: 0, pattern: x}",
            "checks[0].request",
            "greater than or equal to 1",
        ),
        ("{type: request_matches}", "checks[0].pattern", "required"),
    ],
)
def test_a_bad_request_check_is_a_case_file_error(
    tmp_path: Path, check: str, field: str, reason: str
) -> None:
    path = tmp_path / "case.yaml"
    path.write_text(f"id: x\ndefends: CLAUDE.md\nprompt: go\nchecks:\n  - {check}\n")
    with pytest.raises(CaseFileError) as info:
        load_case_file(path, tmp_path, REGISTRY)
    assert info.value.field == field
    assert reason in info.value.reason
