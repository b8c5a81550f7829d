"""``evalcases show RESULTS_FILE RUN``: a recorded run's exchange with its model, read
back as a conversation (docs/replay.md, "Reading a run")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_evalcases.report import show


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", metavar="RESULTS_FILE", type=Path, help="A results file")
    parser.add_argument(
        "run",
        metavar="RUN",
        help="The run, named as pytest names its item: case-id, case-id[variant], "
        "case-id[r1] or case-id[variant-r1]",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="Show the whole system prompt, tool inputs and results, uncut",
    )


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(show.show(args.results, args.run, full=args.full))
    return 0
