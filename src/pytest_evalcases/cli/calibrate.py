"""``evalcases calibrate``: Cohen's kappa of each judge check against human labels, and
``--add``: a person's labels for the runs a results file lists for spot checks
(docs/judge.md, "Calibrating").

The judge's answers are the judgements the labelled runs stored in their results
files (the agent and the judge run again for none of them); the report goes to
standard output and beside the labels file, where the gate reads it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_evalcases.cases.rootdir import find_config
from pytest_evalcases.errors import UsageError
from pytest_evalcases.results import calibration, judging
from pytest_evalcases.results.calibration import CalibrationError, Label
from pytest_evalcases.results.reader import ResultsFileError, load


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        metavar="RESULTS",
        nargs="*",
        type=Path,
        help="With --add: the results file whose spot checks are labelled",
    )
    parser.add_argument(
        "--calibration",
        metavar="FILE",
        type=Path,
        default=None,
        help="The labels file (default: eval_judge_calibration of the pytest configuration "
        "found from here)",
    )
    parser.add_argument(
        "--add",
        action="store_true",
        help="Append labels for the spot checks of RESULTS (asked on a terminal, or --label)",
    )
    parser.add_argument(
        "--label",
        metavar="RUN=yes|no",
        action="append",
        default=[],
        help="With --add: the answer to the judge's question on RUN (a node id of the spot "
        "checks); repeatable",
    )
    parser.add_argument("--labeller", metavar="NAME", default="", help="With --add: who labelled")


def run(args: argparse.Namespace) -> int:
    labels_file = args.calibration or _configured()
    try:
        if args.add:
            return _add(args, labels_file)
        labels = calibration.load_labels(labels_file)
        found = calibration.calibrate(labels, _judged(labels, labels_file.parent))
    except (CalibrationError, ResultsFileError) as exc:
        raise UsageError(str(exc)) from None
    if not found:
        print(f"no labels in {labels_file}")
        return 0
    for line in calibration.table(found):
        print(line)
    report = calibration.report_path(labels_file)
    calibration.write_report(report, found)
    print(f"calibration report: {report}")
    return 0


def _configured() -> Path:
    """``eval_judge_calibration`` of the pytest configuration found from here."""
    found = find_config(Path.cwd())
    value = found[1].get("eval_judge_calibration") if found is not None else None
    if found is None or not value:
        raise UsageError("no labels file: give --calibration FILE or set eval_judge_calibration")
    return found[0] / str(value).strip()


def _judged(labels: list[Label], base: Path) -> dict[tuple[str, str, str], bool]:
    """The judge's stored answers on the labelled runs: (results file as labelled, run,
    check id) to yes or no."""
    answers: dict[tuple[str, str, str], bool] = {}
    for name in sorted({label.results for label in labels}):
        document = load(base / name)
        for judged in judging.judged_runs(document.cases):
            answers[(name, judged.run, judged.check)] = judged.judgement.yes
    return answers


def _add(args: argparse.Namespace, labels_file: Path) -> int:
    if len(args.results) != 1:
        raise UsageError("--add labels the spot checks of one results file: give RESULTS")
    results: Path = args.results[0]
    spots = judging.spot_checks(load(results).cases)
    given = dict(_answer(value) for value in args.label)
    unknown = sorted(set(given) - {spot.run for spot in spots})
    if unknown:
        raise UsageError(f"not among the spot checks of {results}: {', '.join(unknown)}")
    asking = not given and sys.stdin.isatty()
    if not given and not asking:
        raise UsageError("give --label RUN=yes|no (or run on a terminal to be asked)")
    labeller = args.labeller or (input("your name: ").strip() if asking else "")
    name = calibration.relative(results.absolute(), labels_file.absolute().parent)
    new: list[Label] = []
    for spot in spots:
        answer = given.get(spot.run) if not asking else _ask(spot)
        if answer is not None:
            new.append(Label(spot.check, name, spot.run, answer, labeller))
    calibration.append_labels(labels_file, new)
    print(f"added {len(new)} label(s) to {labels_file}")
    return 0


def _answer(value: str) -> tuple[str, bool]:
    run, sep, answer = value.rpartition("=")
    if not sep or not run or answer.lower() not in ("yes", "no"):
        raise UsageError(f"--label {value!r}: expected RUN=yes or RUN=no")
    return run, answer.lower() == "yes"


def _ask(spot: judging.JudgedRun) -> bool | None:
    print(f"{spot.run} / {spot.check}: the judge said {spot.to_dict()['judge_said']}")
    print(f"  reason: {spot.judgement.reason}")
    reply = input("  your answer to the question [yes/no/skip]: ").strip().lower()
    return {"yes": True, "y": True, "no": False, "n": False}.get(reply)
