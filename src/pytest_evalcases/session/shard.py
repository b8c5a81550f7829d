"""``--eval-shard K/N``: a deterministic split of the eval cases across CI jobs
(docs/results.md, "Shards and evalcases merge").

Every variant and repetition of a case runs in the same job (a per-case verdict needs
all of them). When the results directory holds a results file, the cases are balanced
by the time they took there: longest first, each to the shard with the least time so
far (:func:`balance`), so that the jobs end together. Every job computes the same split
from the same collected cases and the same file. Without a file, a case goes to the
shard picked by a stable hash of its id, which does not change when cases are added
elsewhere in the suite.
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path


def parse(value: str) -> tuple[int, int]:
    """An argparse ``type=``: ``K/N`` with ``1 <= K <= N``, quoting a bad value."""
    k, sep, n = value.partition("/")
    try:
        shard = (int(k), int(n)) if sep else None
    except ValueError:
        shard = None
    if shard is None or not 1 <= shard[0] <= shard[1]:
        raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N (e.g. 2/4), got {value!r}")
    return shard


def shard_of(case_id: str, total: int) -> int:
    """The 1-based shard of ``case_id`` among ``total``."""
    digest = hashlib.sha256(case_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % total + 1


def in_shard(case_id: str, shard: tuple[int, int]) -> bool:
    return shard_of(case_id, shard[1]) == shard[0]


@dataclass(frozen=True)
class Plan:
    """The shard of each case, balanced by durations (``source``: the results file)."""

    shards: Mapping[str, int]
    source: Path

    def shard_of(self, case_id: str, total: int) -> int:
        # A case the plan does not know (collected by this job only) falls back on the hash.
        return self.shards.get(case_id) or shard_of(case_id, total)


def balance(case_ids: Iterable[str], durations: Mapping[str, float], total: int) -> dict[str, int]:
    """Longest first, each case to the shard with the least time so far (the lowest
    numbered on a tie). A case without a duration counts as the median of the known
    ones (1 s when none is known); ties in duration go by id, so that the split is the
    same in every job whatever order the cases were collected in."""
    # Imported only here, with its own imports (fractions, decimal): every pytest
    # session imports this module, and it keeps their start-up cost down.
    import statistics

    ids = sorted(set(case_ids))
    known = [durations[i] for i in ids if i in durations]
    typical = statistics.median(known) if known else 1.0
    order = sorted(ids, key=lambda i: (-durations.get(i, typical), i))
    loads = [(0.0, k) for k in range(1, total + 1)]
    plan: dict[str, int] = {}
    for case_id in order:
        load_so_far, k = heapq.heappop(loads)
        plan[case_id] = k
        heapq.heappush(loads, (load_so_far + durations.get(case_id, typical), k))
    return plan


def recorded_durations(directory: Path) -> tuple[Path, dict[str, float]] | None:
    """The seconds each case took (its variants and repetitions together) in the newest
    results file of ``directory`` that reads; ``None`` when there is none."""
    # Imported only here: every pytest session imports this module (``--eval-shard``
    # is declared with :func:`parse`); reading results files only where it is needed
    # keeps the start-up cost of the other sessions down.
    from pytest_evalcases.results.reader import ResultsFileError, load

    try:
        paths = sorted((p for p in directory.glob("*.json") if p.is_file()), reverse=True)
    except OSError:
        return None
    for path in paths:
        try:
            document = load(path)
        except ResultsFileError:
            continue
        durations: dict[str, float] = {}
        for record in document.cases:
            durations[record.case_id] = durations.get(record.case_id, 0.0) + record.duration
        if durations:
            return path, durations
    return None


def plan(case_ids: Iterable[str], total: int, results_dir: Path | None) -> Plan | None:
    """The balanced split of ``case_ids``, ``None`` without a usable results file."""
    recorded = recorded_durations(results_dir) if results_dir is not None else None
    if recorded is None:
        return None
    source, durations = recorded
    return Plan(balance(case_ids, durations, total), source)
