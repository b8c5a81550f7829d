"""run/runner.py: the records of a run. The report of a run is the attempt record the
runner returns: frozen, with the error that left it without a verdict, if any."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_evalcases.agents.base import AgentResult, Usage
from pytest_evalcases.errors import RunError
from pytest_evalcases.kinds import Spent
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run.budget import BudgetSpent
from pytest_evalcases.run.runner import AgentRun, RunReport

PASSED = CheckRecord("a", "file_exists", None, True, "ok")


def test_a_report_cannot_be_changed() -> None:
    report = RunReport(checks=(PASSED,), workspace=Path("/tmp/ws"))

    with pytest.raises(dataclasses.FrozenInstanceError):
        report.workspace = Path("/elsewhere")  # type: ignore[misc]
    assert dataclasses.replace(report, attempts=2).attempts == 2
    assert report.attempts == 1


def test_a_report_with_an_error_is_no_pass() -> None:
    error = RunError("the agent timed out", kind="timeout")

    assert RunReport(checks=(PASSED,)).passed
    assert not RunReport(error=error).passed
    assert RunReport(error=error).failed_checks == []


def test_a_run_that_was_never_started_made_no_attempt() -> None:
    refused = RunReport.failed(BudgetSpent("budget spent"))
    stopped = RunReport.failed(RunError("stopped", kind="timeout"), workspace=Path("/w"))

    assert (refused.attempts, refused.workspace, refused.error) == (0, None, refused.error)
    assert (stopped.attempts, stopped.workspace) == (1, Path("/w"))


def test_what_a_report_spent() -> None:
    agent = AgentResult(text="", usage=Usage(input_tokens=10, output_tokens=5), cost_usd=0.5)
    paid = RunError("stopped at its turn limit", kind="max-turns", spent=Spent(7, 3, 0.25))

    # Each attempt's, when the runner filled them in.
    both = RunReport(agent=agent, spends=(Spent(1, 1, 0.25), Spent(10, 5, 0.5)))
    assert both.spent == Spent(11, 6, 0.75)
    # Else the agent's, else what the error says the attempt spent.
    assert RunReport(agent=agent).spent == Spent(10, 5, 0.5)
    assert RunReport(error=paid).spent == Spent(7, 3, 0.25)
    assert RunReport().spent is None


def test_an_agent_run_that_ended_in_an_error_says_what_it_spent() -> None:
    paid = RunError("stopped", kind="max-turns", spent=Spent(7, 3, None))

    ran = AgentRun(Path("/w"), error=paid)

    assert (ran.result, ran.spent) == (None, Spent(7, 3, None))
    assert AgentRun(Path("/w"), result=AgentResult(text="", cost_usd=1.0)).spent == Spent(
        None, None, 1.0
    )
