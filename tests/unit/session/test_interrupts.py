"""The interrupt handlers of a session: real signals sent to this process."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from pytest_evalcases.session.interrupts import Interrupts


@pytest.fixture
def interrupts() -> Iterator[tuple[Interrupts, list[str]]]:
    """Handlers installed as a session does, over Python's own (the test session's
    handlers are put aside meanwhile); the list records each ``on_interrupt``."""
    seen: list[str] = []
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    handlers = Interrupts(on_interrupt=lambda: seen.append("interrupted"))
    handlers.install()
    try:
        yield handlers, seen
    finally:
        handlers.restore()
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def deliver(sig: signal.Signals) -> None:
    """Send ``sig`` to this process; Python runs its handler before the next line."""
    os.kill(os.getpid(), sig)


def test_the_first_interrupt_is_recorded_as_it_arrives(
    interrupts: tuple[Interrupts, list[str]],
) -> None:
    handlers, seen = interrupts
    with pytest.raises(KeyboardInterrupt):
        deliver(signal.SIGINT)
    assert (handlers.received, seen) == (signal.SIGINT, ["interrupted"])
    # A second Ctrl-C interrupts again (a hung teardown can be left), recorded once.
    with pytest.raises(KeyboardInterrupt):
        deliver(signal.SIGINT)
    assert seen == ["interrupted"]


def test_a_second_sigterm_is_ignored_and_quiet_ignores_everything(
    interrupts: tuple[Interrupts, list[str]],
) -> None:
    handlers, seen = interrupts
    with pytest.raises(KeyboardInterrupt, match="SIGTERM received"):
        deliver(signal.SIGTERM)
    deliver(signal.SIGTERM)
    deliver(signal.SIGHUP)
    with handlers.quiet():
        deliver(signal.SIGINT)
    assert seen == ["interrupted"]


def test_restore_puts_pythons_handler_back(interrupts: tuple[Interrupts, list[str]]) -> None:
    handlers, _ = interrupts
    assert signal.getsignal(signal.SIGINT) != signal.default_int_handler
    handlers.restore()
    assert signal.getsignal(signal.SIGINT) == signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
