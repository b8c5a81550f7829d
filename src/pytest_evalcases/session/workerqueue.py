"""Under xdist, the items a worker was sent and has not run yet, read from xdist's
worker loop, which exposes no interface for it: :mod:`pytest_evalcases.plugin.ahead`
starts their runs ahead (docs/reference.md, "Concurrency"). Where its shape is not the
expected one, no run starts ahead of its item (``--eval-concurrency`` then gives
nothing on workers)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any


def worker_queue(plugins: Iterable[object], dist: str | None) -> Callable[[], list[int]]:
    """The indices of the items this worker, whose plugins are ``plugins``, was sent and
    has not run yet (the next one first); none under ``--dist worksteal``."""
    if dist == "worksteal":
        # Items still queued may be stolen by another worker, which would run the
        # agent a second time: under worksteal each run starts with its own item.
        return lambda: []
    for plugin in plugins:
        torun = getattr(plugin, "torun", None)
        if torun is None or not hasattr(plugin, "nextitem_index"):
            continue
        if hasattr(torun, "lock") or (hasattr(torun, "mutex") and hasattr(torun, "queue")):
            return functools.partial(_queued, plugin)
    return lambda: []


def _queued(interactor: Any) -> list[int]:
    following = interactor.nextitem_index
    torun = interactor.torun
    if hasattr(torun, "lock"):
        # xdist 3.6 and later: a queue that can be read under its lock.
        with torun.lock() as queue:
            rest = [i for i in queue if isinstance(i, int)]
    else:
        # xdist 3.5: a queue.Queue.
        with torun.mutex:
            rest = [i for i in torun.queue if isinstance(i, int)]
    return ([following] if isinstance(following, int) else []) + rest
