"""Failure modes (docs/results.md, "Failure modes"): a failed run's classification, the
distribution of a run's failures, and the baseline gate's rule on a new mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_evalcases.agents.base import ToolCall
from pytest_evalcases.results import baseline, modes, reader, writer
from pytest_evalcases.results.merge import merge
from pytest_evalcases.results.modes import ModeRule
from pytest_evalcases.results.policy import BaselinePolicy, GatePolicy, differences
from pytest_evalcases.results.record import CheckRecord, RunRecord

from .records import doc, run


def check(name: str, passed: bool, mode: str | None = None) -> CheckRecord:
    return CheckRecord(name, "output_matches", None, passed, "", mode=mode)


def calls(*commands: str) -> list[ToolCall]:
    return [ToolCall("Bash", "shell", command) for command in commands]


def failed(case: str, mode: str | None, outcome: str = "failed", **kw: Any) -> RunRecord:
    return run(case, outcome, failure_mode=mode, **kw)


# classify


def test_a_failed_run_takes_the_mode_of_its_first_failing_check() -> None:
    checks = [
        check("a", True, "refusal"),
        check("b", False, "tool_misuse"),
        check("c", False, "hallucination"),
    ]

    assert modes.classify(checks, None) == "tool_misuse"


def test_a_failing_check_without_a_mode_gives_way_to_the_next_failing_one_with_a_mode() -> None:
    checks = [check("a", False), check("b", False, "state_corruption")]

    assert modes.classify(checks, calls("ls")) == "state_corruption"


def test_the_same_call_threshold_times_is_a_loop_and_one_fewer_is_not() -> None:
    checks = [check("a", False)]
    five = calls("ls", *["pytest -x"] * 5)
    four = calls("ls", *["pytest -x"] * 4, "pytest -q")

    assert modes.classify(checks, five) == "loop"
    assert modes.classify(checks, four) == "unclassified"
    assert modes.classify(checks, four, threshold=4) == "loop"


def test_the_same_input_to_another_tool_is_another_call() -> None:
    mixed = [ToolCall("Bash", "shell", "x"), ToolCall("Read", "read", "x")] * 3

    assert modes.classify([check("a", False)], mixed, threshold=4) == "unclassified"


def test_a_check_mode_beats_a_loop_and_no_transcript_is_unclassified() -> None:
    looping = calls(*["ls"] * 9)

    assert modes.classify([check("a", False, "refusal")], looping) == "refusal"
    assert modes.classify([check("a", False)], None) == "unclassified"
    assert modes.classify([], calls()) == "unclassified"


# distribution


def test_the_distribution_counts_failed_and_advisory_failed_runs_by_mode_in_order() -> None:
    records = [
        failed("a", "tool_misuse"),
        failed("b", "loop"),
        failed("c", "tool_misuse", outcome="xfailed"),
        failed("d", "unclassified"),
        run("e", "passed"),
        run("f", "error"),
        failed("g", None),  # a file written before failure modes
    ]

    found = modes.distribution(records)

    assert found == {"tool_misuse": 2, "loop": 1, "unclassified": 1}
    assert list(found) == ["tool_misuse", "loop", "unclassified"]


# the baseline rule


def _before() -> Any:
    """Ten failed runs, all of them hallucinations but one planning error."""
    return doc(
        [failed(f"b{i}", "hallucination") for i in range(9)]
        + [failed("b9", "planning_error"), run("ok", "passed")]
    )


def test_a_mode_absent_in_the_baseline_and_common_now_blocks_naming_it() -> None:
    after = doc(
        [failed(f"b{i}", "hallucination") for i in range(7)]
        + [failed(f"b{i}", "tool_misuse") for i in range(7, 10)]
        + [run("ok", "passed")]
    )

    result = baseline.check(_before(), after)

    assert result.reasons == ("new failure mode tool_misuse: 30% of failures (baseline 0%)",)
    assert result.to_dict()["failure_modes"] == [
        {"planning_error": 1, "hallucination": 9},
        {"hallucination": 7, "tool_misuse": 3},
    ]


def test_a_mode_the_baseline_already_had_does_not_block() -> None:
    # planning_error was 10 % of the baseline's failures: not rare.
    after = doc(
        [failed(f"b{i}", "planning_error") for i in range(5)]
        + [failed(f"b{i}", "hallucination") for i in range(5, 10)]
        + [run("ok", "passed")]
    )

    assert baseline.check(_before(), after).reasons == ()


def test_fewer_failures_of_the_mode_than_the_minimum_never_block() -> None:
    """Two tool misuses out of two failures are 100 %, but two runs are too few."""
    before = doc([run("a", "passed"), run("b", "passed"), run("c", "passed")])
    two = doc([failed("a", "tool_misuse"), failed("b", "tool_misuse"), run("c", "passed")])
    three = doc([failed(c, "tool_misuse") for c in "abc"])

    assert not any("failure mode" in r for r in baseline.check(before, two).reasons)
    assert baseline.check(before, three).reasons[-1] == (
        "new failure mode tool_misuse: 100% of failures (baseline 0%)"
    )
    assert not ModeRule(min_failures=3).new_modes(before.cases, two.cases)
    assert ModeRule(min_failures=2).new_modes(before.cases, two.cases)


def test_unclassified_advisory_and_pre_mode_baselines_never_block_by_the_rule() -> None:
    before = doc([failed(f"b{i}", "hallucination") for i in range(10)])
    unclassified = [failed(f"u{i}", "unclassified") for i in range(5)]
    advisory = [failed(f"a{i}", "loop", outcome="xfailed", severity="advisory") for i in range(5)]
    rule = ModeRule()

    assert rule.new_modes(before.cases, unclassified) == []
    assert rule.new_modes(before.cases, advisory) == []
    older = [failed(f"b{i}", None) for i in range(10)]
    assert rule.new_modes(older, [failed(f"l{i}", "loop") for i in range(5)]) == []
    assert rule.new_modes(before.cases, [failed(f"l{i}", "loop") for i in range(5)]) == [
        "new failure mode loop: 100% of failures (baseline 0%)"
    ]


# the stored policy


def test_the_rule_is_stored_in_the_policy_and_read_back(tmp_path: Path) -> None:
    policy = GatePolicy(baseline=BaselinePolicy("b.json", 3.0, ModeRule(0.1, 0.2, 4)))
    written = doc([failed("a", "loop")]).with_changes(policy=policy)

    writer.write(written, tmp_path / "r.json")
    read = reader.load(tmp_path / "r.json")

    assert policy.to_dict()["baseline"] == {
        "file": "b.json",
        "tolerance": 3.0,
        "mode_rare": 0.1,
        "mode_new": 0.2,
        "mode_min_failures": 4,
    }
    assert read.policy == policy
    assert read.cases[0].failure_mode == "loop"
    assert differences(GatePolicy(), policy)[0] == ("baseline.file", None, "b.json")


def test_shards_merged_are_gated_by_the_stored_rule_as_one_run_was(tmp_path: Path) -> None:
    """Two shards with two tool misuses each: merged, 4 of 4 failures block under a
    stored minimum of 4 and not under one of 5 (the defaults' 3 would block both), while
    neither shard's 2 blocks alone."""
    writer.write(doc([run(c, "passed") for c in "abcd"]), tmp_path / "b.json")

    def shards(minimum: int) -> list[Any]:
        rule = ModeRule(min_failures=minimum)
        policy = GatePolicy(min_pass_rate=0.0, baseline=BaselinePolicy("b.json", 100.0, rule))
        return [
            doc([failed(a, "tool_misuse"), failed(b, "tool_misuse")], shard=(k, 2)).with_changes(
                policy=policy
            )
            for k, (a, b) in enumerate(("ab", "cd"), start=1)
        ]

    four, five = merge(shards(4), root=tmp_path), merge(shards(5), root=tmp_path)
    alone = merge(shards(4)[:1], root=tmp_path)

    new_mode = "new failure mode tool_misuse: 100% of failures (baseline 0%)"
    assert new_mode in four.verdict_reason
    assert new_mode not in five.verdict_reason
    assert new_mode not in alone.verdict_reason
    assert (four.policy, five.policy) == (shards(4)[0].policy, shards(5)[0].policy)
