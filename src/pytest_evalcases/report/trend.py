"""``evalcases trend``'s output: the trend of a results directory, as lines."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_evalcases import defaults
from pytest_evalcases.report.table import table
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.stats import mean_sd, percentile
from pytest_evalcases.results.trend import (
    CaseHistory,
    Series,
    Trend,
    costs,
    tokens,
)
from pytest_evalcases.text import percent, plural


def left_out(red_first: int) -> str:
    """The note on the red-first files a trend leaves out."""
    return (
        f"left out {plural(red_first, 'red-first run')} "
        "(authoring runs under --eval-red-first, their outcomes inverted)"
    )


def lines(trend: Trend, available: int, red_first: int = 0) -> list[str]:
    """The trend report: runs, flaky cases, calibration, wall time, usage, runaways.
    ``available`` counts the runs in the directory; ``red_first`` the files left out."""
    out = [f"last {len(trend.runs)} of {available} runs"]
    if red_first:
        out.append(left_out(red_first))
    out += ["", *LEGEND]
    for line in trend.series:
        out += ["", f"series: {line.key.describe()} ({plural(len(line.points), 'run')})"]
        out += _points(line)
    partial = sum(1 for d in trend.runs if not d.complete_suite)
    if partial:
        out.append(
            f"pass rates are of whole-suite runs only: {plural(partial, 'run')} of part "
            "of the suite or cut short (their cases count in the figures below)"
        )
    out += ["", "flaky cases (outcome changed between runs under the same configuration):"]
    flaky = sorted(
        (c for c in trend.cases if c.flips),
        key=lambda c: (-(c.flake_rate or 0), c.name),
    )
    if flaky:
        out += table(
            ["case", "passed", "flips", "flake rate"],
            [
                [
                    c.name,
                    f"{c.decided.count('passed')}/{len(c.decided)}",
                    str(c.flips),
                    percent(c.flake_rate),
                ]
                for c in flaky
            ],
        )
    else:
        out.append("  none")
    changed = [c for c in trend.cases if c.config_changes]
    if changed:
        out += ["", "outcome changed with the configuration (not counted as flaky):"]
        out += [f"  {c.name}: {plural(c.config_changes, 'time')}" for c in changed]
    out += ["", f"calibration over the last {len(trend.runs)} runs:"]
    out += _names("  always passed (saturated, uninformative)", trend.saturated)
    out += _names("  always failed (no configuration satisfies them?)", trend.always_failing)
    out += ["", "wall time per run (seconds):"]
    out += table(
        ["outcome", "runs", "p50", "p90", "p99"],
        [
            [outcome, str(len(d)), *(_secs(percentile(d, p)) for p in (50, 90, 99))]
            for outcome in ("passed", "failed")
            for d in [trend.durations(outcome)]
        ],
    )
    usage_rows = []
    for c in trend.cases:
        spent = [v for _, v in tokens(c)]
        paid = [v for _, v in costs(c)]
        if spent or paid:
            usage_rows.append([c.name, _mean_sd(spent, "{:,.0f}"), _mean_sd(paid, "${:.4f}")])
    out += ["", "tokens and cost per case (mean ± sd):"]
    out += table(["case", "tokens", "cost"], usage_rows) if usage_rows else ["  not reported"]
    runaways = trend.runaways()
    if runaways:
        out += ["", f"runaway runs (over {defaults.RUNAWAY_FACTOR:g}x the case's mean):"]
        for case, record, what, value, mean in runaways:
            shown = (
                f"${value:.4f} vs ${mean:.4f}" if what == "cost" else f"{value:,.0f} vs {mean:,.0f}"
            )
            out.append(f"  {case.name} r{record.repetition}: {what} {shown}")
    return out


#: What the runs' figures count, said once above them.
LEGEND = (
    "passed: the cases that passed of those graded (passed or failed, advisory included);",
    "pass rate: the same share; errors: cases with no verdict, counted apart",
)


def _points(line: Series) -> list[str]:
    """The series' runs as a table, a change of configuration marked before the run it
    reached first."""
    # A pass rate over part of the suite is not comparable with the whole suite's: such
    # runs are listed, marked, without one (docs/results.md, "evalcases trend").
    rows = table(
        ["date", "passed", "pass rate", "errors", "verdict", "suite"],
        [
            [
                p.document.date or "?",
                f"{p.passed}/{p.graded}",
                percent(p.pass_rate) if p.document.complete_suite else "-",
                str(p.errors),
                p.verdict,
                suite(p.document),
            ]
            for p in line.points
        ],
    )
    out = rows[:2]
    for point, row in zip(line.points, rows[2:], strict=True):
        if point.config_change:
            shown = ", ".join(point.config_change[:5])
            more = (
                f" and {len(point.config_change) - 5} more" if len(point.config_change) > 5 else ""
            )
            out.append(f"-- configuration changed: {shown}{more}")
        out.append(row)
    return out


def suite(doc: ResultsDocument) -> str:
    """What part of the suite a run covered: ``whole``, ``part: 3 of 10 cases selected
    (-m critical)``, ``incomplete: interrupted``."""
    if not doc.complete:
        return "incomplete: " + ("; ".join(doc.incomplete_reasons) or "did not finish")
    if doc.complete_suite:
        return "whole"
    if doc.selection is not None and not doc.selection.whole:
        return "part: " + doc.selection.describe()
    return f"part: shard {doc.shard}" if doc.shard else "part"


def _mean_sd(values: Sequence[float], fmt: str) -> str:
    if not values:
        return "n/a"
    mean, sd = mean_sd(values)
    return f"{fmt.format(mean)} ± {fmt.format(sd)}"


def _names(title: str, cases: Sequence[CaseHistory]) -> list[str]:
    if not cases:
        return [f"{title}: none"]
    return [f"{title}: {len(cases)}", *(f"    {c.name}" for c in cases)]


def _secs(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
