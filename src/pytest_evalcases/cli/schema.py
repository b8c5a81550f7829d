"""``evalcases schema [--task]``: print the JSON Schema of case files (authoring/schema.py)."""

from __future__ import annotations

import argparse
import json
import sys

from pytest_evalcases.authoring import schema


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--task",
        action="store_true",
        help="The schema of a task directory's checks.yaml instead",
    )


def run(args: argparse.Namespace) -> int:
    data = schema.task_schema() if args.task else schema.case_schema()
    json.dump(data, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
