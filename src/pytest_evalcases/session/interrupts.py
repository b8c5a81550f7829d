"""Interrupts (docs/reference.md, "Exit statuses of pytest"): Ctrl-C, and SIGTERM and
SIGHUP, which end a session the way Ctrl-C does. What a CI runner sends when a job is
cancelled, and what a closed terminal sends, become a ``KeyboardInterrupt``. So the run
in progress kills its agent's whole process tree (and sandbox), the results file is
written as incomplete, the summary is printed and pytest exits with status 2, instead
of dying at once with every agent left running and no record of what was done.

Every interrupt is recorded in the session the moment it arrives, before pytest sees
the ``KeyboardInterrupt``: a session cut short again while it winds down (a second
Ctrl-C while pytest reports the first) can then never call the run complete, nor pass.

Only the first SIGTERM or SIGHUP interrupts: another one while the session winds down
is ignored, so that the cleanup itself is not cut short. A second Ctrl-C still
interrupts (a teardown that hangs can be left), except inside :meth:`Interrupts.quiet`:
while pytest reports the first interrupt, and while the results file is written, both
short. A handler someone else installed (another plugin, the program embedding pytest)
is left alone.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

#: The signals that interrupt like Ctrl-C.
SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Interrupts:
    """Installs the handlers for one session and puts the old ones back afterwards
    (:class:`pytest_evalcases.plugin.signals.InterruptHooks` quiets them while pytest
    reports an interrupt).

    ``on_interrupt`` is called once, in the signal handler, when the first interrupt
    arrives.
    """

    def __init__(self, on_interrupt: Callable[[], None] = lambda: None) -> None:
        self.on_interrupt = on_interrupt
        self.previous: dict[signal.Signals, object] = {}
        self.received: signal.Signals | None = None
        self._quiet = 0

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, *SIGNALS):
            # Python's own Ctrl-C handler, or no handler at all: nobody else's.
            default = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
            if signal.getsignal(sig) == default:
                self.previous[sig] = signal.signal(sig, self._interrupt)

    def _interrupt(self, signum: int, frame: FrameType | None) -> None:
        if self._quiet:
            return
        sig = signal.Signals(signum)
        if self.received is None:
            self.received = sig
            self.on_interrupt()
        elif sig != signal.SIGINT:
            return
        if sig == signal.SIGINT:
            raise KeyboardInterrupt
        raise KeyboardInterrupt(f"{sig.name} received")

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """Ignore interrupts for the block: what it does (report an interrupt, write
        the results file once every run is over) takes milliseconds, and what it
        records would otherwise be lost."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    def restore(self) -> None:
        for sig, handler in self.previous.items():
            if signal.getsignal(sig) == self._interrupt:
                signal.signal(sig, handler)  # type: ignore[arg-type]
        self.previous.clear()
