"""``evalcases merge FILE... [-o OUT]``: shard results files into one
(docs/results.md, "Shards and evalcases merge").

The exit status follows the merged verdict (0 PASS, 1 BLOCKED, 2 INCONCLUSIVE), so a
CI job can gate on the merge.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_evalcases.results import gate, merge
from pytest_evalcases.results import writer as resultsfile
from pytest_evalcases.results.reader import load


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", metavar="FILE", nargs="+", type=Path, help="Results files of the shards"
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        type=Path,
        default=None,
        help="Where to write the merged file (default: standard output)",
    )


def run(args: argparse.Namespace) -> int:
    # Paths in the files are relative to their directories: made relative to the merged
    # file's (the current directory's, for standard output).
    target = (args.output.parent if args.output is not None else Path()).absolute()
    docs = [merge.rebase(load(p), p.parent.absolute(), target) for p in args.files]
    doc = merge.merge(docs, [str(path) for path in args.files], target)
    for warning in doc.merge_warnings or ():
        print(f"evalcases merge: warning: {warning}", file=sys.stderr)
    if args.output is None:
        sys.stdout.write(resultsfile.dumps(doc))
    else:
        resultsfile.write(doc, args.output, replace=True)
    print(merge.summary(doc, len(args.files)), file=sys.stderr)
    return gate.Verdict(doc.verdict).exit_code or 0
