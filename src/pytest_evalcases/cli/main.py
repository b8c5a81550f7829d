"""The ``evalcases`` console command: one subcommand per module of this package,
dispatched here.

A subcommand module declares its arguments (``add_arguments(parser)``) and runs
(``run(args)``, returning the exit status); its name and help texts are in the table here.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from pytest_evalcases import __version__
from pytest_evalcases.cli import (
    calibrate,
    clean,
    compare,
    importer,
    lint,
    merge,
    new,
    report,
    schema,
    show,
    trend,
)
from pytest_evalcases.errors import EvalcasesError

#: The subcommands, in the order ``--help`` lists them: name, module, help, description.
SUBCOMMANDS: tuple[tuple[str, ModuleType, str, str], ...] = (
    (
        "new",
        new,
        "Write a new case file from a commented template",
        "Write DIR/ID.yaml (or .json): a case that validates, with a negative "
        "check as the first example. Never overwrites a file.",
    ),
    (
        "import",
        importer,
        "Turn a real agent session into a case (incident to eval)",
        "Write a case from user turn N (default: the last) of a saved session of claude, "
        "codex or gemini: the prompt verbatim, a fixture of the repository at the "
        "session's start (evals/fixtures/ID/), defends and the check left as TODOs. Never "
        "overwrites a file.",
    ),
    (
        "lint",
        lint,
        "Find the known anti-patterns in case files",
        "Report problems in case files as `file:line: LEVEL code: reason`. "
        "Exit status 1 when there is an error, else 0 (warnings alone do not fail); 2 when "
        "a PATH does not exist.",
    ),
    (
        "schema",
        schema,
        "Print the JSON Schema of case files (for editor completion)",
        "Print the JSON Schema of case files on standard output. Save it "
        "(e.g. evals/_schema.json) and point your editor at it: a first line "
        "`# yaml-language-server: $schema=_schema.json` in a YAML case file, or the VS Code "
        "setting yaml.schemas. See docs/case-format.md.",
    ),
    (
        "compare",
        compare,
        "Compare two results files (B against the baseline A)",
        "Per-case outcomes of two results files side by side, pass rate, "
        "tokens, cost and differing pins. Exit status 1 when B would be blocked by "
        "pytest --eval-baseline A.",
    ),
    (
        "report",
        report,
        "Show a results file as CI shows it: job summary, annotations, PR comment",
        "Print RESULTS as GitHub's job summary (markdown), its workflow-command "
        "annotations, a pull-request comment (markdown), or GitLab's code-quality report "
        "(JSON). Exit status 0 once printed, whatever the verdict; 2 when a file cannot "
        "be read.",
    ),
    (
        "trend",
        trend,
        "Pass rate, flaky and saturated cases, time, tokens and cost over runs",
        "Read the results files of DIR (default: where pytest run here writes them) and "
        "report over the last K runs.",
    ),
    (
        "show",
        show,
        "Print a recorded run's exchange with its model as a conversation",
        "Read the recording of one run of RESULTS_FILE and print its prompt, each turn's "
        "text and tool calls with their results, the final answer, tokens and cost. "
        "Exit status 2 when the run is not in the file or was not recorded.",
    ),
    (
        "merge",
        merge,
        "Merge the results files of shards (--eval-shard K/N) into one",
        "Merge results files into one and recompute the verdict. Exit "
        "status: 0 PASS, 1 BLOCKED, 2 INCONCLUSIVE.",
    ),
    (
        "calibrate",
        calibrate,
        "Cohen's kappa of each judge check against human labels; --add labels spot checks",
        "Compare the human labels of the labels file with the judge's stored answers on "
        "the runs they name; print kappa, n and the confusion table per check id, and "
        "write them beside the labels file, where the gate reads them. --add appends a "
        "person's labels for the spot checks of RESULTS.",
    ),
    (
        "clean",
        clean,
        "Remove the workspaces kept of failed and errored runs",
        "Remove the <results-file>.workspaces directories of DIR (default: where pytest run "
        "here keeps them), all of them or all but the newest N runs' (--keep-last N). "
        "Results files stay.",
    ),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalcases",
        description="Eval cases for coding-agent configuration. Run the cases with pytest "
        "(`pytest evals/`); these commands write, check and compare them.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command, summary, description in SUBCOMMANDS:
        sub = subparsers.add_parser(name, help=summary, description=description)
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
