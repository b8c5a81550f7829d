"""Interrupts in a pytest session (docs/reference.md, "Exit statuses of pytest"): the
handlers are :class:`pytest_evalcases.session.interrupts.Interrupts`; this hook keeps a
second Ctrl-C from cutting pytest's report of the first short."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from pytest_evalcases.session.interrupts import Interrupts


class InterruptHooks:
    """Quiets the session's :class:`Interrupts` while pytest reports an interrupt."""

    def __init__(self, interrupts: Interrupts) -> None:
        self.interrupts = interrupts

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_keyboard_interrupt(self) -> Generator[None, None, None]:
        # pytest records the interrupted status only after this hook: a second Ctrl-C
        # inside it (its traceback repr takes up to half a second) would end the
        # session as if nothing had happened.
        with self.interrupts.quiet():
            return (yield)
