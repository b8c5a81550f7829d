"""The baseline comparison of two results documents."""

from __future__ import annotations

from pytest_evalcases.results import baseline, gate

from .records import doc, run


def test_a_case_that_passed_and_fails_now_blocks_and_is_listed() -> None:
    before = doc([run("alpha", "passed"), run("beta", "passed"), run("gamma", "failed")])
    after = doc([run("alpha", "passed"), run("beta", "failed"), run("delta", "passed")])

    result = baseline.check(before, after, label="a.json")

    assert [(r.case_id, r.before, r.after, r.change) for r in result.rows] == [
        ("alpha", "passed", "passed", ""),
        ("beta", "passed", "failed", "regressed"),
        ("delta", None, "passed", "new"),
        ("gamma", "failed", None, "missing"),
    ]
    assert result.pass_rate == (2 / 3, 2 / 3)
    assert result.reasons == ("1 case passed in the baseline and fails now: beta",)
    assert result.lines() == [
        "baseline a.json: pass rate 66.7% -> 66.7%; 1 regressed, 0 improved",
        "  regressed since baseline: beta",
    ]


def test_a_pass_rate_drop_within_the_tolerance_does_not_block() -> None:
    before = doc([run(f"c{i}", "passed") for i in range(20)])
    after = doc([run(f"c{i}", "passed") for i in range(19)] + [run("new", "failed")])

    within = baseline.check(before, after, tolerance=5.0)
    beyond = baseline.check(before, after, tolerance=3.0)

    assert within.blocked is False
    assert beyond.reasons == (
        "pass rate 95.0% dropped more than 3 points below the baseline's 100.0%",
    )


def test_tokens_above_1_3_times_the_baseline_block_and_pins_are_reported() -> None:
    before = doc([run("alpha", "passed", tokens_in=100, tokens_out=0)], pins={"agent": "claude"})
    after = doc([run("alpha", "passed", tokens_in=200, tokens_out=0)], pins={"agent": "codex"})

    result = baseline.check(before, after)

    assert result.reasons == ("mean tokens per run 200 exceeds 1.3x the baseline's 100",)
    assert result.pin_differences == ("agent claude -> codex",)
    assert result.to_dict()["tokens_mean"] == [100.0, 200.0]


def test_apply_blocks_a_passing_gate_report_and_adds_the_lines() -> None:
    before = doc([run("alpha", "passed"), run("beta", "passed")])
    after_records = [run("alpha", "passed"), run("beta", "failed", severity="advisory")]
    report = gate.evaluate(after_records, 0.0)

    applied = baseline.apply(report, baseline.check(before, doc(after_records), 60.0))

    assert report.verdict == gate.Verdict("PASS")
    assert applied.verdict == gate.Verdict(
        "BLOCKED", "baseline: 1 case passed in the baseline and fails now: beta"
    )
    assert applied.notes == [
        "baseline baseline: pass rate 100.0% -> 50.0%; 1 regressed, 0 improved",
        "  regressed since baseline: beta",
    ]
