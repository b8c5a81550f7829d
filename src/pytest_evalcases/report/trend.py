"""``evalcases trend``'s output: the trend of a results directory, as lines."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_evalcases.report.table import table
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.trend import (
    RUNAWAY_FACTOR,
    CaseHistory,
    Trend,
    costs,
    mean_sd,
    percentile,
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
    out.append("")
    # A pass rate over part of the suite is not comparable with the whole suite's: such
    # runs are listed, marked, without one (docs/results.md, "evalcases trend").
    out += table(
        ["date", "passed", "pass rate", "verdict", "suite"],
        [
            [
                d.date or "?",
                f"{d.counts.passed}/{d.counts.total}",
                percent(d.counts.pass_rate) if d.complete_suite else "-",
                d.verdict,
                suite(d),
            ]
            for d in trend.runs
        ],
    )
    partial = sum(1 for d in trend.runs if not d.complete_suite)
    if partial:
        out.append(
            f"pass rates are of whole-suite runs only: {plural(partial, 'run')} of part "
            "of the suite or cut short (their cases count in the figures below)"
        )
    out += ["", "flaky cases (outcome changed between runs):"]
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
        out += ["", f"runaway runs (over {RUNAWAY_FACTOR:g}x the case's mean):"]
        for case, record, what, value, mean in runaways:
            shown = (
                f"${value:.4f} vs ${mean:.4f}" if what == "cost" else f"{value:,.0f} vs {mean:,.0f}"
            )
            out.append(f"  {case.name} r{record.repetition}: {what} {shown}")
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
