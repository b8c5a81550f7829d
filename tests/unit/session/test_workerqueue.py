"""session/workerqueue.py: the items an xdist worker has yet to run, read from its
worker loop's queue (the sessions: tests/plugin/test_concurrency.py)."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from contextlib import contextmanager

from pytest_evalcases.session.workerqueue import worker_queue


class _Locked:
    """xdist 3.6's queue, read under its lock."""

    def __init__(self, items: list[object]) -> None:
        self.items = items

    @contextmanager
    def lock(self) -> Iterator[list[object]]:
        yield self.items


class _Loop:
    def __init__(self, torun: object, following: object) -> None:
        self.torun = torun
        self.nextitem_index = following


def test_the_next_item_first_then_the_queued_ones_of_either_xdist() -> None:
    old = queue.Queue[object]()
    for item in (4, 5, "shutdown"):
        old.put(item)

    assert worker_queue([object(), _Loop(_Locked([2, 3, "x"]), 1)], "load")() == [1, 2, 3]
    assert worker_queue([_Loop(old, None)], "load")() == [4, 5]


def test_none_under_worksteal_or_a_loop_of_another_shape() -> None:
    assert worker_queue([_Loop(_Locked([2]), 1)], "worksteal")() == []
    assert worker_queue([_Loop(object(), 1)], "load")() == []
