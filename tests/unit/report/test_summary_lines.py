"""The ``eval gate`` section's lines."""

from __future__ import annotations

from pytest_evalcases.report import summary
from pytest_evalcases.results import gate

from ..results.records import run


def test_one_variant_with_repeats_lists_each_case_with_its_interval() -> None:
    records = [
        run("alpha", "passed", repetition=0),
        run("alpha", "passed", repetition=1),
        run("alpha", "error", repetition=2, checks=[]),
        run("beta", "failed", repetition=0),
        run("beta", "failed", repetition=1),
    ]

    lines = summary.lines(gate.evaluate(records, 0.9))

    assert lines == [
        "suite: 1/2 cases passed · Score: 2/4 (50%) · 0 errors · normal 1/2",
        "  alpha: 2/2 runs passed (100%, 95% CI 34%–100%; needs 100%), 1 errored run",
        "  beta: 0/2 runs passed (0%, 95% CI 0%–66%; needs 100%)",
        "eval gate: BLOCKED (1 normal case failed: beta)",
    ]


def test_two_variants_compare_and_nothing_graded_says_why() -> None:
    records = [
        run("alpha", "passed", "main"),
        run("alpha", "failed", "pr"),
    ]

    lines = summary.lines(gate.evaluate(records, 0.9, order=["main", "pr"]))
    empty = summary.lines(gate.evaluate([], 0.9), "no agent configured")

    assert lines[2:] == [
        "pr vs main: 1 check regressed, 0 improved; cases 1 regressed, 0 improved "
        "(McNemar exact p=1, b=1, c=0)",
        "  regressed: alpha / c",
        "eval gate: BLOCKED (pr: 1 normal case failed: alpha)",
    ]
    assert empty == ["eval gate: nothing was graded (no agent configured)"]


def test_score_is_a_whole_percentage() -> None:
    assert summary.score(2, 3) == "Score: 2/3 (67%)"
    assert summary.score(0, 0) == "Score: 0/0 (n/a)"
