"""The baseline comparison of two results documents."""

from __future__ import annotations

from pytest_evalcases.results import baseline, gate
from pytest_evalcases.results.document import SuiteSelection
from pytest_evalcases.results.policy import GatePolicy

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
        "baseline a.json: pass rate (critical and normal) 66.7% -> 66.7%; 1 regressed, 0 improved",
        "  regressed since baseline: beta",
    ]


def test_a_pass_rate_drop_within_the_tolerance_does_not_block() -> None:
    before = doc([run(f"c{i}", "passed") for i in range(20)])
    after = doc([run(f"c{i}", "passed") for i in range(19)] + [run("new", "failed")])

    within = baseline.check(before, after, tolerance=5.0)
    beyond = baseline.check(before, after, tolerance=3.0)

    assert within.blocked is False
    assert beyond.reasons == (
        "pass rate (critical and normal) 95.0% dropped more than 3 points below the "
        "baseline's 100.0%",
    )


def test_tokens_above_1_3_times_the_baseline_block_and_pins_are_reported() -> None:
    before = doc([run("alpha", "passed", tokens_in=100, tokens_out=0)], pins={"agent": "claude"})
    after = doc([run("alpha", "passed", tokens_in=200, tokens_out=0)], pins={"agent": "codex"})

    result = baseline.check(before, after)

    assert result.reasons == ("mean tokens per run 200 exceeds 1.3x the baseline's 100",)
    assert result.pin_differences == ("agent claude -> codex",)
    assert result.to_dict()["tokens_mean"] == [100.0, 200.0]


def test_the_gate_blocks_a_run_that_passes_by_itself_where_the_baseline_blocks() -> None:
    before = doc([run("alpha", "passed", tokens_in=100), run("beta", "passed", tokens_in=100)])
    after = [run("alpha", "passed", tokens_in=200), run("beta", "passed", tokens_in=200)]

    report = gate.decide(after, GatePolicy(0.9), baseline=baseline.check(before, doc(after)))

    assert report.verdict == gate.Verdict(
        "BLOCKED", "baseline: mean tokens per run 200 exceeds 1.3x the baseline's 100"
    )
    assert report.notes == [
        "baseline baseline: pass rate (critical and normal) 100.0% -> 100.0%; 0 regressed, "
        "0 improved",
    ]


def test_an_advisory_regression_is_reported_and_never_blocks() -> None:
    """Advisory cases never block, in the baseline gate as in the gate: a regressed
    advisory case is listed apart, and the pass rate compared is the critical and
    normal cases' (here 100 % on both sides, where all cases give 100 % -> 50 %)."""
    before = doc([run("alpha", "passed"), run("beta", "passed", severity="advisory")])
    after = doc([run("alpha", "passed"), run("beta", "xfailed", severity="advisory")])

    result = baseline.check(before, after, tolerance=0.0, label="a.json")

    assert result.reasons == ()
    assert result.pass_rate == (1.0, 1.0)
    assert [r.case_id for r in result.advisory_regressed] == ["beta"]
    assert result.regressed == []
    assert result.lines() == [
        "baseline a.json: pass rate (critical and normal) 100.0% -> 100.0%; 0 regressed, "
        "0 improved, 1 advisory regressed",
        "  regressed since baseline (advisory, does not block): beta",
    ]
    assert result.to_dict()["advisory_regressed"] == ["beta"]


def test_every_regressed_case_is_named() -> None:
    before = doc([run(f"c{i}", "passed") for i in range(7)])
    after = doc([run(f"c{i}", "failed") for i in range(7)])

    result = baseline.check(before, after, tolerance=100.0)

    assert result.reasons == (
        "7 cases passed in the baseline and fail now: c0, c1, c2, c3, c4, c5, c6",
    )


def test_a_side_of_part_of_the_suite_is_compared_on_the_cases_both_ran() -> None:
    part = SuiteSelection(("-m", "advisory"), 10, 8, 10, 8, ())
    whole = [run(f"c{i}", "passed", tokens_in=100) for i in range(9)]
    before = doc([*whole, run("adv", "failed", tokens_in=1000)])
    after = doc(
        [run("c0", "passed", tokens_in=100), run("adv", "failed", tokens_in=1000)],
        selection=part,
    )

    result = baseline.check(before, after, label="base.json")
    reverse = baseline.check(after, before, label="part.json")

    # Against the whole suite: 90 % -> 50 %, and mean tokens 190 -> 550.
    assert result.reasons == ()
    assert (result.common, result.partial) == (2, (False, True))
    assert result.pass_rate == (0.5, 0.5)
    assert result.tokens_mean == (550.0, 550.0)
    assert result.lines() == [
        "baseline base.json: compared on the 2 cases both runs ran (this run is part of the "
        "suite); pass rate (critical and normal) 50.0% -> 50.0%; 0 regressed, 0 improved"
    ]
    assert result.to_dict()["compared_on"] == 2
    assert (
        reverse.scope(("A", "B"))
        == "compared on the 2 cases both runs ran (A is part of the suite)"
    )


def test_two_whole_suites_are_compared_whole() -> None:
    result = baseline.check(doc([run("a", "passed")]), doc([run("a", "passed")]))

    assert (result.common, result.scope()) == (None, "")
    assert result.to_dict()["compared_on"] is None


def _sent(system: str, tools: list[str], runs: int = 2, **more: object) -> dict[str, object]:
    return {
        "runs": runs,
        "scripted": False,
        "models": ["m"],
        "system_prompt_sha256": system * 64,
        "context_sha256": "c" * 64,
        "tools": tools,
        "sampling": {"temperature": 0},
        **more,
    }


def test_what_a_variant_sent_differently_is_expected_only_where_its_configuration_changed() -> None:
    config = {"main": {"CLAUDE.md": "1"}, "pr": {"CLAUDE.md": "2"}}
    before = {
        "config": config,
        "config_fingerprint": "f" * 64,
        "sent": {"main": _sent("a", ["Edit", "Read"]), "pr": _sent("a", ["Read"])},
        "lock_files": {"uv.lock": "1"},
    }
    after = {
        "config": {**config, "pr": {"CLAUDE.md": "3"}},
        "config_fingerprint": "e" * 64,
        "sent": {"main": _sent("b", ["Read", "Write"]), "pr": _sent("b", ["Read"])},
        "lock_files": {"uv.lock": "1", "go.sum": "2"},
    }

    changes = baseline.pin_changes(before, after)

    assert changes.expected == (
        "configuration fingerprint ffffffffffff -> eeeeeeeeeeee (pr:CLAUDE.md)",
        "sent (variant pr): system prompt aaaaaaaaaaaa -> bbbbbbbbbbbb",
    )
    assert changes.warnings == (
        "sent (variant main): system prompt aaaaaaaaaaaa -> bbbbbbbbbbbb",
        "sent (variant main): tools offered +Write, -Edit",
        "lock files changed: go.sum",
    )


def test_what_was_not_recorded_or_was_scripted_on_one_side_is_no_difference() -> None:
    before = {"sent": {"": _sent("a", ["Read"]), "x": _sent("a", ["Read"])}}
    after = {
        "sent": {
            "": {"runs": 0, "not_recorded": "recording is off", "scripted": False},
            "x": _sent("b", ["Bash"], scripted=True),
        }
    }

    assert baseline.pin_changes(before, after) == baseline.PinChanges()
    assert baseline.pin_changes({"sent": {"": _sent("a", ["Read"])}}, {}) == baseline.PinChanges()


def test_the_gate_prints_expected_pin_changes_as_information() -> None:
    before = doc([run("alpha", "passed")], pins={"config_fingerprint": "1" * 64, "agent": "a"})
    after = doc([run("alpha", "passed")], pins={"config_fingerprint": "2" * 64, "agent": "b"})

    result = baseline.check(before, after, label="a.json")

    assert result.lines()[1:] == [
        "pins changed as expected with the configuration: "
        "configuration fingerprint 111111111111 -> 222222222222",
        "WARNING: pins differ from the baseline, results may not be comparable: agent a -> b",
    ]
    assert result.to_dict()["pin_expected"] == [
        "configuration fingerprint 111111111111 -> 222222222222"
    ]
