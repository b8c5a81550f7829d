"""``evalcases trend [DIR]``: the results files of a directory over time
(docs/results.md, "evalcases trend")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_evalcases import defaults
from pytest_evalcases.cases.rootdir import results_dir
from pytest_evalcases.report import trend as report
from pytest_evalcases.results import trend


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
    if not found.documents:
        print(f"no results files in {directory}")
        if found.red_first:
            print(report.left_out(found.red_first))
        return 0
    window = found.documents[-args.last :]
    for line in report.lines(trend.compute(window), len(found.documents), found.red_first):
        print(line)
    return 0


def _relative(path: Path) -> Path:
    """``path`` relative to the working directory when below it (for messages)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path
