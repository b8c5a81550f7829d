"""run/deadline.py: the time limit of checks beside a SIGALRM timer of someone else's
(pytest-timeout's ``signal`` method keeps one running during a test)."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from types import FrameType

import pytest

from pytest_evalcases.errors import RunError
from pytest_evalcases.run.deadline import search, within

BACKTRACKING = re.compile("(a+)+$")
TEXT = "a" * 32 + "!"


class TheirTimeout(Exception):
    """What the other plugin's handler raises."""


def their_handler(signum: int, frame: FrameType | None) -> None:
    raise TheirTimeout


@pytest.fixture
def their_alarm() -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, their_handler)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def test_their_earlier_alarm_still_goes_off_inside_a_check(their_alarm: None) -> None:
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    with pytest.raises(TheirTimeout):
        within(60, "the check", lambda: search(BACKTRACKING, [TEXT]))
    assert signal.getsignal(signal.SIGALRM) is their_handler


def test_their_later_alarm_is_handed_back(their_alarm: None) -> None:
    signal.setitimer(signal.ITIMER_REAL, 100)
    with pytest.raises(RunError) as raised:
        within(0.5, "the check", lambda: search(BACKTRACKING, [TEXT]))
    assert raised.value.kind == "check-timeout"
    assert signal.getsignal(signal.SIGALRM) is their_handler
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    assert 60 < left <= 100
