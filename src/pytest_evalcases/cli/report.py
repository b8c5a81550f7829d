"""``evalcases report --format FORMAT RESULTS``: a results file as CI systems show it
(docs/ci.md): GitHub's job summary, workflow-command annotations and pull-request
comment, GitLab's code-quality report.

Case files are named relative to ``$GITHUB_WORKSPACE`` when it is set, else to the
current directory; the results file names them relative to where pytest ran, taken to
be the current directory. Exit status 0 once printed, whatever the verdict; 2 when a
file cannot be read.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pytest_evalcases.report import github, gitlab
from pytest_evalcases.report.findings import BaselineDelta, findings
from pytest_evalcases.results import baseline
from pytest_evalcases.results import reader as resultsfile

#: The formats, in the order ``--help`` lists them.
FORMATS = ("summary", "github-comment", "annotations", "gitlab-codequality")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", metavar="RESULTS", type=Path, help="A results file")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        required=True,
        metavar="FORMAT",
        help="summary: GitHub's job summary (markdown); github-comment: a pull-request "
        "comment (markdown); annotations: GitHub workflow commands; gitlab-codequality: "
        "GitLab's code-quality report (JSON)",
    )
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        type=Path,
        help="Compare with this results file (default: the comparison the run made "
        "under --eval-baseline, if it made one)",
    )


def run(args: argparse.Namespace) -> int:
    if args.baseline is not None:
        before = resultsfile.load_baseline(args.baseline)
        doc = resultsfile.load_baseline(args.results, "compared")
        compared = baseline.check(before, doc, label=_display(args.baseline))
        delta: BaselineDelta | None = BaselineDelta.from_dict(compared.to_dict())
    else:
        doc = resultsfile.load(args.results)
        delta = BaselineDelta.from_dict(doc.baseline) if doc.baseline is not None else None
    here = Path.cwd()
    workspace = os.environ.get("GITHUB_WORKSPACE")
    found = findings(doc, here, Path(workspace) if workspace else here)
    if args.format == "summary":
        text = github.job_summary(doc, found, delta)
    elif args.format == "github-comment":
        text = github.comment(doc, found, delta)
    elif args.format == "annotations":
        text = "".join(f"{line}\n" for line in github.workflow_commands(found))
    else:
        text = gitlab.render(found)
    sys.stdout.write(text)
    return 0


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
