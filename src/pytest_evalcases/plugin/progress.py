"""A status at the end of the terminal's current line while agents run, so that a long
agent-bound session does not look frozen (docs/reference.md, "Progress"):

    evals/refunds.yaml ..  [running: refund-logging 42s, refund-tests 12s · 7/40 done]

Shown once a run has taken
:data:`pytest_evalcases.report.progress.SHOW_AFTER` seconds, refreshed every second, and
only while pytest waits in an eval item's setup (where the agent runs), when pytest
writes nothing: it is erased before the setup returns, so pytest's own output is
exactly as without it. Only in a terminal that
takes pytest's colours (``--color``, ``NO_COLOR``), not under ``-q``, and not on xdist
workers (they have no terminal) or their controller (xdist shows its own progress).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Generator, Hashable
from typing import Any

import pytest

from pytest_evalcases.plugin.stash import AHEAD_KEY, runs_cases
from pytest_evalcases.report.progress import Progress


class ProgressHooks:
    """Feeds :class:`Progress` from the session: which eval items run, and when pytest
    is about to write."""

    def __init__(self, config: pytest.Config, progress: Progress) -> None:
        self.config = config
        self.progress = progress
        self._current: dict[str, float] = {}
        self._lock = threading.Lock()

    def running(self) -> list[tuple[Hashable, float]]:
        """The runs the scheduler has started ahead, else the item being set up."""
        ahead = self.config.stash.get(AHEAD_KEY, None)
        if ahead is not None:
            return ahead.running()
        with self._lock:
            return sorted(self._current.items(), key=lambda pair: pair[1])

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        from pytest_evalcases.plugin.nodes import EvalItem

        if not isinstance(item, EvalItem):
            return (yield)
        with self._lock:
            self._current[item.nodeid] = time.monotonic()
        self.progress.open()
        try:
            return (yield)
        finally:
            self.progress.close()
            with self._lock:
                self._current.pop(item.nodeid, None)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logfinish(self) -> None:
        self.progress.finished_one()

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self) -> None:
        self.progress.stop()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self.progress.stop()


def install(config: pytest.Config, total: int) -> None:
    """Show the status in this session of ``total`` items where it can be shown (see
    the module)."""
    reporter: Any = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or config.option.verbose < 0 or not runs_cases(config):
        return
    if hasattr(config, "workerinput") or getattr(config.option, "numprocesses", None):
        return
    writer = reporter._tw
    out = getattr(writer, "_file", None)
    if not writer.hasmarkup or out is None:
        return
    try:
        # Outside any test phase pytest's capture is suspended: this is the terminal.
        terminal = os.dup(out.fileno())
    except (OSError, ValueError, AttributeError):
        return
    hooks: ProgressHooks

    def room() -> int:
        return int(writer.fullwidth - writer.width_of_current_line - 1)

    progress = Progress(
        terminal,
        writer.flush,
        room,
        lambda: hooks.running(),
        lambda: total,
    )
    hooks = ProgressHooks(config, progress)
    config.pluginmanager.register(hooks, "evalcases-progress")
    progress.start()
