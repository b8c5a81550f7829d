"""``--eval-concurrency N``: the agent runs of the next items start ahead of them, up to
N at once, while pytest reports the items one by one in its own order
(docs/reference.md, "Concurrency").

As an eval item is set up, the items this process will run next are looked up (the
rest of ``session.items``; under xdist, the indices the controller sent this worker) and
their agent runs offered to the :class:`~pytest_evalcases.run.scheduler.Scheduler`,
which starts them in that order. The item then takes its own run from the scheduler
(:class:`~pytest_evalcases.session.orchestration.CaseRun`) and grades it in the main
thread, exactly as a serial run would. ``-x``, ``--maxfail``, Ctrl-C and SIGTERM close
the scheduler: nothing more starts and the running agents are killed with everything
they started.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING

import pytest

from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.plugin.nodes import EvalItem
from pytest_evalcases.plugin.stash import AHEAD_KEY, BUDGET_KEY, runs_cases, session_of
from pytest_evalcases.run.scheduler import Scheduler
from pytest_evalcases.session import orchestration
from pytest_evalcases.session.workerqueue import worker_queue

if TYPE_CHECKING:
    from pytest_evalcases.run.runner import AgentRun

#: Markers that may skip an item in its setup: its run is not started ahead.
_SKIPPING = ("skip", "skipif", "xfail")


class AheadHooks:
    """Offers the runs of the next items as each eval item is set up; closes the
    scheduler as soon as the session stops: after the item that ``-x`` or ``--maxfail``
    stops at, at Ctrl-C or SIGTERM, and at the end. Registered only with
    ``--eval-concurrency`` above 1 and no ``--eval-regrade``, which runs no agent."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._order: dict[str, int] | None = None
        self._worker: Callable[[], list[int]] | None = None

    def scheduler(self) -> Scheduler[AgentRun]:
        """The scheduler of this process, made when the first eval item is set up (and
        xdist's worker loop, read by :func:`_worker_queue`, is running)."""
        scheduler = self.config.stash.get(AHEAD_KEY, None)
        if scheduler is None:
            state = session_of(self.config)
            scheduler = Scheduler(
                state.settings.concurrency, backoff=state.backoff, failure=lambda ran: ran.error
            )
            self.config.stash[AHEAD_KEY] = scheduler
            self._worker = _worker_queue(self.config)
        return scheduler

    # tryfirst: the item's own run is offered before its setup takes it.
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if isinstance(item, EvalItem) and runs_cases(self.config):
            self.fill(item)

    def fill(self, current: EvalItem) -> None:
        """Offer the runs of ``current`` and of the next items, as far as twice the
        concurrency."""
        scheduler = self.scheduler()
        state = session_of(self.config)
        budget = self.config.stash.get(BUDGET_KEY, None)
        wanted: list[EvalItem] = []
        for item in self._upcoming(current):
            if len(wanted) >= 2 * scheduler.concurrency:
                break
            if isinstance(item, EvalItem) and _runs_agent(item):
                wanted.append(item)
        for item in wanted:
            if not scheduler.stopped and not scheduler.offered(item.nodeid):
                scheduler.offer(
                    item.nodeid, orchestration.start_ahead(state, item.planned(), budget)
                )

    def close(self) -> None:
        """Stop starting runs and kill the running ones (the session stops or ends)."""
        scheduler = self.config.stash.get(AHEAD_KEY, None)
        if scheduler is not None:
            scheduler.close()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        try:
            return (yield)
        finally:
            if item.session.shouldfail or item.session.shouldstop:
                self.close()

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self) -> None:
        self.close()

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self) -> Generator[None, None, None]:
        # Before the results are written: the runs of items that will not run die now.
        self.close()
        return (yield)

    def _upcoming(self, current: pytest.Item) -> Iterator[pytest.Item]:
        items = current.session.items
        if self._worker is not None:
            yield current
            for index in self._worker():
                if 0 <= index < len(items):
                    yield items[index]
            return
        if self._order is None:
            self._order = {item.nodeid: i for i, item in enumerate(items)}
        start = self._order.get(current.nodeid)
        if start is None:
            yield current
            return
        # By index: a slice would copy the rest of the session's items for every item.
        for index in range(start, len(items)):
            yield items[index]


def _worker_queue(config: pytest.Config) -> Callable[[], list[int]] | None:
    """Under xdist, the indices of the items this worker was sent and has not run yet
    (:func:`pytest_evalcases.session.workerqueue.worker_queue`); ``None`` outside a
    worker."""
    if not hasattr(config, "workerinput"):
        return None
    return worker_queue(config.pluginmanager.get_plugins(), config.getoption("dist", None))


def _runs_agent(item: EvalItem) -> bool:
    """Whether the item's setup will start an agent run that can be made ahead."""
    if any(item.get_closest_marker(name) is not None for name in _SKIPPING):
        return False
    try:
        case = item.case
    except CaseFileError:
        return False
    return orchestration.runs_ahead(session_of(item.config), case, item.variant)
