"""Merging shard files: variant order, mode, duplicates, missing shards."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.errors import UsageError
from pytest_evalcases.results import reader, writer
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.merge import merge, rebase, summary
from pytest_evalcases.results.policy import BaselinePolicy, GatePolicy
from pytest_evalcases.results.record import CheckRecord, JudgeRecord

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


def test_files_written_before_the_policy_merge_under_the_first_min_pass_rate() -> None:
    runs = [run("alpha", "passed", "main"), run("beta", "passed", "main")]
    first = _shard(1, runs[:1]).with_changes(policy=None)
    second = _shard(2, runs[1:]).with_changes(policy=None, min_pass_rate=0.5)

    merged = merge([first, second])

    assert merged.policy == GatePolicy(0.9)
    assert merged.merge_warnings == ("files differ in min_pass_rate [0.5, 0.9]; used the first",)


def test_the_baseline_of_the_policy_is_read_from_the_files_directory(tmp_path: Path) -> None:
    writer.write(doc([run("alpha", "passed"), run("beta", "passed")]), tmp_path / "b.json")
    policy = GatePolicy(baseline=BaselinePolicy("b.json", 3.0))
    shards = [
        doc([run(case, outcome)], shard=(k, 2)).with_changes(policy=policy)
        for k, case, outcome in ((1, "alpha", "passed"), (2, "beta", "failed"))
    ]

    merged = merge(shards, root=tmp_path)
    with pytest.raises(reader.ResultsFileError, match=r"elsewhere/b\.json"):
        merge(shards, root=tmp_path / "elsewhere")

    assert merged.verdict_reason == (
        "1 normal case failed: beta; baseline: pass rate (critical and normal) 50.0% dropped "
        "more than 3 points below the baseline's 100.0%; "
        "1 case passed in the baseline and fails now: beta"
    )
    # Two shards that cover the suite: compared as the whole suite, not on common cases.
    assert (merged.baseline or {})["compared_on"] is None


def test_shard_files_count_only_under_counts_and_their_merge_is_the_trends_again(
    tmp_path: Path,
) -> None:
    # A shard is part of the suite: its top-level counts are null (docs/results.md,
    # "A trend with jq"); merged, the shards are the whole suite and have them again.
    first = _shard(1, [run("alpha", "passed", "main"), run("alpha", "passed", "pr")])
    second = _shard(2, [run("beta", "failed", "main"), run("beta", "passed", "pr")])
    paths = [writer.write(d, tmp_path / f"{i}.json") for i, d in enumerate((first, second))]
    read = [reader.load(p) for p in paths]
    assert [d.to_dict()["passed"] for d in read] == [None, None]
    assert [d.counts.passed for d in read] == [2, 1]

    merged = merge(read).to_dict()

    assert merged["complete_suite"] is True
    assert (merged["passed"], merged["failed"], merged["total"]) == (3, 1, 4)
    assert merged["counts"]["pass_rate"] == merged["pass_rate"] == 0.75


def test_what_the_cli_sent_is_summed_over_the_files_and_a_differing_hash_said() -> None:
    def sent(system: str, tools: list[str], runs: int = 1) -> dict[str, object]:
        return {"runs": runs, "system_prompt_sha256": system, "tools": tools, "models": ["m"]}

    unrecorded = {"runs": 0, "not_recorded": "recording is off", "scripted": False}
    first = _shard(1, [run("alpha", "passed", "main")], pins={"sent": {"main": sent("a", ["R"])}})
    second = _shard(2, [run("beta", "passed", "main")], pins={"sent": {"main": sent("a", ["B"])}})
    third = doc([run("gamma", "passed", "pr")], pins={"sent": {"main": sent("z", [], 3)}})
    off = doc([run("delta", "passed", "pr")], pins={"sent": {"main": unrecorded}})

    merged = merge([first, second])
    differing = merge([first, third])
    with_off = merge([off, first])

    assert merged.pins["sent"] == {
        "main": {"runs": 2, "system_prompt_sha256": "a", "tools": ["B", "R"], "models": ["m"]}
    }
    assert merged.merge_warnings == ()
    assert differing.pins["sent"]["main"]["runs"] == 4
    assert differing.pins["sent"]["main"]["system_prompt_sha256"] == "a"
    assert "pins differ between the files: sent.main.system_prompt_sha256" in (
        differing.merge_warnings
    )
    assert with_off.pins["sent"] == {"main": sent("a", ["R"])}


def test_a_judge_checks_recording_moves_with_its_runs_to_the_merged_files_directory(
    tmp_path: Path,
) -> None:
    judgement = JudgeRecord(False, "no", "claude", recording="s1.runs/a.judge-j")
    check = CheckRecord("j", "judge", None, False, "m", judge=judgement)
    shard = doc([run("a", "xfailed", checks=[check], recording="s1.runs/a")])

    moved = rebase(shard, tmp_path / "shards", tmp_path)

    (record,) = moved.cases
    assert record.recording == "shards/s1.runs/a"
    assert record.checks[0].judge is not None
    assert record.checks[0].judge.recording == "shards/s1.runs/a.judge-j"
