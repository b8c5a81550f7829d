"""A variant's metrics in words (docs/results.md, "Metrics"): the ``eval gate`` section's
lines, and the rows of the tables of the HTML report and ``evalcases compare``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_evalcases.results.metrics import Spread, VariantMetrics, WallTimes
from pytest_evalcases.text import plural, ratio, usd

#: The runaway runs a variant lists at most; the rest are counted.
SHOWN_RUNAWAYS = 5
#: A table cell with nothing to say.
NOTHING = "-"


def lines(m: VariantMetrics, *, runs: bool = True) -> list[str]:
    """The ``eval gate`` lines of a variant's metrics, only those with something to say:
    with ``runs`` (repeats) the success rate of its graded runs and its interval; wall
    time of passed and of failed runs; tokens and cost per run when more than one run
    reported them; each runaway run; failures by mode; errors by kind."""
    out = []
    if runs and m.graded:
        out.append(f"  runs {success(m)}")
    walls = [
        f"{percentiles(w)} ({w.runs} {what})"
        for w, what in ((m.wall_passed, "passed"), (m.wall_failed, "failed"))
        if w.runs
    ]
    if walls:
        out.append("  wall " + " · ".join(walls))
    spread = [
        f"{what} {_spread(s, money)} per run"
        for what, s, money in (("tokens", m.tokens, False), ("cost", m.cost, True))
        if s is not None and s.runs > 1
    ]
    if spread:
        out.append("  " + " · ".join(spread))
    for runaway in m.runaways[:SHOWN_RUNAWAYS]:
        out.append(
            f"  runaway: {runaway.label} {runaway.tokens:,} tokens "
            f"({runaway.times_mean:.1f}× the mean of all runs)"
        )
    if len(m.runaways) > SHOWN_RUNAWAYS:
        out.append(f"  … and {plural(len(m.runaways) - SHOWN_RUNAWAYS, 'more runaway')}")
    for what, counts in (
        ("failures by mode", m.failures_by_mode),
        ("errors by kind", m.errors_by_kind),
    ):
        if counts:
            out.append(f"  {what}: {_counts(counts)}")
    return out


def rows(columns: Sequence[VariantMetrics | None]) -> list[list[str]]:
    """One row per metric, a cell per column (a variant, or a results file; ``None``
    where it did not run), leaving out the rows with nothing to say in any column."""
    found = [
        ["runs", *(success(m) if m and m.graded else NOTHING for m in columns)],
        ["wall time, passed", *(_wall(m.wall_passed) if m else NOTHING for m in columns)],
        ["wall time, failed", *(_wall(m.wall_failed) if m else NOTHING for m in columns)],
        ["tokens per run", *(_per_run(m.tokens, False) if m else NOTHING for m in columns)],
        ["cost per run", *(_per_run(m.cost, True) if m else NOTHING for m in columns)],
        ["runaways", *(_runaways(m) if m else NOTHING for m in columns)],
        [
            "failures by mode",
            *(
                _counts(m.failures_by_mode) if m and m.failures_by_mode else NOTHING
                for m in columns
            ),
        ],
        [
            "errors by kind",
            *(_counts(m.errors_by_kind) if m and m.errors_by_kind else NOTHING for m in columns),
        ],
    ]
    return [row for row in found if any(cell != NOTHING for cell in row[1:])]


def success(m: VariantMetrics) -> str:
    """``7/10 passed (70%, 95% CI 40%–89%)``."""
    lo, hi = m.ci95 or (0.0, 1.0)
    return f"{m.passed}/{m.graded} passed ({ratio(m.passed, m.graded)}, 95% CI {lo:.0%}–{hi:.0%})"


def percentiles(w: WallTimes) -> str:
    """``p50 12.1 s · p90 30.2 s · p99 41.0 s``; ``40.9 s`` for one run."""
    if w.runs == 1 and w.p50 is not None:
        return f"{w.p50:,.1f} s"
    return " · ".join(
        f"{name} {value:,.1f} s"
        for name, value in (("p50", w.p50), ("p90", w.p90), ("p99", w.p99))
        if value is not None
    )


def _wall(w: WallTimes) -> str:
    return f"{percentiles(w)} ({plural(w.runs, 'run')})" if w.runs else NOTHING


def _spread(s: Spread, money: bool) -> str:
    """``12,300 ± 4,100``, or ``$0.0411 ± $0.0011``."""
    if money:
        return f"{usd(s.mean)} ± {usd(s.sd)}"
    return f"{s.mean:,.0f} ± {s.sd:,.0f}"


def _per_run(s: Spread | None, money: bool) -> str:
    """``12,300 ± 4,100 (10 runs)``: the runs that reported the figure; one run's has
    no spread."""
    if s is None:
        return NOTHING
    shown = _spread(s, money) if s.runs > 1 else (usd(s.mean) if money else f"{s.mean:,.0f}")
    return f"{shown} ({plural(s.runs, 'run')})"


def _runaways(m: VariantMetrics) -> str:
    if not m.runaways:
        return NOTHING
    shown = "; ".join(
        f"{r.label} {r.tokens:,} ({r.times_mean:.1f}×)" for r in m.runaways[:SHOWN_RUNAWAYS]
    )
    more = len(m.runaways) - SHOWN_RUNAWAYS
    return shown + (f"; and {more} more" if more > 0 else "")


def _counts(counts: Mapping[str, int]) -> str:
    """``tool_misuse 2, unclassified 1``."""
    return ", ".join(f"{word} {n}" for word, n in counts.items())
