"""Drift alerts over the series of a results directory (docs/results.md, "Drift alerts").

``evalcases trend --alert`` runs on a schedule against an unchanged configuration and
fires when a series drifts from its baseline: its pass rate more than
``DRIFT_PASS_RATE_DROP`` points below the baseline's on each of its last ``DRIFT_RUNS``
whole-suite runs, or its mean cost per case over the last ``DRIFT_COST_DAYS`` days (by
the files' dates) above ``DRIFT_COST_FACTOR`` times the baseline's. The baseline is a
results file given, else the series' first whole-suite run under its current
configuration: a configuration change starts a new baseline, it is never drift. Runs of
part of the suite and cut-short runs are left out (red-first files never reach a trend).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pytest_evalcases import defaults
from pytest_evalcases.errors import UsageError
from pytest_evalcases.kinds import DriftRule
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.trend import Point, Series, SeriesKey, compute
from pytest_evalcases.results.writer import parse_date
from pytest_evalcases.text import percent, plural


@dataclass(frozen=True)
class Limits:
    """The numbers the rules fire at (``defaults.DRIFT_*``)."""

    #: Percentage points below the baseline's pass rate.
    drop: float = defaults.DRIFT_PASS_RATE_DROP
    runs: int = defaults.DRIFT_RUNS
    cost_factor: float = defaults.DRIFT_COST_FACTOR
    days: int = defaults.DRIFT_COST_DAYS


@dataclass(frozen=True)
class Baseline:
    """What a series is compared with: one whole-suite run of it."""

    point: Point
    #: ``2026-12-01T09:30:00.123Z, the first whole-suite run under this configuration``.
    label: str

    @property
    def cost_per_case(self) -> float | None:
        return _per_case([self.point])


@dataclass(frozen=True)
class Alert:
    """One rule that fired for one series."""

    series: SeriesKey
    rule: DriftRule
    #: What the rule saw, one sentence (without the series).
    detail: str
    #: The dates of the runs it fired on, oldest first.
    dates: tuple[str, ...]

    def line(self) -> str:
        """``drift (pass rate): agent codex · model gpt-5: ...``."""
        return f"drift ({self.rule}): {self.series.describe()}: {self.detail}"


@dataclass(frozen=True)
class Drift:
    """The alerts of every series, and what was checked."""

    alerts: tuple[Alert, ...]
    #: The series with a baseline and whole-suite runs to judge.
    checked: int
    #: Why a series was not judged, one line each.
    notes: tuple[str, ...] = ()

    @property
    def fired(self) -> bool:
        return bool(self.alerts)

    def lines(self, limits: Limits = Limits()) -> list[str]:
        """The alerts, each on a line, else the one line ``no drift: ...``."""
        if self.alerts:
            return [a.line() for a in self.alerts]
        return [
            f"no drift: {self.checked} series checked (pass rate "
            f"within {limits.drop:g} points of the baseline's on the last "
            f"{plural(limits.runs, 'whole-suite run')}, mean cost per case within "
            f"{limits.cost_factor:g}x over the last {plural(limits.days, 'day')})"
        ]


def check(
    docs: Sequence[ResultsDocument],
    baseline: ResultsDocument | None = None,
    limits: Limits = Limits(),
) -> Drift:
    """The drift of each series of ``docs`` (oldest first, red-first files left out)
    against ``baseline``, else each series' own (:func:`implicit_baseline`)."""
    if baseline is not None and (not baseline.complete_suite or baseline.is_red_first):
        raise UsageError(
            "a drift baseline must be a whole-suite run: compare like with like "
            "(this one ran part of the suite, was cut short, or is red-first)"
        )
    given = compute([baseline]).series if baseline is not None else []
    newest = max((d for d in (parse_date(doc.date) for doc in docs) if d), default=None)
    alerts: list[Alert] = []
    notes: list[str] = []
    checked = 0
    for line in compute(docs).series:
        base = _given(line.key, given, baseline) if baseline is not None else None
        if baseline is not None and base is None:
            notes.append(f"{line.key.describe()}: not in the baseline file; not judged")
            continue
        base = base or implicit_baseline(line)
        if base is None:
            continue
        checked += 1
        alerts += _pass_rate(line, base, limits)
        alerts += _cost(line, base, limits, newest, same_config=baseline is None)
    return Drift(tuple(alerts), checked, tuple(notes))


def implicit_baseline(line: Series) -> Baseline | None:
    """The series' first whole-suite run under the configuration of its latest one."""
    whole = [p for p in line.points if p.whole]
    if not whole:
        return None
    current = whole[-1].config
    first = next(p for p in whole if p.config == current)
    return Baseline(first, f"{first.document.date}, first whole-suite run under this configuration")


def _given(
    key: SeriesKey, series: Sequence[Series], doc: ResultsDocument | None
) -> Baseline | None:
    """The baseline file's run of the series: the same series, else the same variant,
    else its only one."""
    match = next((s for s in series if s.key == key), None)
    match = match or next((s for s in series if s.key.variant == key.variant), None)
    if match is None and len(series) == 1:
        match = series[0]
    if match is None or doc is None:
        return None
    return Baseline(match.points[0], f"{doc.date}, the baseline file")


def _pass_rate(line: Series, base: Baseline, limits: Limits) -> list[Alert]:
    rated = [p for p in line.points if p.whole and p.pass_rate is not None]
    last = rated[-limits.runs :]
    floor = base.point.pass_rate
    if floor is None or len(last) < limits.runs:
        return []
    # Rounded to the shown precision, so that 80.0 % is not "more than 10 points"
    # below 90.0 % by a float's last bit.
    if not all(round((floor - (p.pass_rate or 0)) * 100, 6) > limits.drop for p in last):
        return []
    rates = ", ".join(percent(p.pass_rate) for p in last)
    dates = tuple(p.document.date for p in last)
    return [
        Alert(
            line.key,
            "pass rate",
            f"{rates} on the last {plural(len(last), 'whole-suite run')} "
            f"({', '.join(dates)}), each more than {limits.drop:g} points below the "
            f"baseline's {percent(floor)} ({base.label})",
            dates,
        )
    ]


def _cost(
    line: Series, base: Baseline, limits: Limits, newest: datetime | None, *, same_config: bool
) -> list[Alert]:
    was = base.cost_per_case
    if newest is None or not was:
        return []
    # The days end at the newest file of the directory, so that a series no longer
    # run has no recent runs; the baseline run is what they are compared with.
    since = newest - timedelta(days=limits.days)
    recent = [
        p
        for p in line.points
        if p.whole
        and p.cost is not None
        and p is not base.point
        and (not same_config or p.config == base.point.config)
        and (when := parse_date(p.document.date)) is not None
        and when >= since
    ]
    now = _per_case(recent)
    if now is None or round(now, 9) <= round(limits.cost_factor * was, 9):
        return []
    return [
        Alert(
            line.key,
            "cost",
            f"mean cost per case ${now:.4f} over the last {plural(limits.days, 'day')} "
            f"({plural(len(recent), 'whole-suite run')}), above {limits.cost_factor:g}x "
            f"the baseline's ${was:.4f} ({base.label})",
            tuple(p.document.date for p in recent),
        )
    ]


def _per_case(points: Sequence[Point]) -> float | None:
    """The cost of the runs over their cases, of the runs that reported one."""
    paid = [p for p in points if p.cost is not None and p.cases]
    cases = sum(p.cases for p in paid)
    return sum(p.cost or 0.0 for p in paid) / cases if cases else None
