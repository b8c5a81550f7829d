"""The scheduler of --eval-concurrency: order, limits, stopping, rate-limit back-off."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from pathlib import Path

import pytest

from pytest_evalcases import process
from pytest_evalcases.errors import AgentError, RunError
from pytest_evalcases.run.scheduler import Backoff, Scheduler, _Job


class Probe:
    """Jobs that note when they start and end, and wait for a release."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.peak = 0
        self.started: list[str] = []
        self.times: dict[str, float] = {}
        self.ends: dict[str, float] = {}
        self.release = threading.Event()

    def job(
        self, name: str, *, hold: bool = True, fail: BaseException | None = None
    ) -> Callable[[], str]:
        def work() -> str:
            with self.lock:
                self.running += 1
                self.peak = max(self.peak, self.running)
                self.started.append(name)
                self.times[name] = time.monotonic()
            try:
                if hold:
                    assert self.release.wait(30)
                if fail is not None:
                    raise fail
                return f"result of {name}"
            finally:
                with self.lock:
                    self.running -= 1
                    self.ends[name] = time.monotonic()

        return work


def wait_until(condition: Callable[[], bool], wait: float = 10.0) -> None:
    deadline = time.monotonic() + wait
    while not condition():
        assert time.monotonic() < deadline, "condition never held"
        time.sleep(0.01)


class StartOrder(Scheduler[str]):
    """A scheduler that notes the keys of the jobs it starts, in the order it starts
    them (under its lock). The jobs' own threads may run in any order: a thread started
    later can be scheduled first."""

    def __init__(self, concurrency: int) -> None:
        super().__init__(concurrency)
        self.order: list[Hashable] = []

    def _start(self, key: Hashable, job: _Job[str]) -> None:
        self.order.append(key)
        super()._start(key, job)


def test_jobs_start_in_offer_order_never_more_than_the_concurrency() -> None:
    probe = Probe()
    scheduler = StartOrder(3)
    names = [f"job{i}" for i in range(10)]
    for name in names:
        scheduler.offer(name, probe.job(name))
    wait_until(lambda: len(probe.started) == 3)
    time.sleep(0.1)
    # Three run; the rest wait, and start as places free up, in order.
    assert scheduler.order == names[:3]
    assert sorted(probe.started) == names[:3]
    probe.release.set()
    results = [scheduler.take(name) for name in names]
    assert results == [f"result of {name}" for name in names]
    assert scheduler.order == names
    # Each job ran, once.
    assert sorted(probe.started) == sorted(names)
    assert probe.peak == 3 == scheduler.peak


def test_finished_runs_waiting_to_be_taken_hold_back_new_starts() -> None:
    # Memory stays bounded: at most twice the concurrency of runs started and not taken.
    probe = Probe()
    probe.release.set()
    scheduler: Scheduler[str] = Scheduler(2)
    for i in range(10):
        scheduler.offer(i, probe.job(str(i), hold=False))
    wait_until(lambda: len(probe.started) == 4)
    time.sleep(0.1)
    assert len(probe.started) == 4
    assert scheduler.take(0) == "result of 0"
    wait_until(lambda: len(probe.started) == 5)
    assert [scheduler.take(i) for i in range(1, 10)] == [f"result of {i}" for i in range(1, 10)]


def test_take_starts_a_job_not_started_yet_and_hands_over_its_exception() -> None:
    probe = Probe()
    scheduler: Scheduler[str] = Scheduler(1)
    scheduler.offer("a", probe.job("a"))
    scheduler.offer("b", probe.job("b", hold=False, fail=AgentError("no", kind="crash")))
    probe.release.set()
    # b is taken first: it starts at once, beside a, rather than waiting its turn.
    with pytest.raises(AgentError, match="no"):
        scheduler.take("b")
    assert scheduler.take("a") == "result of a"


def test_stop_starts_nothing_more_and_close_kills_running_commands(tmp_path: Path) -> None:
    probe = Probe()
    scheduler: Scheduler[object] = Scheduler(2)
    pids = [tmp_path / f"pid{i}" for i in range(2)]

    def command(pidfile: Path) -> Callable[[], object]:
        return lambda: process.run(
            f"sleep 300 & echo $! > {pidfile}; wait", cwd=tmp_path, timeout=600, sweep=True
        )

    scheduler.offer("a", command(pids[0]))
    scheduler.offer("b", command(pids[1]))
    scheduler.offer("c", probe.job("c", hold=False))
    wait_until(lambda: all(p.exists() and p.read_text().strip() for p in pids))
    scheduler.stop()
    assert not scheduler.offered("c")
    started = time.monotonic()
    scheduler.close()
    assert time.monotonic() - started < 15
    for pidfile in pids:
        wait_until(lambda pidfile=pidfile: _gone(int(pidfile.read_text())))
    assert probe.started == []
    assert not any(t.name.startswith("evalcases-run-") for t in threading.enumerate())


def _gone(pid: int) -> bool:
    """Dead: reaped, or a zombie waiting for its parent."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except (FileNotFoundError, IndexError):
        return True


def test_a_rate_limit_holds_back_the_next_start_for_the_delay_it_named() -> None:
    probe = Probe()
    probe.release.set()
    limited = AgentError("429 too many requests", kind="rate-limit", retry_after=0.6)
    scheduler: Scheduler[str] = Scheduler(1)
    scheduler.offer("a", probe.job("a", hold=False, fail=limited))
    scheduler.offer("b", probe.job("b", hold=False))
    with pytest.raises(AgentError):
        scheduler.take("a")
    assert scheduler.take("b") == "result of b"
    # b could not start before the pause that a asked for was over.
    assert probe.times["b"] - probe.ends["a"] >= 0.55


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def rate_limit(after: float | None = None) -> RunError:
    return RunError("rate limited", kind="rate-limit", retry_after=after)


def test_backoff_doubles_in_a_row_up_to_the_longest_and_resets_after_a_run() -> None:
    clock = Clock()
    backoff = Backoff(pause=5, longest=12, clock=clock)
    assert [backoff.record(rate_limit()) for _ in range(3)] == [5, 10, 12]
    assert backoff.left() == 12
    backoff.record(None)
    assert backoff.record(rate_limit()) == 5
    # Another kind of error neither pauses nor ends the row.
    assert backoff.record(RunError("x", kind="timeout")) == 0
    assert backoff.record(rate_limit()) == 10


def test_backoff_honours_the_named_delay_within_limits_and_counts_an_error_once() -> None:
    clock = Clock()
    backoff = Backoff(pause=5, longest=60, clock=clock)
    error = rate_limit(after=30)
    assert backoff.record(error) == 30
    # The scheduler and the retry both see the same error: it pauses once.
    assert backoff.record(error) == 0
    clock.now += 10
    assert backoff.left() == 20
    assert backoff.record(rate_limit(after=3600)) == 60
