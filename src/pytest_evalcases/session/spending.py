"""What a session with ``--eval-budget`` counted of its runs (docs/budget.md): the runs
the budget refused, what each xdist worker's runs spent, the agents that report no
price, and the summary's lines. The budget itself is :mod:`pytest_evalcases.run.budget`;
:mod:`pytest_evalcases.plugin.budget` feeds this from the reports."""

from __future__ import annotations

from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.run.budget import Budget, Spend, not_started, summary_lines
from pytest_evalcases.session.state import EvalSession


class Spending:
    """The account of the reported runs, kept where the reports arrive (the controller
    under xdist; a worker counts only the runs the budget refused)."""

    def __init__(self, state: EvalSession, budget: Budget, *, worker: bool) -> None:
        self.state = state
        self.budget = budget
        self.worker = worker
        self.refused = 0
        #: What the runs reported, by the xdist worker that ran them ("" without xdist).
        self.workers: dict[str, Spend] = {}
        self.unpriced_agents: set[str] = set()

    def count(self, record: RunRecord, worker: str) -> bool:
        """Count a reported run, which the xdist worker ``worker`` ran; whether what
        was spent changed."""
        if record.outcome == "skipped" or record.kind == "file":
            return False
        if not_started(record.error_kind, record.attempts):
            self.refused += 1
            if self.refused == 1 and not self.worker:
                reason = (record.error or "budget spent").split(":", 1)[0]
                self.state.incomplete.append(f"{reason}: the runs after it did not start")
            return False
        if self.worker:
            return False
        tokens = None
        if record.tokens_in is not None or record.tokens_out is not None:
            tokens = (record.tokens_in or 0) + (record.tokens_out or 0)
        self.workers[worker] = self.workers.get(worker, Spend()).add(record.cost_usd, tokens)
        if record.cost_usd is None:
            self.unpriced_agents.add(_agent_of(self.state, record.variant))
        return True

    def lines(self) -> list[str]:
        """What the budget counted, for the end of the summary."""
        spend = Spend()
        for part in self.workers.values():
            spend = spend.plus(part)
        budget = self.budget
        return summary_lines(
            budget.limit, spend, self.refused, self.unpriced_agents, budget.token_price
        )


def _agent_of(state: EvalSession, variant: str) -> str:
    for candidate in state.settings.variants:
        if candidate.name == variant:
            return state.agent_name(candidate) or "the agent"
    return state.agent.name if state.agent is not None else "the agent"
