"""``evalcases lint [PATH...]``: the known anti-patterns in case files (authoring/lint.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_evalcases.authoring import lint


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="Case files or directories (default: evals)",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        metavar="DIR",
        help="Directory that `defends` paths are relative to (default, for each case "
        "file: pytest's rootdir there, or the eval_config_root of its configuration file)",
    )


def run(args: argparse.Namespace) -> int:
    """Print the findings; 1 on any error, 2 when a path does not exist or cannot be
    read."""
    paths: list[Path] = args.paths or [Path("evals")]
    missing = [p for p in paths if not p.exists()]
    if missing:
        print(f"evalcases lint: no such file or directory: {missing[0]}", file=sys.stderr)
        return 2
    try:
        files = lint.discover(paths)
        findings = lint.lint_files(files, args.root.resolve() if args.root else None)
    except OSError as exc:
        # What a case file can cause is a finding; this is the filesystem failing under it.
        print(f"evalcases lint: {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
        return 2
    base = Path.cwd()
    for finding in sorted(findings, key=lambda f: (str(f.path), f.line or 0)):
        print(finding.format(base))
    print(lint.tally(files, findings), file=sys.stderr)
    return 1 if any(f.level == lint.ERROR for f in findings) else 0
