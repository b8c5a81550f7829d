"""SIGTERM and SIGHUP end a session the way Ctrl-C does (docs/reference.md, "Exit
statuses of pytest"): what a CI runner sends when a job is cancelled, and what a closed terminal
sends, become a ``KeyboardInterrupt``. So the run in progress kills its agent's whole
process tree (and sandbox), the results file is written as incomplete, the summary is
printed and pytest exits with status 2, instead of dying at once with every agent left
running and no record of what was done.

Only the first signal interrupts: a second one while the session winds down is ignored,
so that the cleanup itself is not cut short. A handler someone else installed (another
plugin, the program embedding pytest) is left alone.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

#: The signals that interrupt like Ctrl-C.
SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Interrupts:
    """Installs the handlers for one session and puts the old ones back afterwards."""

    def __init__(self) -> None:
        self.previous: dict[signal.Signals, object] = {}
        self.received: signal.Signals | None = None

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in SIGNALS:
            if signal.getsignal(sig) == signal.SIG_DFL:
                self.previous[sig] = signal.signal(sig, self._interrupt)

    def _interrupt(self, signum: int, frame: FrameType | None) -> None:
        if self.received is not None:
            return
        self.received = signal.Signals(signum)
        raise KeyboardInterrupt(f"{self.received.name} received")

    def restore(self) -> None:
        for sig, handler in self.previous.items():
            if signal.getsignal(sig) == self._interrupt:
                signal.signal(sig, handler)  # type: ignore[arg-type]
        self.previous.clear()
