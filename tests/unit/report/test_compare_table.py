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
    before = doc([run("alpha", "passed"), run("beta", "passed")])
    after = doc([run("alpha", "passed"), run("beta", "failed", cost_usd=0.01)])
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
        "                A       B",
        "--------------  ------  -------",
        "pass rate       100.0%  50.0%",
        "tokens per run  n/a     n/a",
        "cost per run    n/a     $0.0100",
        "regressed               1",
        "improved                0",
        "",
        "pins: the same",
        "B would be BLOCKED against A: pass rate 50.0% dropped more than 3 points below "
        "the baseline's 100.0%; 1 case passed in the baseline and fails now: beta",
    ]
    every = compare.lines(result, before, after, Path("a.json"), Path("b.json"), every=True)
    assert every[5] == "alpha" + " " * 11 + "passed  passed"
