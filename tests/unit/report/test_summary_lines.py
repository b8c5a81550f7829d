"""The ``eval gate`` section's lines."""

from __future__ import annotations

from pytest_evalcases.report import summary
from pytest_evalcases.results import gate
from pytest_evalcases.results.factors import Factors
from pytest_evalcases.results.policy import GatePolicy

from ..results.records import run


def test_one_variant_with_repeats_lists_each_case_with_its_interval() -> None:
    records = [
        run("alpha", "passed", repetition=0, duration=12.0),
        run("alpha", "passed", repetition=1, duration=30.25),
        run("alpha", "error", repetition=2, checks=[], error_kind="timeout"),
        run("beta", "failed", repetition=0, duration=8.0),
        run("beta", "failed", repetition=1, duration=9.0, failure_mode="tool_misuse"),
    ]

    lines = summary.lines(gate.decide(records, GatePolicy(0.9)))

    assert lines == [
        "suite: 1/2 cases passed · Score: 2/4 (50%) · 0 errors · normal 1/2",
        "  runs 2/4 passed (50%, 95% CI 15%–85%)",
        "  wall p50 12.0 s · p90 30.2 s · p99 30.2 s (2 passed) · "
        "p50 8.0 s · p90 9.0 s · p99 9.0 s (2 failed)",
        "  failures by mode: tool_misuse 1, unclassified 1",
        "  errors by kind: timeout 1",
        "  alpha: 2/2 runs passed (100%, 95% CI 34%–100%; needs 100%), 1 errored run",
        "  beta: 0/2 runs passed (0%, 95% CI 0%–66%; needs 100%)",
        "eval gate: BLOCKED (1 normal case failed: beta)",
    ]


def test_two_variants_compare_and_nothing_graded_says_why() -> None:
    records = [
        run("alpha", "passed", "main"),
        run("alpha", "failed", "pr"),
    ]

    lines = summary.lines(gate.decide(records, GatePolicy(0.9), order=["main", "pr"]))
    empty = summary.lines(gate.decide([], GatePolicy(0.9)), "no agent configured")

    assert lines[:5] == [
        "main: 1/1 cases passed · Score: 1/1 (100%) · 0 errors · normal 1/1",
        "  wall 0.0 s (1 passed)",
        "pr: 0/1 cases passed · Score: 0/1 (0%) · 0 errors · normal 0/1",
        "  wall 0.0 s (1 failed)",
        "  failures by mode: unclassified 1",
    ]
    assert lines[5:] == [
        "pr vs main: 1 check regressed, 0 improved; cases 1 regressed, 0 improved "
        "(McNemar exact p=1: 1 case passed only in main, 0 only in pr)",
        "  regressed: alpha / c",
        "eval gate: BLOCKED (pr: 1 normal case failed: alpha)",
    ]
    assert empty == ["eval gate: nothing was graded (no agent configured)"]


def test_score_is_a_whole_percentage() -> None:
    assert summary.score(2, 3) == "Score: 2/3 (67%)"
    assert summary.score(0, 0) == "Score: 0/0 (n/a)"


def test_with_hundreds_of_repeated_cases_the_worst_are_listed_and_the_rest_counted() -> None:
    records = []
    for i in range(500):
        # Case 7 fails every run, 42 and 300 pass one run in three, 99 two in three
        # (its 67% meets its min_pass_rate 60%), the others pass every run.
        failing = {7: 3, 42: 2, 300: 2, 99: 1}.get(i, 0)
        rate = 0.6 if i == 99 else 1.0
        for rep in range(3):
            outcome = "failed" if rep < failing else "passed"
            records.append(run(f"case-{i:03}", outcome, repetition=rep, min_pass_rate=rate))

    report = gate.decide(records, GatePolicy(0.9))
    lines = summary.lines(report)
    every = summary.lines(report, every_case=True)

    # The variant's line, its metrics (runs, wall time, failures by mode), the cases.
    assert len(lines) == 1 + 3 + summary.SHOWN_CASES + 1 + 1
    assert lines[1:4] == [
        "  runs 1492/1500 passed (99%, 95% CI 99%–100%)",
        "  wall p50 0.0 s · p90 0.0 s · p99 0.0 s (1492 passed) · "
        "p50 0.0 s · p90 0.0 s · p99 0.0 s (8 failed)",
        "  failures by mode: unclassified 8",
    ]
    assert lines[4:8] == [
        "  case-007: 0/3 runs passed (0%, 95% CI 0%–56%; needs 100%)",
        "  case-042: 1/3 runs passed (33%, 95% CI 6%–79%; needs 100%)",
        "  case-300: 1/3 runs passed (33%, 95% CI 6%–79%; needs 100%)",
        "  case-099: 2/3 runs passed (67%, 95% CI 21%–94%; needs 60%)",
    ]
    assert lines[-2] == "  … 490 more cases: 490 passed every run (pytest -v lists every case)"
    assert lines[-1].startswith("eval gate: BLOCKED (3 normal cases failed: case-007, ")
    assert len(every) == 1 + 3 + 500 + 1
    assert "  case-499: 3/3 runs passed (100%, 95% CI 44%–100%; needs 100%)" in every


def test_the_count_of_the_cases_not_listed_says_how_they_did() -> None:
    # Twelve cases fail one run in three: the ten listed and two more, whose count says
    # they failed; two more pass every run but one, which meets their rate.
    records = []
    for i in range(14):
        rate = 0.5 if i >= 12 else 1.0
        for rep in range(3):
            outcome = "failed" if rep == 0 else "passed"
            records.append(run(f"c{i:02}", outcome, repetition=rep, min_pass_rate=rate))

    lines = summary.lines(gate.decide(records, GatePolicy(0.9)))

    assert lines[-2] == (
        "  … 4 more cases: 2 failed, 2 passed but not every run (pytest -v lists every case)"
    )


def test_each_variant_says_the_tokens_and_cost_its_runs_reported() -> None:
    records = [
        run("alpha", "passed", "main", tokens_in=1000, tokens_out=200, cost_usd=0.01),
        run("beta", "failed", "main", tokens_in=2000, tokens_out=300, cost_usd=0.03),
        # pr: one run reported tokens but no cost, one nothing, one was skipped
        run("alpha", "passed", "pr", tokens_in=500, tokens_out=100),
        run("beta", "error", "pr", checks=[]),
        run("gamma", "skipped", "pr", checks=[]),
    ]

    lines = summary.lines(gate.decide(records, GatePolicy(0.9), order=["main", "pr"]))

    assert lines[1] == "  tokens 3,500 (1,750 per run) · cost $0.0400 ($0.0200 per run)"
    # The spread per run, as the results file's metrics hold it (docs/results.md).
    assert lines[3] == "  tokens 1,750 ± 778 per run · cost $0.0200 ± $0.0141 per run"
    assert lines[6] == ("  tokens 600 (600 per run; 1 of 2 runs reported it) · cost not reported")


def test_scripted_runs_are_named_apart_from_what_live_runs_spent() -> None:
    records = [
        run("alpha", "passed", "main", tokens_in=1000, tokens_out=200, cost_usd=0.01),
        run("hook", "passed", "main", scripted=True),
        run("rule", "failed", "main", scripted=True),
        run("hook", "passed", "pr", scripted=True),
    ]

    lines = summary.lines(gate.decide(records, GatePolicy(0.9), order=["main", "pr"]))

    # Not "1 of 3 runs reported it": the scripted ones are no live runs that did not say.
    assert lines[1] == (
        "  tokens 1,200 (1,200 per run) · cost $0.0100 ($0.0100 per run) · "
        "2 scripted runs apart, which spent nothing"
    )
    assert lines[5] == "  nothing spent: 1 scripted run (the plugin's own model)"


def test_a_replaying_session_says_how_its_runs_went_and_what_it_saved() -> None:
    records = [run(name, "passed") for name in ("a", "b", "c", "d", "e")]
    for record, how, tokens, usd in zip(
        records,
        ("full", "full", "partial", "live", "diverged"),
        (1000, 2000, 500, 0, 20),
        (0.01, 0.02, 0.005, None, 0.0),
        strict=True,
    ):
        record.replay, record.saved_tokens, record.saved_usd = how, tokens, usd  # type: ignore[assignment]

    line = summary.replay_line(records)

    assert line == (
        "replay: 2 runs replayed in full, 1 in part, 1 live, 1 diverged · "
        "saved 3,520 tokens, $0.0350"
    )
    assert line in summary.lines(gate.decide(records, GatePolicy(0.9)))
    assert summary.replay_line([run("a", "passed")]) == ""


def test_variants_are_described_unless_their_configurations_alone_tell_them_apart() -> None:
    models = {"a": Factors("claude", "opus"), "b": Factors("claude", "sonnet")}
    configs = {"main": Factors("claude", config="git:main"), "pr": Factors("claude")}
    one_model = {"b": Factors("claude", "opus")}
    one_config = {"b": Factors("claude", "opus", config="git:main")}

    assert summary.described_variants(models) == models
    assert summary.described_variants(configs) == {}
    # Alone, a model variant's name is all the header would say of it.
    assert summary.described_variants(one_model) == one_model
    assert summary.described_variants(one_config) == {}
    # The session's single unnamed variant is not one the user named.
    assert summary.described_variants({"": Factors("claude", "opus")}) == {}
