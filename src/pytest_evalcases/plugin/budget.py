"""``--eval-budget USD`` in a pytest session (docs/budget.md): the account kept from the
reports, and the summary's line. Each run asks the account before it starts
(:mod:`pytest_evalcases.session.orchestration`); the core is
:mod:`pytest_evalcases.run.budget`.

Under xdist the controller keeps the account (it sees every report) and rewrites a small
file after each one; the workers, told its path with the rest of what the controller
decided (:class:`~pytest_evalcases.session.places.WorkerInput`), read it before starting
a run.
"""

from __future__ import annotations

import functools

import pytest

from pytest_evalcases.plugin.nodes import EvalItem
from pytest_evalcases.plugin.stash import BUDGET_KEY, SPEND_FILE_KEY, is_worker
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.run.budget import Budget, SpendFile
from pytest_evalcases.session.spending import Spending
from pytest_evalcases.session.state import EvalSession


def register(config: pytest.Config, state: EvalSession) -> None:
    """Keep the account of a session with a budget; nothing without one, and nothing
    under ``--eval-regrade``, which starts no agent."""
    limit = state.settings.budget
    if limit is None or state.settings.regrade is not None:
        return
    budget = Budget(limit, token_price=state.settings.token_price)
    spend_file: SpendFile | None = None
    workerinput = getattr(config, "workerinput", None)
    if state.settings.spend_file is not None and workerinput is not None:
        others = SpendFile(state.settings.spend_file).others
        budget.others = functools.partial(others, str(workerinput.get("workerid", "")))
    elif workerinput is None and _distributed(config):
        spend_file = SpendFile.create()
        config.add_cleanup(spend_file.remove)
        # Handed to the workers with the rest of the controller's decisions (xdist hooks).
        config.stash[SPEND_FILE_KEY] = spend_file.path
    config.stash[BUDGET_KEY] = budget
    config.pluginmanager.register(
        BudgetHooks(config, state, budget, spend_file), "evalcases-budget"
    )


def _distributed(config: pytest.Config) -> bool:
    """Whether this controller will start xdist workers."""
    if not config.pluginmanager.hasplugin("xdist"):
        return False
    numprocesses = getattr(config.option, "numprocesses", None)
    return bool(numprocesses) or bool(getattr(config.option, "tx", None))


class BudgetHooks:
    """Counts each reported run in the session's :class:`Spending`; says in the
    summary what the budget counted."""

    def __init__(
        self,
        config: pytest.Config,
        state: EvalSession,
        budget: Budget,
        spend_file: SpendFile | None,
    ) -> None:
        self.config = config
        self.state = state
        self.budget = budget
        self.spend_file = spend_file
        self.spending = Spending(state, budget, worker=is_worker(config))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.budget.total = sum(1 for item in session.items if isinstance(item, EvalItem))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "evalcases", None)
        if data is None:
            return
        # On the controller, xdist's report names the worker it came from.
        node = getattr(report, "node", None)
        worker = str(getattr(getattr(node, "gateway", None), "id", "") or "")
        spent = self.spending.count(RunRecord.from_dict(data), worker)
        if spent and self.spend_file is not None:
            self.spend_file.write(self.spending.workers)

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if is_worker(self.config) or not self.state.records:
            return
        for line in self.spending.lines():
            terminalreporter.write_line(line)
