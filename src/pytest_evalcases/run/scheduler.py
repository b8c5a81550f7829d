"""Agent runs ahead of their items: up to N at once, in threads (``--eval-concurrency``,
docs/reference.md, "Concurrency").

Agent runs wait on a model API, so threads that drive the agents' subprocesses are
enough to overlap them. The scheduler is offered jobs in the order their items will be
reported and starts them in that order, never more than ``concurrency`` at a time and
never more than twice that many waiting to be taken, so memory stays bounded by N runs'
output whatever the suite's size. The caller takes each job's outcome in its own order
(:meth:`Scheduler.take`), starting it there if it was not started yet: reports come one
by one, in order, whatever order the runs end in.

A job that ends in a rate limit holds back every next start for a while
(:class:`Backoff`), and so does a retry of such a run. :meth:`Scheduler.close` cancels
every job: the commands running in them are killed (:class:`~pytest_evalcases.process.CancelToken`).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pytest_evalcases import defaults
from pytest_evalcases.errors import RunError
from pytest_evalcases.process import Cancelled, CancelToken, cancelling

T = TypeVar("T")

#: Seconds :meth:`Scheduler.close` waits for the cancelled jobs' threads to end: their
#: commands get SIGTERM and a grace of ``process.KILL_GRACE`` (2 s) before SIGKILL.
CLOSE_WAIT = 10.0


class Backoff:
    """When the next agent run may start after rate limits (docs/reference.md,
    "Rate limits"): after the delay the agent named (its "retry after"), else after
    ``pause`` seconds, doubled by each further rate limit in a row; never more than
    ``longest``. A run that ends any other way ends the row."""

    def __init__(
        self,
        pause: float = defaults.RATE_LIMIT_PAUSE,
        longest: float = defaults.RATE_LIMIT_MAX_PAUSE,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pause = pause
        self.longest = longest
        self._clock = clock
        self._lock = threading.Lock()
        self._row = 0
        self.resume_at = 0.0
        # The errors counted already (the errors themselves are immutable).
        self._counted: weakref.WeakSet[RunError] = weakref.WeakSet()

    def record(self, error: BaseException | None) -> float:
        """Count how a run ended; the pause it starts (0 when none). An error counts
        once: the scheduler and the runner's retry both see the error of a run made
        ahead."""
        with self._lock:
            if not isinstance(error, RunError):
                if error is None:
                    self._row = 0
                return 0.0
            if error.kind != "rate-limit" or error in self._counted:
                return 0.0
            self._counted.add(error)
            self._row += 1
            if error.retry_after is not None:
                pause = min(max(error.retry_after, 0.0), self.longest)
            else:
                pause = min(self.pause * 2 ** (self._row - 1), self.longest)
            self.resume_at = max(self.resume_at, self._clock() + pause)
            return pause

    def left(self) -> float:
        """Seconds until a run may start."""
        return max(0.0, self.resume_at - self._clock())

    def wait(self) -> None:
        """Sleep until a run may start."""
        while (left := self.left()) > 0:
            time.sleep(left)


@dataclass
class _Job(Generic[T]):
    work: Callable[[], T]
    token: CancelToken = field(default_factory=CancelToken)
    done: threading.Event = field(default_factory=threading.Event)
    started: bool = False
    #: When it started (``time.monotonic``).
    since: float = 0.0
    result: T | None = None
    error: BaseException | None = None
    thread: threading.Thread | None = None


class Scheduler(Generic[T]):
    """Runs offered jobs in threads, at most ``concurrency`` at once, in offer order."""

    def __init__(
        self,
        concurrency: int,
        *,
        backoff: Backoff | None = None,
        failure: Callable[[T], BaseException | None] = lambda result: None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        self.concurrency = concurrency
        self.backoff = backoff or Backoff()
        #: The error a job's result says it ended in (a run's), for the back-off.
        self.failure = failure
        self._lock = threading.Condition()
        self._jobs: dict[Hashable, _Job[T]] = {}
        self._queue: deque[Hashable] = deque()
        self._running = 0
        self._stopped = False
        self._timer: threading.Timer | None = None
        #: The most jobs that ran at the same time (for tests and benchmarks).
        self.peak = 0

    # -- offering and taking -------------------------------------------------------

    def offer(self, key: Hashable, work: Callable[[], T]) -> None:
        """Queue ``work`` under ``key`` (a key offered before is left as it is) and start
        what the limits allow."""
        with self._lock:
            if self._stopped or key in self._jobs:
                return
            self._jobs[key] = _Job(work)
            self._queue.append(key)
            self._start_more()

    @property
    def stopped(self) -> bool:
        return self._stopped

    def offered(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._jobs

    def take(self, key: Hashable) -> T:
        """The outcome of ``key``'s job, waiting for it: its result, or the exception it
        raised. A job not started yet is started now (it is the caller's next one), past
        the limits but never during a rate-limit pause."""
        with self._lock:
            job = self._jobs[key]
            if not job.started:
                while (wait := self.backoff.left()) > 0 and not self._stopped:
                    self._lock.wait(wait)
                if self._stopped:
                    raise Cancelled("the session stopped before this run started")
            # The pause over, a job that finished meanwhile may have started this one.
            if not job.started:
                self._queue.remove(key)
                self._start(key, job)
        # Waiting outside the lock; a Ctrl-C lands here (Event.wait is interruptible).
        job.done.wait()
        with self._lock:
            del self._jobs[key]
            self._start_more()
        job.token.close()
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[return-value]

    def discard(self, key: Hashable) -> None:
        """Forget ``key``'s job: cancelled if it runs, never started if it waits (its
        item will not run: deselected at the last moment, stolen by another worker)."""
        with self._lock:
            job = self._jobs.pop(key, None)
            if job is None:
                return
            if not job.started:
                self._queue.remove(key)
                job.token.close()
                return
        job.token.cancel()

    def running(self) -> list[tuple[Hashable, float]]:
        """The jobs running now and when each started (``time.monotonic``), oldest
        first."""
        with self._lock:
            found = [
                (key, job.since)
                for key, job in self._jobs.items()
                if job.started and not job.done.is_set()
            ]
        return sorted(found, key=lambda pair: pair[1])

    # -- stopping ------------------------------------------------------------------

    def stop(self) -> None:
        """Start nothing more (``-x``, ``--maxfail``): queued jobs are dropped, running
        ones run on, to be taken or closed."""
        with self._lock:
            self._stopped = True
            for key in self._queue:
                self._jobs.pop(key).token.close()
            self._queue.clear()
            if self._timer is not None:
                self._timer.cancel()
            self._lock.notify_all()

    def close(self) -> None:
        """Stop, cancel every running job (its commands are killed) and wait for their
        threads to end (at most :data:`CLOSE_WAIT` seconds)."""
        self.stop()
        with self._lock:
            running = [job for job in self._jobs.values() if job.started]
            self._jobs.clear()
        for job in running:
            job.token.cancel()
        deadline = time.monotonic() + CLOSE_WAIT
        for job in running:
            if job.thread is not None:
                job.thread.join(max(0.0, deadline - time.monotonic()))
            job.token.close()

    # -- internals (called with the lock held) ---------------------------------------

    def _start_more(self) -> None:
        waiting = sum(1 for job in self._jobs.values() if job.started and job.done.is_set())
        while (
            self._queue
            and not self._stopped
            and self._running < self.concurrency
            and self._running + waiting < 2 * self.concurrency
        ):
            pause = self.backoff.left()
            if pause > 0:
                self._wake_in(pause)
                return
            key = self._queue.popleft()
            self._start(key, self._jobs[key])

    def _start(self, key: Hashable, job: _Job[T]) -> None:
        job.started = True
        job.since = time.monotonic()
        self._running += 1
        self.peak = max(self.peak, self._running)
        job.thread = threading.Thread(
            target=self._run, args=(job,), name=f"evalcases-run-{key}", daemon=True
        )
        job.thread.start()

    def _run(self, job: _Job[T]) -> None:
        try:
            with cancelling(job.token):
                job.result = job.work()
        except BaseException as exc:  # handed to the taker as it is
            job.error = exc
        ended = job.error
        if ended is None and job.result is not None:
            ended = self.failure(job.result)
        self.backoff.record(ended)
        with self._lock:
            self._running -= 1
            job.done.set()
            self._start_more()
            self._lock.notify_all()

    def _wake_in(self, seconds: float) -> None:
        if self._timer is not None and self._timer.is_alive():
            return
        self._timer = threading.Timer(seconds, self._resume)
        self._timer.daemon = True
        self._timer.start()

    def _resume(self) -> None:
        with self._lock:
            self._timer = None
            self._start_more()
            self._lock.notify_all()
