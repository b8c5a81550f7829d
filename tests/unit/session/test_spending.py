"""session/spending.py: what a session's budget counted of the reported runs (the
sessions: tests/plugin/test_budget.py)."""

from __future__ import annotations

from pathlib import Path

from pytest_evalcases.run.budget import Budget
from pytest_evalcases.session.settings import Settings
from pytest_evalcases.session.spending import Spending
from pytest_evalcases.session.state import EvalSession
from tests.helpers.results import rec


def test_the_controller_adds_up_each_workers_runs_and_counts_the_refused_once(
    tmp_path: Path,
) -> None:
    state = EvalSession(Settings(rootdir=tmp_path), agent=None)
    spending = Spending(state, Budget(1.0), worker=False)

    assert spending.count(rec("a", "passed", cost_usd=0.25, attempts=1), "gw0")
    assert spending.count(rec("b", "passed", cost_usd=0.5, attempts=1), "gw1")
    assert spending.count(rec("c", "failed", attempts=1), "gw0")
    refused = rec("d", "error", error_kind="budget", error="budget spent: $1", attempts=0)
    assert not spending.count(refused, "gw1")
    assert not spending.count(refused, "gw1")
    assert not spending.count(rec("e", "skipped"), "gw0")

    assert spending.refused == 2
    assert state.incomplete == ["budget spent: the runs after it did not start"]
    assert set(spending.workers) == {"gw0", "gw1"}
    assert spending.unpriced_agents == {"the agent"}
    assert any("$0.75" in line for line in spending.lines())


def test_a_worker_counts_only_what_the_budget_refused(tmp_path: Path) -> None:
    state = EvalSession(Settings(rootdir=tmp_path), agent=None)
    spending = Spending(state, Budget(1.0), worker=True)
    refused = rec("d", "error", error_kind="budget", attempts=0)

    assert not spending.count(rec("a", "passed", cost_usd=0.25, attempts=1), "")
    assert not spending.count(refused, "")

    assert (spending.refused, spending.workers, state.incomplete) == (1, {}, [])
