"""The ``evalcases`` console command: one subcommand per module of this package,
dispatched here.

A subcommand module names itself (``NAME``, ``HELP``, ``DESCRIPTION``), declares its
arguments (``add_arguments(parser)``) and runs (``run(args)``, returning the exit status).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from pytest_evalcases import __version__
from pytest_evalcases.cli import compare, lint, merge, new, schema, trend
from pytest_evalcases.errors import EvalcasesError

#: The subcommands, in the order ``--help`` lists them.
SUBCOMMANDS = (new, lint, schema, compare, trend, merge)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalcases",
        description="Eval cases for coding-agent configuration. Run the cases with pytest "
        "(`pytest evals/`); these commands write, check and compare them.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in SUBCOMMANDS:
        sub = subparsers.add_parser(
            command.NAME, help=command.HELP, description=command.DESCRIPTION
        )
        command.add_arguments(sub)
        sub.set_defaults(func=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0
    try:
        status: int = func(args)
        sys.stdout.flush()
    except EvalcasesError as exc:
        print(f"evalcases: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `evalcases schema | head`: the reader left; say nothing more.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
