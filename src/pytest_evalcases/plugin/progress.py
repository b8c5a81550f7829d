"""A status at the end of the terminal's current line while agents run, so that a long
agent-bound session does not look frozen (docs/reference.md, "Progress"):

    evals/refunds.yaml ..  [running: refund-logging 42s, refund-tests 12s · 7/40 done]

Shown once a run has taken :data:`SHOW_AFTER` seconds, refreshed every second, and
only while pytest waits in an eval item's setup (where the agent runs), when pytest
writes nothing: it is erased before the setup returns, so pytest's own output is
exactly as without it. Only in a terminal that
takes pytest's colours (``--color``, ``NO_COLOR``), not under ``-q``, and not on xdist
workers (they have no terminal) or their controller (xdist shows its own progress).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Generator, Hashable
from typing import Any

import pytest

from pytest_evalcases.plugin.stash import AHEAD_KEY, runs_cases

#: Seconds a run takes before the status shows.
SHOW_AFTER = 2.0
#: Seconds between two refreshes.
EVERY = 1.0


class Progress:
    """Writes and erases the status line, only between :meth:`open` and
    :meth:`close`."""

    def __init__(
        self,
        out: int,
        flush: Callable[[], None],
        room: Callable[[], int],
        running: Callable[[], list[tuple[Hashable, float]]],
        total: Callable[[], int],
    ) -> None:
        self._out = out
        self._flush = flush
        self._room = room
        self._running = running
        self._total = total
        self._lock = threading.Lock()
        self._shown = 0
        self._open = False
        self._done = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="evalcases-progress", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self.close()
        with contextlib.suppress(OSError):
            os.close(self._out)

    def open(self) -> None:
        """pytest waits on an agent and writes nothing until :meth:`close`; what it
        wrote so far reaches the terminal before the status does."""
        with self._lock:
            self._flush()
            self._open = True

    def close(self) -> None:
        """pytest may write again: the status goes first."""
        with self._lock:
            self._open = False
            self._erase()

    def finished_one(self) -> None:
        with self._lock:
            self._done += 1

    def _loop(self) -> None:
        while not self._stop.wait(EVERY):
            text = self.status(time.monotonic())
            with self._lock:
                if not self._open:
                    continue
                self._erase()
                room = self._room()
                if text and room >= 20:
                    shown = text if len(text) <= room else text[: room - 1] + "…"
                    self._write(shown)
                    self._shown = len(shown)

    def status(self, now: float) -> str:
        """``[running: a 42s, b 12s · 7/40 done]``; empty while every run is young."""
        running = self._running()
        if not running or now - running[0][1] < SHOW_AFTER:
            return ""
        names = ", ".join(f"{_name(key)} {now - since:.0f}s" for key, since in running)
        return f"  [running: {names} · {self._done}/{self._total()} done]"

    def _erase(self) -> None:
        if self._shown:
            # Back to where the status began, then clear to the end of the line.
            self._write(f"\x1b[{self._shown}D\x1b[K")
            self._shown = 0

    def _write(self, text: str) -> None:
        # Straight to the terminal's file descriptor: while the setup runs, pytest
        # captures file descriptor 1 (and sys.stdout), where the status would end up
        # in the item's captured output.
        try:
            os.write(self._out, text.encode("utf-8", "replace"))
        except OSError:
            self._stop.set()


def _name(key: Hashable) -> str:
    """An item's name from its node id (``file::name`` → ``name``)."""
    return str(key).rpartition("::")[2]


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
