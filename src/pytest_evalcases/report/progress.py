"""The status line that :mod:`pytest_evalcases.plugin.progress` shows at the end of the
terminal's current line while agents run (docs/reference.md, "Progress"):

    evals/refunds.yaml ..  [running: refund-logging 42s, refund-tests 12s · 7/40 done]

Plain: it writes to a file descriptor it is given and asks callables what runs, how
many items there are and how much room the line has left.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Hashable

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
