"""``--eval-concurrency N``: the agent runs of the next items start ahead of them, up to
N at once, while pytest reports the items one by one in its own order
(docs/reference.md, "Concurrency").

When an eval item is set up, the items this process will run next are looked up (the
rest of ``session.items``; under xdist, the indices the controller sent this worker) and
their agent runs offered to the :class:`~pytest_evalcases.run.scheduler.Scheduler`,
which starts them in that order. The item then takes its own run from the scheduler
and grades it in the main thread, exactly as a serial run would. ``-x``, ``--maxfail``,
Ctrl-C and SIGTERM close the scheduler: nothing more starts and the running agents are
killed with everything they started.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_evalcases.errors import CaseFileError, RunError, UsageError
from pytest_evalcases.kinds import Spent
from pytest_evalcases.plugin import budget
from pytest_evalcases.plugin.stash import runs_cases, session_of

if TYPE_CHECKING:
    from pytest_evalcases.plugin.nodes import EvalItem
    from pytest_evalcases.run.runner import AgentRun
    from pytest_evalcases.run.scheduler import Scheduler


#: Markers that may skip an item in its setup: its run is not started ahead.
_SKIPPING = ("skip", "skipif", "xfail")


class Ahead:
    """The scheduler of one pytest process and the items it runs ahead."""

    def __init__(self, config: pytest.Config, concurrency: int) -> None:
        from pytest_evalcases.run.scheduler import Scheduler

        state = session_of(config)
        self.config = config
        self.scheduler: Scheduler[AgentRun] = Scheduler(
            concurrency, backoff=state.backoff, failure=lambda ran: ran.error
        )
        self._order: dict[str, int] | None = None
        self._worker = _worker_queue(config)

    def first_run(self, item: EvalItem) -> Callable[[], AgentRun] | None:
        """The item's own agent run, started ahead, with the next items' runs offered;
        ``None`` when the item runs its agent itself (it could not be started ahead)."""
        self.fill(item)
        key = item.nodeid
        if not self.scheduler.offered(key):
            return None
        return lambda: self.scheduler.take(key)

    def fill(self, current: EvalItem) -> None:
        """Offer the runs of ``current`` and of the next items, as far as twice the
        concurrency; forget runs offered for items this process will no longer run."""
        from pytest_evalcases.plugin.nodes import EvalItem

        wanted: list[EvalItem] = []
        for item in self._upcoming(current):
            if len(wanted) >= 2 * self.scheduler.concurrency:
                break
            if isinstance(item, EvalItem) and _runs_agent(item):
                wanted.append(item)
        for item in wanted:
            if not self.scheduler.stopped and not self.scheduler.offered(item.nodeid):
                self.scheduler.offer(item.nodeid, _work(item))

    def close(self) -> None:
        self.scheduler.close()

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
        yield from items[start:]


def _worker_queue(config: pytest.Config) -> Callable[[], list[int]] | None:
    """Under xdist, the indices of the items this worker was sent and has not run yet
    (the next one first); ``None`` outside a worker, none under ``--dist worksteal``.

    Read from xdist's worker loop, which exposes no interface for it: where its shape is
    not the expected one, no run starts ahead of its item (``--eval-concurrency`` then
    gives nothing on workers)."""
    if not hasattr(config, "workerinput"):
        return None
    if config.getoption("dist", None) == "worksteal":
        # Items still queued may be stolen by another worker, which would run the
        # agent a second time: under worksteal each run starts with its own item.
        return lambda: []
    for plugin in config.pluginmanager.get_plugins():
        torun = getattr(plugin, "torun", None)
        if torun is None or not hasattr(plugin, "nextitem_index"):
            continue
        if hasattr(torun, "lock") or (hasattr(torun, "mutex") and hasattr(torun, "queue")):
            return functools.partial(_queued, plugin)
    return lambda: []


def _queued(interactor: Any) -> list[int]:
    following = interactor.nextitem_index
    torun = interactor.torun
    if hasattr(torun, "lock"):
        # xdist 3.6 and later: a queue that can be read under its lock.
        with torun.lock() as queue:
            rest = [i for i in queue if isinstance(i, int)]
    else:
        # xdist 3.5: a queue.Queue.
        with torun.mutex:
            rest = [i for i in torun.queue if isinstance(i, int)]
    return ([following] if isinstance(following, int) else []) + rest


def _runs_agent(item: EvalItem) -> bool:
    """Whether the item's setup will start an agent run that can be made ahead."""
    state = session_of(item.config)
    if item.variant.graded_dir is not None or state.needs_agent(item.variant):
        return False
    if item.variant.name in state.unavailable:
        return False
    if any(item.get_closest_marker(name) is not None for name in _SKIPPING):
        return False
    try:
        case = item.case
        state.sandbox  # noqa: B018 - an unusable sandbox errors in the item's setup
    except (CaseFileError, UsageError):
        return False
    elsewhere = case.other_agent(state.agent_name(item.variant))
    return case.prompt is not None and not case.quarantine and not elsewhere


def _work(item: EvalItem) -> Callable[[], AgentRun]:
    """The item's agent run, as a job for a scheduler thread: everything it needs is
    read here, in the main thread."""
    from pytest_evalcases.run.invoke import run_agent_phase

    state = session_of(item.config)
    case, variant = item.run_case(), item.variant
    context = state.context(variant)
    workspace = state.workspaces.new(item.name)
    name = item.run_name()
    config = item.config

    def work() -> AgentRun:
        # Asked as the run starts, in its thread: the runs started before it count.
        try:
            budget.admit(config)
        except RunError:
            shutil.rmtree(workspace, ignore_errors=True)
            raise
        spent: Spent | None = None
        try:
            ran = run_agent_phase(case, variant, context, workspace, record_as=name)
            spent = ran.spent
        finally:
            budget.finished(config, spent)
        return ran

    return work


def concurrency_of(config: pytest.Config) -> Ahead | None:
    """The session's :class:`Ahead`, made when first asked for; ``None`` without
    ``--eval-concurrency`` above 1, in a session that runs no case, and under
    ``--eval-regrade``, which runs no agent."""
    state = session_of(config)
    settings = state.settings
    if settings.concurrency <= 1 or settings.regrade is not None or not runs_cases(config):
        return None
    ahead = config.stash.get(AHEAD_KEY, None)
    if ahead is None:
        ahead = Ahead(config, state.settings.concurrency)
        config.stash[AHEAD_KEY] = ahead
    return ahead


def close(config: pytest.Config) -> None:
    """Stop starting runs and kill the running ones (the session stops or ends)."""
    ahead = config.stash.get(AHEAD_KEY, None)
    if ahead is not None:
        ahead.close()


AHEAD_KEY = pytest.StashKey[Ahead]()


class AheadHooks:
    """Closes the scheduler as soon as the session stops: after the item that ``-x`` or
    ``--maxfail`` stops at, at Ctrl-C or SIGTERM, and at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        try:
            return (yield)
        finally:
            if item.session.shouldfail or item.session.shouldstop:
                close(self.config)

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self) -> None:
        close(self.config)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self) -> Generator[None, None, None]:
        # Before the results are written: the runs of items that will not run die now.
        close(self.config)
        return (yield)


class DeepQueues:
    """Under xdist's ``load`` distribution, each worker is sent enough items to keep
    its ``--eval-concurrency`` runs busy: xdist's own scheduler keeps two items queued
    on a worker whose tests take long, which would leave all but two runs idle."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getoption("dist", None) != "load":
            return None
        from pytest_evalcases.plugin.integrations import deep_load_scheduling

        return deep_load_scheduling(config, log, 2 * self.concurrency)
