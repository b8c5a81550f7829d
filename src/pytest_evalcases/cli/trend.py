"""``evalcases trend [DIR]``: the results files of a directory over time
(docs/results.md, "evalcases trend")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_evalcases import defaults
from pytest_evalcases.cases.rootdir import results_dir
from pytest_evalcases.errors import UsageError
from pytest_evalcases.report import trend as report
from pytest_evalcases.report import trendpage
from pytest_evalcases.results import drift, trend
from pytest_evalcases.results.reader import load_baseline


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "directory",
        metavar="DIR",
        nargs="?",
        type=Path,
        default=None,
        help="Directory of results files (default: the eval_results_dir of the pytest "
        f"configuration here, else {defaults.RESULTS_DIR})",
    )
    parser.add_argument(
        "--last",
        metavar="K",
        type=_positive,
        default=trend.DEFAULT_LAST,
        help="How many of the latest runs to consider (default: %(default)s)",
    )
    parser.add_argument(
        "--alert",
        action="store_true",
        help="Check for drift instead: exit 1, naming the rule, when a series' pass rate "
        f"is more than {defaults.DRIFT_PASS_RATE_DROP:g} points below its baseline on its "
        f"last {defaults.DRIFT_RUNS} whole-suite runs, or its mean cost per case over the "
        f"last {defaults.DRIFT_COST_DAYS} days is above "
        f"{defaults.DRIFT_COST_FACTOR:g}x the baseline's",
    )
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        type=Path,
        default=None,
        help="Results file to check drift against (default: each series' first "
        "whole-suite run under its current configuration)",
    )
    parser.add_argument(
        "--html",
        metavar="PATH",
        type=Path,
        default=None,
        help="Also write the trend as a self-contained HTML page with a chart",
    )


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value!r}")
    return number


def run(args: argparse.Namespace) -> int:
    directory = args.directory or _relative(results_dir(Path.cwd()))
    found = trend.history(directory)
    for problem in found.problems:
        print(f"evalcases trend: warning: {problem}", file=sys.stderr)
    if args.baseline is not None and not (args.alert or args.html):
        raise UsageError("--baseline is what --alert compares with: give --alert or --html")
    baseline = load_baseline(args.baseline) if args.baseline is not None else None
    # Drift is judged over the whole history: the baseline may be older than the window.
    alerts = drift.check(found.documents, baseline) if args.alert or args.html else None
    window = found.documents[-args.last :]
    computed = trend.compute(window)
    if args.html is not None:
        trendpage.write(args.html, computed, alerts, directory=str(directory))
        print(f"trend page: {args.html}")
    if args.alert and alerts is not None:
        for note in alerts.notes:
            print(f"evalcases trend: {note}", file=sys.stderr)
        for line in alerts.lines():
            print(line)
        return 1 if alerts.fired else 0
    if not found.documents:
        print(f"no results files in {directory}")
        if found.red_first:
            print(report.left_out(found.red_first))
        return 0
    for line in report.lines(computed, len(found.documents), found.red_first):
        print(line)
    return 0


def _relative(path: Path) -> Path:
    """``path`` relative to the working directory when below it (for messages)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path
