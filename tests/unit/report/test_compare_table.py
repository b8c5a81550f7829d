"""``evalcases compare``'s table, and the table helper."""

from __future__ import annotations

from pathlib import Path

from pytest_evalcases.report import compare
from pytest_evalcases.report.table import table
from pytest_evalcases.results import baseline

from ..results.records import doc, run


def test_the_table_pads_columns_and_strips_trailing_space() -> None:
    assert table(["case", "B"], [["alpha", "x"], ["b", ""]]) == [
        "case   B",
        "-----  -",
        "alpha  x",
        "b",
    ]


def test_the_comparison_lists_the_cases_that_differ_and_the_verdict() -> None:
    before = doc([run("alpha", "passed", duration=10.0), run("beta", "passed", duration=20.0)])
    after = doc(
        [
            run("alpha", "passed", duration=12.0),
            run("beta", "failed", cost_usd=0.01, duration=30.5, failure_mode="tool_misuse"),
        ]
    )
    result = baseline.check(before, after, label="a.json")

    lines = compare.lines(result, before, after, Path("a.json"), Path("b.json"))

    assert lines == [
        "A: a.json (2026-12-01T09:30:00.000Z, verdict PASS)",
        "B: b.json (2026-12-01T09:30:00.000Z, verdict BLOCKED)",
        "",
        "case  variant  A       B       change",
        "----  -------  ------  ------  ---------",
        "beta           passed  failed  regressed",
        "",
        "                                 A       B",
        "-------------------------------  ------  -------",
        "pass rate (critical and normal)  100.0%  50.0%",
        "tokens per run                   n/a     n/a",
        "cost per run                     n/a     $0.0100",
        "regressed                                1",
        "improved                                 0",
        "",
        "metrics            A                                              B",
        "-----------------  ---------------------------------------------  "
        "-------------------------------",
        "runs               2/2 passed (100%, 95% CI 34%–100%)             "
        "1/2 passed (50%, 95% CI 9%–91%)",
        "wall time, passed  p50 10.0 s · p90 20.0 s · p99 20.0 s (2 runs)  12.0 s (1 run)",
        "wall time, failed  -                                              30.5 s (1 run)",
        "cost per run       -                                              $0.0100 (1 run)",
        "failures by mode   -                                              tool_misuse 1",
        "",
        "pins: the same",
        "B would be BLOCKED against A: pass rate (critical and normal) 50.0% dropped more "
        "than 3 points below the baseline's 100.0%; 1 case passed in the baseline and fails "
        "now: beta",
    ]
    every = compare.lines(result, before, after, Path("a.json"), Path("b.json"), every=True)
    assert every[5] == "alpha" + " " * 11 + "passed  passed"


def test_the_comparison_sets_each_skills_trigger_scores_side_by_side() -> None:
    from pytest_evalcases.results.record import CheckRecord, RunRecord

    def skill_run(case: str, outcome: str, kind: str, fired: bool) -> RunRecord:
        passed = fired if kind == "skill_used" else not fired
        check = CheckRecord("s", kind, None, passed, "", skill="triage")
        return run(case, outcome, checks=[check])

    before = doc(
        [
            skill_run("fires", "passed", "skill_used", True),
            skill_run("quiet", "passed", "skill_not_used", False),
        ]
    )
    after = doc(
        [
            skill_run("fires", "failed", "skill_used", False),
            skill_run("quiet", "failed", "skill_not_used", True),
        ]
    )
    result = baseline.check(before, after, label="a.json")

    lines = compare.lines(result, before, after, Path("a.json"), Path("b.json"))

    start = lines.index(
        "skill   variant  recall A      recall B    false triggers A  false triggers B"
    )
    assert lines[start + 2] == (
        "triage           1/1 (100.0%)  0/1 (0.0%)  0/1 (0.0%)        1/1 (100.0%)"
    )
