"""The time limit of the built-in checks that run inside pytest (docs/case-format.md,
"Time limits").

A command check has its own ``timeout``. Every other built-in check runs :func:`within`
a deadline: its glob walks and file reads call :func:`tick` as they go, and its regular
expressions go through :func:`search`.

Regular expressions are the hard part. CPython's ``re`` holds the GIL for a whole search
and looks only at signals (every few thousand steps), so no thread can stop one: a
watchdog thread does not even get to run. On the main thread a ``SIGALRM`` timer does it,
its handler raising inside the search; the timer and handler of someone else (the signal
method of pytest-timeout) are handed back afterwards, and their alarm still goes off in
time. On any other thread (a plugin that runs tests in threads) a search runs in a child
Python process, killed at the deadline.
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from types import FrameType
from typing import TypeVar

from pytest_evalcases import process
from pytest_evalcases.errors import RunError
from pytest_evalcases.kinds import ErrorKind

#: The error kind of a check that ran out of time (docs/agents.md, "Failures and errors").
CHECK_TIMEOUT: ErrorKind = "check-timeout"

T = TypeVar("T")
#: Where a pattern matched: ``(start, end)``, or ``None``.
Span = tuple[int, int] | None


class _Expired(BaseException):
    """The deadline passed. A ``BaseException``, so that no ``except Exception`` on the
    way out swallows it; :func:`within` turns it into a :class:`RunError`."""


@dataclass
class Deadline:
    """When the current check must be done, and what it is doing (for the message)."""

    seconds: float
    end: float
    doing: str = ""
    #: Whether a ``SIGALRM`` timer is set to interrupt a search in this process.
    interrupts: bool = False

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def check(self) -> None:
        if time.monotonic() >= self.end:
            raise _Expired


_current: ContextVar[Deadline | None] = ContextVar("evalcases_check_deadline", default=None)


def within(seconds: float, what: str, run: Callable[[], T]) -> T:
    """``run()``, stopped with a ``check-timeout`` :class:`RunError` that names ``what``
    (the check) when it takes more than ``seconds``."""
    deadline = Deadline(seconds, time.monotonic() + seconds)
    token = _current.set(deadline)
    try:
        with _alarm(deadline):
            return run()
    except _Expired:
        doing = f" while {deadline.doing}" if deadline.doing else ""
        raise RunError(
            f"{what} did not finish within {seconds:g} s{doing}, the time limit of a check "
            'other than a command (docs/case-format.md, "Time limits"); a pattern that '
            "backtracks without end, such as '(a+)+$', is the usual cause",
            kind=CHECK_TIMEOUT,
        ) from None
    finally:
        _current.reset(token)


def tick(doing: str = "") -> None:
    """Within a deadline: stop when it has passed; ``doing`` says what the check does now."""
    deadline = _current.get()
    if deadline is None:
        return
    if doing:
        deadline.doing = doing
    deadline.check()


def search(rx: re.Pattern[str], texts: Sequence[str], *, first: bool = False) -> list[Span]:
    """The span of ``rx``'s first match in each of ``texts`` (``None`` where it has none);
    with ``first``, only up to the first text that matches. Stopped at the deadline."""
    deadline = _current.get()
    if deadline is None or deadline.interrupts:
        spans: list[Span] = []
        for text in texts:
            m = rx.search(text)
            spans.append(m.span() if m else None)
            if m and first:
                break
        return spans
    return _search_in_child(rx, texts, first, deadline)


_CHILD = """\
import json, re, sys
job = json.load(sys.stdin)
rx = re.compile(job["pattern"], job["flags"])
spans = []
for text in job["texts"]:
    m = rx.search(text)
    spans.append(m.span() if m else None)
    if m and job["first"]:
        break
json.dump(spans, sys.stdout)
"""


def _search_in_child(
    rx: re.Pattern[str], texts: Sequence[str], first: bool, deadline: Deadline
) -> list[Span]:
    deadline.check()
    # ASCII JSON: the texts may hold lone surrogates, which UTF-8 cannot encode.
    job = json.dumps(
        {"pattern": rx.pattern, "flags": rx.flags, "texts": list(texts), "first": first}
    )
    result = process.run(
        [sys.executable, "-I", "-S", "-c", _CHILD],
        cwd="/",
        stdin=job,
        timeout=max(deadline.remaining(), 0.001),
        max_output=1024 * 1024,
    )
    if result.timed_out:
        raise _Expired
    if result.returncode != 0:
        raise RunError(f"the search for {rx.pattern!r} failed: {result.said()}")
    return [(span[0], span[1]) if span else None for span in json.loads(result.stdout)]


@contextlib.contextmanager
def _alarm(deadline: Deadline) -> Iterator[None]:
    """On the main thread, a ``SIGALRM`` timer that interrupts a search at the deadline."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    start = time.monotonic()
    theirs = signal.getsignal(signal.SIGALRM)
    if theirs is None:  # a handler set outside Python, which could not be put back
        yield
        return
    their_delay, their_interval = signal.getitimer(signal.ITIMER_REAL)
    their_alarm_went = False

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        nonlocal their_alarm_went
        if deadline.interrupts and time.monotonic() >= deadline.end:
            deadline.interrupts = False
            raise _Expired
        if their_delay and not their_alarm_went and time.monotonic() - start >= their_delay:
            their_alarm_went = True
            if callable(theirs):
                theirs(signum, frame)
        if deadline.interrupts:
            _arm(deadline, start, their_delay if not their_alarm_went else 0.0)

    try:
        signal.signal(signal.SIGALRM, on_alarm)
    except ValueError:  # not the main interpreter
        yield
        return
    deadline.interrupts = True
    try:
        _arm(deadline, start, their_delay)
        yield
    finally:
        deadline.interrupts = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, theirs)
        if their_delay and not their_alarm_went:
            left = their_delay - (time.monotonic() - start)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001), their_interval)
        elif their_interval:
            signal.setitimer(signal.ITIMER_REAL, their_interval, their_interval)


def _arm(deadline: Deadline, start: float, their_delay: float) -> None:
    """The timer at our deadline, or at the earlier alarm of the timer we replaced."""
    delay = deadline.remaining()
    if their_delay:
        delay = min(delay, their_delay - (time.monotonic() - start))
    signal.setitimer(signal.ITIMER_REAL, max(delay, 0.001))
