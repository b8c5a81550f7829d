"""The gate policy and the summary lines, on plain run records."""

from __future__ import annotations

from pytest_evalcases.report import summary
from pytest_evalcases.results import gate
from pytest_evalcases.results.policy import GatePolicy
from pytest_evalcases.results.record import RunRecord
from tests.helpers.results import rec


def verdict(records: list[RunRecord], min_rate: float = 0.9) -> gate.Verdict:
    return gate.decide(records, GatePolicy(min_rate)).verdict


def test_pass() -> None:
    v = verdict([rec("a", "passed"), rec("b", "passed", "critical")])
    assert (v.status, v.exit_code) == ("PASS", 0)


def test_critical_or_normal_failure_blocks() -> None:
    v = verdict([rec("a", "failed", "critical")] + [rec(f"p{i}", "passed") for i in range(20)])
    assert v.status == "BLOCKED"
    assert v.reason == "1 critical case failed: a"
    assert (
        verdict([rec("a", "failed")] + [rec(f"p{i}", "passed") for i in range(20)]).exit_code == 1
    )


def test_advisory_failures_never_block_whatever_the_suite_size() -> None:
    """The pass rate counts the critical and normal cases only: one advisory failure
    beside four passing cases, three in twenty, or advisory failures alone are PASS."""
    few = [rec(f"p{i}", "passed") for i in range(4)]
    assert verdict([rec("adv", "xfailed", "advisory"), *few]).status == "PASS"
    many = [rec(f"p{i}", "passed") for i in range(17)]
    three = [rec(f"adv{i}", "xfailed", "advisory") for i in range(3)]
    assert verdict([*three, *many], min_rate=1.0).status == "PASS"
    assert verdict([rec("adv", "xfailed", "advisory")]).status == "PASS"
    assert verdict([*three, rec("e", "error", checks=[])]).status == "INCONCLUSIVE"
    report = gate.decide([*three, rec("ok", "passed", "critical")], GatePolicy(0.9))
    assert report.verdict.status == "PASS"
    # Reported: the variant counts them, and the results file's pass rate has them.
    assert report.variants[0].pass_rate == 0.25
    assert report.variants[0].gated_pass_rate == 1.0
    assert summary.lines(report)[0].endswith("critical 1/1, advisory 0/3")


def test_the_blocked_reason_names_every_blocking_case() -> None:
    critical = [rec(f"c{i}", "failed", "critical") for i in range(2)]
    normal = [rec(f"n{i}", "failed") for i in range(7)]
    others = [rec("adv", "xfailed", "advisory"), rec("ok", "passed")]

    v = verdict([*critical, *normal, *others])

    assert v.status == "BLOCKED"
    assert v.reason == (
        "2 critical cases failed: c0, c1; 7 normal cases failed: n0, n1, n2, n3, n4, n5, n6"
    )


def test_a_failure_counts_as_severe_as_its_failed_checks() -> None:
    """A critical task directory whose LOW checks alone failed is an advisory failure:
    it blocks by itself no more than an advisory case; MEDIUM at most, a normal one."""
    low = rec("task", "xfailed", "critical", failure_severity="advisory")
    medium = rec("task", "failed", "critical", failure_severity="normal")
    others = [rec(f"p{i}", "passed") for i in range(9)]

    assert verdict([low]).status == "PASS"
    assert verdict([low, *others]).status == "PASS"
    assert verdict([medium, *others]).reason == "1 normal case failed: task"
    report = gate.decide([low, rec("ok", "passed", "critical")], GatePolicy(0.5))
    assert report.variants[0].cases[0].failure_severity == "advisory"
    assert summary.lines(report)[0].endswith("critical 1/1, advisory 0/1")
    # A file written before `failure_severity` existed: the case's own severity.
    assert verdict([rec("old", "failed", "critical"), *others]).reason == (
        "1 critical case failed: old"
    )


def test_errors_are_inconclusive_unless_blocked() -> None:
    v = verdict([rec("a", "passed"), rec("e", "error", checks=[])])
    assert (v.status, v.exit_code) == ("INCONCLUSIVE", 2)
    assert verdict([rec("f", "failed"), rec("e", "error", checks=[])]).status == "BLOCKED"


def test_broken_case_file_counts_as_an_error() -> None:
    broken = rec("bad.yaml", "error", kind="file", checks=[])
    assert verdict([rec("a", "passed"), broken]).status == "INCONCLUSIVE"
    assert verdict([broken]).status == "INCONCLUSIVE"


def test_skipped_and_quarantined_are_not_graded() -> None:
    v = verdict([rec("q", "skipped", checks=[])])
    assert (v.status, v.exit_code) == ("NONE", None)


def test_worst_variant_decides_and_regressions_are_named() -> None:
    checks_ok = [{"id": "uses-class", "passed": True}, {"id": "has-test", "passed": True}]
    checks_bad = [{"id": "uses-class", "passed": False}, {"id": "has-test", "passed": True}]
    records = [
        rec("svc", "passed", "critical", "main", checks=checks_ok),
        rec("svc", "failed", "critical", "pr", checks=checks_bad),
    ]
    report = gate.decide(records, GatePolicy(0.9))
    assert report.verdict.status == "BLOCKED"
    assert report.verdict.reason == "pr: 1 critical case failed: svc"
    (cmp,) = report.comparisons
    assert cmp.regressed_checks == [("svc", "uses-class")]
    assert cmp.regressed_cases == ["svc"]
    assert (cmp.b, cmp.c) == (1, 0)
    lines = summary.lines(report)
    assert "main: 1/1 cases passed · Score: 2/2 (100%) · 0 errors · critical 1/1" in lines
    assert "pr: 0/1 cases passed · Score: 1/2 (50%) · 0 errors · critical 0/1" in lines
    assert "  regressed: svc / uses-class" in lines
    assert lines[-1] == "eval gate: BLOCKED (pr: 1 critical case failed: svc)"


def test_repeats_follow_min_pass_rate_and_leave_errors_out() -> None:
    runs = [rec("r", "passed", repetition=i, min_pass_rate=0.6) for i in range(3)]
    runs += [rec("r", "failed", repetition=3, min_pass_rate=0.6)]
    runs += [rec("r", "error", repetition=4, min_pass_rate=0.6, checks=[])]
    report = gate.decide(runs, GatePolicy(0.9))
    (case,) = report.variants[0].cases
    assert (case.outcome, case.passes, case.graded_runs, case.errors) == ("passed", 3, 4, 1)
    assert report.verdict.status == "PASS"
    lines = summary.lines(report)
    assert any(
        "r: 3/4 runs passed (75%, 95% CI 30%–95%; needs 60%), 1 errored run" in line
        for line in lines
    )
    all_errored = [rec("e", "error", repetition=i, checks=[]) for i in range(3)]
    assert gate.decide(all_errored, GatePolicy(0.9)).variants[0].cases[0].outcome == "error"


def test_summary_scores_checks() -> None:
    assert summary.score(5, 9) == "Score: 5/9 (56%)"
    assert summary.score(9, 9) == "Score: 9/9 (100%)"
    assert summary.score(0, 0) == "Score: 0/0 (n/a)"


def test_a_run_that_did_not_finish_is_never_a_pass() -> None:
    passed = [rec("a", "passed")]
    v = gate.decide(passed, GatePolicy(), incomplete=["interrupted"]).verdict
    assert (v.status, v.reason, v.exit_code) == (
        "INCONCLUSIVE",
        "run incomplete: interrupted",
        2,
    )
    # What blocks still blocks; nothing graded stays nothing graded.
    failed = [rec("a", "failed")]
    assert gate.decide(failed, GatePolicy(), incomplete=["interrupted"]).verdict.status == "BLOCKED"
    skipped = [rec("q", "skipped", checks=[])]
    assert gate.decide(skipped, GatePolicy(), incomplete=["interrupted"]).verdict.status == "NONE"


def test_the_mcnemar_p_value_counts_cases_not_runs() -> None:
    """docs/variants.md: two cases that regress in every one of three repeats give
    p=0.5, as with one run each; more discordant cases move it."""

    def comparison(cases: int, repeats: int) -> gate.Comparison:
        records = [
            rec(f"c{i}", outcome, variant=variant, repetition=r)
            for i in range(cases)
            for variant, outcome in (("base", "passed"), ("pr", "failed"))
            for r in range(repeats)
        ]
        return gate.decide(records, GatePolicy(0.9), order=["base", "pr"]).comparisons[0]

    assert (comparison(2, 1).b, comparison(2, 1).p_value) == (2, 0.5)
    assert (comparison(2, 3).b, comparison(2, 3).p_value) == (2, 0.5)
    assert comparison(5, 1).p_value == 0.0625
    assert round(comparison(6, 1).p_value, 3) == 0.031
