"""``evalcases compare A.json B.json``: the baseline gate offline, as a table
(docs/results.md, "The baseline gate").

B is compared with A exactly as ``pytest --eval-baseline A.json`` compares a run: the
exit status is 1 when B would be blocked against A, else 0. Red-first files (authoring
runs, their outcomes inverted) are refused on either side.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pytest_evalcases import defaults
from pytest_evalcases.report import compare
from pytest_evalcases.results import baseline
from pytest_evalcases.results import reader as resultsfile


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("before", metavar="A.json", type=Path, help="The baseline")
    parser.add_argument("after", metavar="B.json", type=Path, help="The run compared with it")
    parser.add_argument(
        "--tolerance",
        type=_points,
        default=defaults.BASELINE_TOLERANCE,
        metavar="POINTS",
        help="Percentage points the pass rate may drop (default: %(default)g)",
    )
    parser.add_argument(
        "--all", action="store_true", help="List every case, not only those that differ"
    )


def _points(value: str) -> float:
    try:
        points = float(value)
    except ValueError:
        points = -1.0
    if not points >= 0:
        raise argparse.ArgumentTypeError(f"expected a number of points >= 0, got {value!r}")
    return points


def run(args: argparse.Namespace) -> int:
    before = resultsfile.load_baseline(args.before)
    after = resultsfile.load_baseline(args.after, "compared")
    result = baseline.check(before, after, args.tolerance, label=str(args.before))
    for line in compare.lines(result, before, after, args.before, args.after, every=args.all):
        print(line)
    return 1 if result.blocked else 0
