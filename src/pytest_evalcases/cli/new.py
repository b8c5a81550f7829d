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
    target = new.create(args.id, args.dir, args.format)
    print(target)
    print(
        f"next: edit it, then confirm it fails first: pytest {target} --eval-red-first",
        file=sys.stderr,
    )
    return 0
