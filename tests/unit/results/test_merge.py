"""Merging shard files: variant order, mode, duplicates, missing shards."""

from __future__ import annotations

import pytest

from pytest_evalcases.errors import UsageError
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.merge import merge, summary

from .records import STARTED, doc, run


def _shard(k: int, records: list, **kw: object) -> ResultsDocument:  # type: ignore[type-arg]
    return doc(records, shard=(k, 2), order=["main", "pr"], **kw)


def test_the_variant_order_of_the_files_survives_runs_that_arrive_second_variant_first() -> None:
    # Under xdist the pr runs may be recorded before the main ones.
    first = _shard(1, [run("alpha", "failed", "pr"), run("alpha", "passed", "main")])
    second = _shard(2, [run("beta", "passed", "pr"), run("beta", "failed", "main")])

    merged = merge([first, second])

    assert [v.name for v in merged.variants] == ["main", "pr"]
    assert [(c.baseline, c.variant) for c in merged.comparisons] == [("main", "pr")]
    assert merged.comparisons[0].regressed_cases == ("alpha",)
    assert merged.comparisons[0].improved_cases == ("beta",)
    assert merged.complete is True
    assert merged.merge_warnings == ()
    assert [(m.shard, m.complete) for m in merged.merged_from or ()] == [
        ("1/2", True),
        ("2/2", True),
    ]


def test_a_run_in_two_files_is_kept_once_with_a_warning() -> None:
    shard = _shard(1, [run("alpha", "passed", "main")])

    merged = merge([shard, shard])

    assert [r.case_id for r in merged.cases] == ["alpha"]
    assert merged.merge_warnings == (
        "run ('alpha', 'main', 0) appears more than once; kept the first",
        "shards not merged: 2/2",
    )


def test_a_missing_shard_makes_the_merged_file_incomplete() -> None:
    merged = merge([_shard(1, [run("alpha", "passed", "main")])])

    assert merged.complete is False
    assert merged.incomplete_reasons == ("shards not merged: 2/2",)
    assert merged.to_dict()["complete"] is False


def test_the_mode_is_carried_and_files_of_different_modes_do_not_merge() -> None:
    red = _shard(1, [run("alpha", "failed", "main")], mode="red-first")
    red_too = _shard(2, [run("beta", "failed", "main")], mode="red-first")
    plain = _shard(2, [run("beta", "passed", "main")])

    assert merge([red, red_too]).mode == "red-first"
    with pytest.raises(UsageError) as caught:
        merge([red, plain], ["s1.json", "s2.json"])

    assert str(caught.value) == (
        "cannot merge results files of different modes: s1.json (red-first), s2.json (run)"
    )


def test_the_summary_line_names_the_counts_and_the_verdict() -> None:
    merged = merge(
        [_shard(1, [run("alpha", "passed", "main")]), _shard(2, [run("beta", "failed", "main")])]
    )

    assert merged.date == STARTED.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    assert summary(merged, 2) == (
        "merged 2 files: 1/2 cases passed, eval gate: BLOCKED (1 normal case failed: beta)"
    )
