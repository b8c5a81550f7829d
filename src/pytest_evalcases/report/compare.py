"""``evalcases compare``'s output: two results files side by side, as lines."""

from __future__ import annotations

from pathlib import Path

from pytest_evalcases.report.table import table
from pytest_evalcases.results.baseline import BaselineResult
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.text import percent, usd


def lines(
    result: BaselineResult,
    before: ResultsDocument,
    after: ResultsDocument,
    a_path: Path,
    b_path: Path,
    *,
    every: bool = False,
) -> list[str]:
    """The comparison: runs, case table (every case, or those that differ), numbers,
    pins, verdict."""
    out = [
        f"A: {a_path} ({before.date or '?'}, verdict {before.verdict})",
        f"B: {b_path} ({after.date or '?'}, verdict {after.verdict})",
        "",
    ]
    rows = [r for r in result.rows if every or r.change or r.before != r.after]
    if rows:
        out += table(
            ["case", "variant", "A", "B", "change"],
            [[r.case_id, r.variant, r.before or "-", r.after or "-", r.change] for r in rows],
        )
    else:
        out.append(f"every one of {len(result.rows)} cases has the same outcome in A and B")
    out.append("")
    out += table(
        ["", "A", "B"],
        [
            ["pass rate", percent(result.pass_rate[0]), percent(result.pass_rate[1])],
            ["tokens per run", _tokens(result.tokens_mean[0]), _tokens(result.tokens_mean[1])],
            ["cost per run", usd(result.cost_mean[0]), usd(result.cost_mean[1])],
            ["regressed", "", str(len(result.regressed))],
            ["improved", "", str(len(result.improved))],
        ],
    )
    out.append("")
    if result.pin_differences:
        out.append("pins differ (results may not be comparable):")
        out += [f"  {d}" for d in result.pin_differences]
    else:
        out.append("pins: the same")
    if result.blocked:
        out.append("B would be BLOCKED against A: " + "; ".join(result.reasons))
    else:
        out.append("B passes the baseline gate against A")
    return out


def _tokens(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"
