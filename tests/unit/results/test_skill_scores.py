"""Trigger scores of skills (docs/skills.md, "Trigger scores"): recall and
false-trigger rate per skill and variant, with Wilson intervals, in the summary and
the results file."""

from __future__ import annotations

from pytest_evalcases.kinds import Outcome
from pytest_evalcases.report.summary import skill_lines
from pytest_evalcases.results.record import CheckRecord, RunRecord
from pytest_evalcases.results.skills import SkillLimits, scores, shortfalls
from pytest_evalcases.results.stats import wilson


def run(
    case: str, type_: str, passed: bool, variant: str = "", outcome: Outcome = "passed"
) -> RunRecord:
    check = CheckRecord(f"{type_}-0", type_, None, passed, "…", skill="triage")
    other = CheckRecord("output_matches-1", "output_matches", None, True, "…")
    return RunRecord(
        case,
        "evals/x.yaml",
        1,
        "skills/triage",
        "normal",
        variant=variant,
        outcome=outcome,
        checks=[check, other],
    )


RUNS = [
    # Positives: fired 3 of 4 times; an errored run does not count.
    *(run("fires", "skill_used", True) for _ in range(3)),
    run("fires", "skill_used", False, outcome="failed"),
    run("fires", "skill_used", False, outcome="error"),
    # Negatives: fired once of 2.
    run("quiet", "skill_not_used", True),
    run("quiet", "skill_not_used", False, outcome="failed"),
]


def test_positives_and_negatives_count_every_graded_run() -> None:
    (score,) = scores(RUNS)
    assert (score.skill, score.variant) == ("triage", "")
    assert (score.positives, score.fired, score.recall) == (4, 3, 0.75)
    assert (score.negatives, score.false_triggers, score.false_trigger_rate) == (2, 1, 0.5)
    data = score.to_dict()
    assert data["recall_ci95"] == list(wilson(3, 4))
    assert data["false_trigger_ci95"] == list(wilson(1, 2))


def test_the_summary_gives_each_skill_and_variant_its_intervals() -> None:
    runs = [*RUNS, run("fires", "skill_used", True, variant="pr")]
    assert skill_lines(runs) == [
        "skill triage: recall 3/4 (75%, 95% CI 30%–95%) · false triggers 1/2 (50%, 95% CI 9%–91%)",
        "skill triage [pr]: recall 1/1 (100%, 95% CI 21%–100%) · "
        "false triggers n/a (no negative case)",
    ]


def test_no_skill_checks_no_lines_and_an_empty_list() -> None:
    plain = [RunRecord("c", "evals/c.yaml", 1, "AGENTS.md", "normal", outcome="passed")]
    assert skill_lines(plain) == []
    assert scores(plain) == []


def test_the_skill_survives_the_records_round_trip() -> None:
    record = RUNS[0]
    assert RunRecord.from_dict(record.to_dict()).checks == record.checks
    assert "skill" not in record.checks[1].to_dict()


def test_shortfalls_name_the_skill_and_the_limit() -> None:
    runs = [*RUNS, run("fires", "skill_used", False, variant="pr", outcome="failed")]
    limits = SkillLimits(min_recall=0.8, max_false_trigger=0.5)
    assert shortfalls(scores(runs), limits) == [
        "skill triage: recall 75% below eval_skill_min_recall 80%",
        "skill triage [pr]: recall 0% below eval_skill_min_recall 80%",
    ]
    assert shortfalls(scores(runs), SkillLimits(max_false_trigger=0.4)) == [
        "skill triage: false-trigger rate 50% above eval_skill_max_false_trigger 40%"
    ]
    assert not SkillLimits().active
