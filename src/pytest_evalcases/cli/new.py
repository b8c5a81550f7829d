"""``evalcases new ID``: write a case file from the commented template (authoring/new.py)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from pytest_evalcases.authoring import new
from pytest_evalcases.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "id",
        metavar="ID",
        nargs="?",
        help="Case id, kebab-case (the file name too); with --skill, the ids' prefix",
    )
    parser.add_argument(
        "--dir", type=Path, default=Path("evals"), help="Directory (default: evals)"
    )
    parser.add_argument(
        "--format", choices=("yaml", "json"), default="yaml", help="File format (default: yaml)"
    )
    parser.add_argument(
        "--skill",
        metavar="NAME",
        help="Write a pair of starter cases for the skill NAME: one should fire, one not",
    )


def run(args: argparse.Namespace) -> int:
    if args.skill is not None:
        return _skill_pair(args)
    if args.id is None:
        raise UsageError("evalcases new: give a case ID, or --skill NAME for a pair of cases")
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
    if step.agent:
        print(
            f"note: the configuration names no agent, so the command names {new.SUGGESTED_AGENT} "
            "(or use codex, gemini); without one the case is skipped and nothing is graded",
            file=sys.stderr,
        )
    return 0


def _skill_pair(args: argparse.Namespace) -> int:
    """``--skill NAME``: the should-fire and should-not-fire starter cases
    (docs/skills.md)."""
    prefix = args.id or args.skill
    step = new.next_step(args.dir / f"{prefix}-fires.{args.format}", Path.cwd())
    targets = new.create_skill_pair(args.skill, args.dir, args.format, args.id)
    for target in targets:
        print(target)
    if step.hint:
        print(f"note: {step.hint}", file=sys.stderr)
    first, second = (shlex.quote(t.as_posix()) for t in targets)
    command = step.pytest.replace(first, f"{first} {second}", 1)
    print(
        "next: write the prompts, then run both and read the skill's trigger scores: "
        f"{command} --eval-repeat 5{step.agent}",
        file=sys.stderr,
    )
    return 0
