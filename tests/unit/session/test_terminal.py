"""The lines of the ``eval gate`` terminal summary and their markup (the sessions that
print them: tests/plugin/test_terminal_summary.py)."""

from __future__ import annotations

from pathlib import Path

from pytest_evalcases.session.settings import Settings
from pytest_evalcases.session.state import EvalSession
from pytest_evalcases.session.terminal import PLAIN, VERDICT_MARKUP, YELLOW, gate_summary
from tests.helpers.results import rec


def test_a_session_that_ran_no_case_says_only_which_agent_was_unavailable(
    tmp_path: Path,
) -> None:
    session = EvalSession(settings=Settings(rootdir=tmp_path), agent=None)
    session.unavailable.update({"a": "claude: not found", "b": "claude: not found"})

    said = gate_summary(session, every_case=False)

    assert said.section == ""
    assert [markup for _, markup in said.lines] == [YELLOW]
    assert "claude: not found" in said.lines[0][0]


def test_the_verdict_line_takes_its_status_colour(
    tmp_path: Path,
) -> None:
    session = EvalSession(settings=Settings(rootdir=tmp_path), agent=None)
    session.records.append(rec("a", "failed"))

    said = gate_summary(session, every_case=False)

    assert said.section == "eval gate"
    texts = [line for line, _ in said.lines]
    verdict = next(i for i, line in enumerate(texts) if "BLOCKED" in line)
    assert said.lines[verdict][1] == VERDICT_MARKUP["BLOCKED"]
    assert all(markup == PLAIN for _, markup in said.lines[:verdict])
