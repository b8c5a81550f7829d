"""``evalcases new ID``: write a case file from the commented template (authoring/new.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_evalcases.authoring import new


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="Case id, kebab-case (the file name too)")
    parser.add_argument(
        "--dir", type=Path, default=Path("evals"), help="Directory (default: evals)"
    )
    parser.add_argument(
        "--format", choices=("yaml", "json"), default="yaml", help="File format (default: yaml)"
    )


def run(args: argparse.Namespace) -> int:
    # Before writing: a directory pytest never collects is refused.
    step = new.next_step(args.dir / f"{args.id}.{args.format}", Path.cwd())
    target = new.create(args.id, args.dir, args.format)
    print(target)
    if step.hint:
        print(f"note: {step.hint}", file=sys.stderr)
    ignore = new.results_hint(Path.cwd())
    if ignore:
        print(f"note: {ignore}", file=sys.stderr)
    print(f"next: edit it, then confirm it fails first: {step.command}", file=sys.stderr)
    return 0
