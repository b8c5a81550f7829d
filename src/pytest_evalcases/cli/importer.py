"""``evalcases import CLI SESSION_FILE``: a real agent session turned into a case
(authoring/importer.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_evalcases.authoring import importer
from pytest_evalcases.authoring.importing import READERS
from pytest_evalcases.text import positive_int

#: How much of each turn's prompt the list of turns shows.
TURN_CHARS = 72


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "cli", metavar="CLI", choices=tuple(READERS), help="The agent CLI: claude, codex or gemini"
    )
    parser.add_argument("session", metavar="SESSION_FILE", type=Path, help="The saved session")
    parser.add_argument(
        "--at",
        metavar="N",
        type=positive_int,
        help="The user turn to import, 1 for the first (default: the last)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        type=Path,
        help="The case file to write (default: evals/ID.yaml, the id from the prompt)",
    )


def run(args: argparse.Namespace) -> int:
    done = importer.import_session(args.cli, args.session, args.at, args.output, Path.cwd())
    print(done.case)
    if done.fixture is not None:
        print(done.fixture)
    if args.at is None and done.turns > 1:
        # The last turn by default: the others are listed, to choose one with --at.
        for number, prompt in enumerate(done.prompts, 1):
            mark = "*" if number == done.turn else " "
            print(f"{mark} {number}: {prompt[:TURN_CHARS]}", file=sys.stderr)
    print(f"note: turn {done.turn} of {done.turns}; fixture: {done.note}", file=sys.stderr)
    if done.hint:
        print(f"note: {done.hint}", file=sys.stderr)
    print(
        "next: write defends and the check (the TODOs), then confirm it fails first: "
        f"{done.command}",
        file=sys.stderr,
    )
    return 0
