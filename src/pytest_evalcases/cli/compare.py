"""``evalcases compare A.json B.json``: the baseline gate offline, as a table (SPEC 5.3).

B is compared with A exactly as ``pytest --eval-baseline A.json`` compares a run: the
exit status is 1 when B would be blocked against A, else 0.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_evalcases.results import baseline
from pytest_evalcases.results import files as resultsfile


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="Compare two results files (B against the baseline A)",
        description="Per-case outcomes of two results files side by side, pass rate, "
        "tokens, cost and differing pins. Exit status 1 when B would be blocked by "
        "pytest --eval-baseline A.",
    )
    parser.add_argument("before", metavar="A.json", type=Path, help="The baseline")
    parser.add_argument("after", metavar="B.json", type=Path, help="The run compared with it")
    parser.add_argument(
        "--tolerance",
        type=_points,
        default=baseline.DEFAULT_TOLERANCE,
        metavar="POINTS",
        help="Percentage points the pass rate may drop (default: %(default)g)",
    )
    parser.add_argument(
        "--all", action="store_true", help="List every case, not only those that differ"
    )
    parser.set_defaults(func=run)


def _points(value: str) -> float:
    try:
        points = float(value)
    except ValueError:
        points = -1.0
    if not points >= 0:
        raise argparse.ArgumentTypeError(f"expected a number of points >= 0, got {value!r}")
    return points


def run(args: argparse.Namespace) -> int:
    before, after = resultsfile.load(args.before), resultsfile.load(args.after)
    result = baseline.check(before, after, args.tolerance, label=str(args.before))
    for line in render(result, before, after, args.before, args.after, every=args.all):
        print(line)
    return 1 if result.blocked else 0


def render(
    result: baseline.BaselineResult,
    before: dict[str, Any],
    after: dict[str, Any],
    a_path: Path,
    b_path: Path,
    *,
    every: bool = False,
) -> list[str]:
    """The comparison as lines: runs, case table, numbers, pins, verdict."""
    out = [
        f"A: {a_path} ({before.get('date', '?')}, verdict {before.get('verdict', '?')})",
        f"B: {b_path} ({after.get('date', '?')}, verdict {after.get('verdict', '?')})",
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
            ["pass rate", _pct(result.pass_rate[0]), _pct(result.pass_rate[1])],
            ["tokens per run", _num(result.tokens_mean[0]), _num(result.tokens_mean[1])],
            ["cost per run", _usd(result.cost_mean[0]), _usd(result.cost_mean[1])],
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


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns, two spaces apart, with a rule under the headers."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def _usd(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"
