"""Drift alerts (docs/results.md, "Drift alerts"): the pass-rate rule on the last two
whole-suite runs, the cost rule over the last seven days, the baseline of each series,
configuration changes and partial runs."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from pytest_evalcases.errors import UsageError
from pytest_evalcases.results import drift
from pytest_evalcases.results.document import ResultsDocument, SuiteSelection

from .records import STARTED, doc, run

PART = SuiteSelection(("-k", "c0"), 10, 9, 10, 9)


def day(
    n: float,
    passed: int,
    *,
    cases: int = 10,
    cost: float | None = None,
    config: str = "v1",
    agent: str = "claude",
    **kw: Any,
) -> ResultsDocument:
    """A run on day ``n`` of December (fractions are hours) of ``cases`` cases of which
    the first ``passed`` pass, each run costing ``cost``, under configuration ``config``."""
    records = [
        run(f"c{i}", "passed" if i < passed else "failed", cost_usd=cost, model="m-1")
        for i in range(cases)
    ]
    pins = {"agent": agent, "config": {"": {"AGENTS.md": config}}}
    started = STARTED + timedelta(days=n - 1)
    return doc(records, started=started, pins=pins, **kw)


def test_the_pass_rate_more_than_ten_points_below_on_the_last_two_runs_fires() -> None:
    runs = [day(1, 9), day(2, 9), day(3, 7), day(4, 7)]

    found = drift.check(runs)

    assert found.fired
    assert [(a.rule, a.dates) for a in found.alerts] == [
        ("pass rate", (runs[2].date, runs[3].date))
    ]
    assert found.lines() == [
        "drift (pass rate): agent claude · model m-1: 70.0%, 70.0% on the last 2 whole-suite "
        f"runs ({runs[2].date}, {runs[3].date}), each more than 10 points below the "
        f"baseline's 90.0% ({runs[0].date}, first whole-suite run under this configuration)"
    ]


@pytest.mark.parametrize(
    ("rates", "why"),
    [
        ([9, 9, 9, 7], "only the last run fell"),
        ([9, 7, 9, 7], "the runs before the last were fine"),
        ([9, 8, 8], "exactly 10 points is not more than 10"),
        ([9], "one run is its own baseline"),
    ],
)
def test_the_pass_rate_rule_does_not_fire(rates: list[int], why: str) -> None:
    found = drift.check([day(i + 1, passed) for i, passed in enumerate(rates)])

    assert not found.fired, why
    assert found.lines() == [
        "no drift: 1 series checked (pass rate within 10 points of the baseline's on the "
        "last 2 whole-suite runs, mean cost per case within 1.5x over the last 7 days)"
    ]


def test_a_configuration_change_starts_a_new_baseline_not_drift() -> None:
    # Under v2 the suite passes 7 of 10 from its first run: a change, not a drift.
    runs = [day(1, 9), day(2, 9), day(3, 7, config="v2"), day(4, 7, config="v2")]
    assert not drift.check(runs).fired
    # ... and a fall under v2 against v2's own first run does fire.
    later = [*runs, day(5, 5, config="v2"), day(6, 5, config="v2")]
    alerts = drift.check(later).alerts
    assert [a.dates for a in alerts] == [(later[4].date, later[5].date)]
    assert f"baseline's 70.0% ({runs[2].date}, first whole-suite run" in alerts[0].detail


def test_runs_of_part_of_the_suite_and_cut_short_runs_are_left_out() -> None:
    # The last two files are a -k run of one case, which failed, and a run cut short
    # (2 of 10): the last two whole-suite runs are the ones judged.
    fine = [day(1, 9), day(2, 9), day(3, 9)]
    partial = day(4, 0, cases=1, selection=PART)
    short = day(5, 2, complete=False, incomplete_reasons=["interrupted"])
    assert not drift.check([*fine, partial, short]).fired

    fell = [day(1, 9), day(2, 7), day(3, 7), partial, short]
    assert [a.dates for a in drift.check(fell).alerts] == [(fell[1].date, fell[2].date)]
    # Nor is a partial run ever a series' baseline.
    assert not drift.check([day(1, 1, cases=1, selection=PART), day(2, 9), day(3, 8)]).fired


def test_each_series_is_judged_on_its_own() -> None:
    runs = [
        day(1, 9, agent="claude"),
        day(1.1, 9, agent="codex"),
        day(2, 9, agent="claude"),
        day(2.1, 6, agent="codex"),
        day(3, 9, agent="claude"),
        day(3.1, 6, agent="codex"),
    ]

    found = drift.check(runs)

    assert found.checked == 2
    assert [a.line().split(":")[1].strip() for a in found.alerts] == ["agent codex · model m-1"]


def test_mean_cost_per_case_above_one_and_a_half_times_the_baseline_fires() -> None:
    runs = [day(1, 9, cost=0.10), day(6, 9, cost=0.12), day(7, 9, cost=0.14)]

    # The runs after the baseline (day 1, $0.10 a case) within 7 days: $0.13 a case.
    assert not drift.check(runs).fired
    later = [*runs, day(9, 9, cost=0.20)]
    # (0.12 + 0.14 + 0.20) / 3 = 0.1533: above $0.15.
    alerts = drift.check(later).alerts
    assert [(a.rule, a.dates) for a in alerts] == [
        ("cost", (later[1].date, later[2].date, later[3].date))
    ]
    assert alerts[0].line() == (
        "drift (cost): agent claude · model m-1: mean cost per case $0.1533 over the last "
        "7 days (3 whole-suite runs), above 1.5x the baseline's $0.1000 "
        f"({runs[0].date}, first whole-suite run under this configuration)"
    )


def test_the_cost_window_is_seven_days_by_the_files_dates() -> None:
    expensive_long_ago = [day(1, 9, cost=0.10), day(2, 9, cost=0.50), day(3, 9, cost=0.50)]
    cheap_lately = [day(10, 9, cost=0.10), day(11, 9, cost=0.12)]

    assert not drift.check([*expensive_long_ago, *cheap_lately]).fired
    # Exactly 1.5x does not fire; a cent more per case does.
    assert not drift.check([day(1, 9, cost=0.10), day(2, 9, cost=0.15)]).fired
    assert drift.check([day(1, 9, cost=0.10), day(2, 9, cost=0.16)]).fired


def test_a_baseline_file_replaces_each_series_own() -> None:
    baseline = day(0, 10, cost=0.05)
    runs = [day(1, 8), day(2, 8)]

    # 80 % is 20 points below the file's 100 %, not below the series' own 80 %.
    assert not drift.check(runs).fired
    found = drift.check(runs, baseline)
    assert [a.rule for a in found.alerts] == ["pass rate"]
    assert found.alerts[0].detail.endswith(
        f"baseline's 100.0% ({baseline.date}, the baseline file)"
    )


def test_a_baseline_of_part_of_the_suite_is_refused() -> None:
    with pytest.raises(UsageError, match="compare like with like"):
        drift.check([day(1, 9), day(2, 9)], day(0, 1, cases=1, selection=PART))
