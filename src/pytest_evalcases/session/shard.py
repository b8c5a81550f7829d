"""``--eval-shard K/N``: a deterministic split of the eval cases across CI jobs.

A case goes to the shard picked by a stable hash of its id, so every variant and
repetition of a case runs in the same job (a per-case verdict needs all of them),
and the split does not change when cases are added elsewhere in the suite.
"""

from __future__ import annotations

import argparse
import hashlib


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
