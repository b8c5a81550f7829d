"""``evalcases calibrate``: Cohen's kappa of each judge check against human labels, and
``--add``: a person's labels for the runs a results file lists for spot checks
(docs/judge.md, "Calibrating").

The judge is asked again on each labelled run, as configured now (``eval_judge_agent``,
``eval_judge_model``, or the check's ``script:``), over the run's stored answer and
workspace, and no agent runs (:mod:`pytest_evalcases.run.reask`); with ``--stored``, its
answers are the judgements the runs stored, and nothing runs. The report goes to
standard output and beside the labels file, where the gate reads it.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_evalcases import defaults
from pytest_evalcases.agents import make_agent
from pytest_evalcases.agents.base import Agent, AgentSettings
from pytest_evalcases.cases.rootdir import find_config
from pytest_evalcases.errors import RunError, UsageError
from pytest_evalcases.kinds import AGENT_HOMES, SANDBOX_MODES
from pytest_evalcases.recording.format import RecordPlace
from pytest_evalcases.recording.recorded import RecordedSession, load_session
from pytest_evalcases.recording.recorder import Recorder
from pytest_evalcases.redact import Redactor
from pytest_evalcases.results import calibration, judging
from pytest_evalcases.results.calibration import CalibrationError, Label
from pytest_evalcases.results.reader import ResultsFileError, load
from pytest_evalcases.run.checks import default_registry
from pytest_evalcases.run.reask import Reasking, reask
from pytest_evalcases.sandbox import choose


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
    parser.add_argument(
        "--stored",
        action="store_true",
        help="Compare the labels with the judgements the runs stored, asking no judge",
    )


def run(args: argparse.Namespace) -> int:
    labels_file = args.calibration or _configured()
    try:
        if args.add:
            return _add(args, labels_file)
        labels = calibration.load_labels(labels_file)
        answers = (
            _judged(labels, labels_file.parent) if args.stored else _asked(labels, labels_file)
        )
        found = calibration.calibrate(labels, answers)
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


def _asked(labels: list[Label], labels_file: Path) -> dict[tuple[str, str, str], bool | str]:
    """The judge's answers now on the labelled runs, asked once per run and check; an
    error (printed) for a run it gave no answer on. Each exchange of a judge that
    records is kept in ``<labels file stem>.calibrate/`` beside the labels file."""
    found = find_config(Path.cwd())
    rootdir, ini = found if found is not None else (Path.cwd(), {})
    how = _reasking(rootdir, ini, labels_file)
    base = labels_file.parent
    redact = Redactor(os.environ)
    sessions: dict[str, RecordedSession] = {}
    answers: dict[tuple[str, str, str], bool | str] = {}
    try:
        for label in labels:
            key = (label.results, label.run, label.check)
            if key in answers:
                continue
            if label.results not in sessions:
                sessions[label.results] = load_session(base / label.results)
            name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{label.run}")
            try:
                answers[key] = reask(sessions[label.results], label.run, label.check, how, name).yes
            except RunError as exc:
                answers[key] = str(exc)
                print(
                    redact(
                        f"{label.run} / {label.check}: no answer of the judge, left out of n: {exc}"
                    )
                )
    finally:
        if how.recorder is not None:
            how.recorder.close()
    return answers


def _reasking(rootdir: Path, ini: dict[str, Any], labels_file: Path) -> Reasking:
    """The judge and its sandbox as the pytest configuration at ``rootdir`` sets them
    (docs/judge.md, "Who judges")."""

    def value(name: str) -> str:
        return str(ini.get(name) or "").strip()

    def paths(name: str) -> list[Path]:
        given = ini.get(name) or []
        return [rootdir / p for p in (given if isinstance(given, list) else shlex.split(given))]

    mode = value("eval_sandbox") or defaults.SANDBOX
    home = value("eval_agent_home") or defaults.AGENT_HOME
    if mode not in SANDBOX_MODES or home not in AGENT_HOMES:
        raise UsageError(f"ini option eval_sandbox or eval_agent_home: {mode!r}, {home!r}")
    place = labels_file.parent / f"{labels_file.stem}.calibrate"
    shutil.rmtree(place, ignore_errors=True)
    return Reasking(
        rootdir=rootdir,
        judge=_judge(rootdir, value),
        registry=default_registry(),
        sandbox=choose(
            mode,
            read_only=paths("eval_sandbox_ro"),
            writable=paths("eval_sandbox_rw"),
            visible=[rootdir],
        ),
        env=dict(os.environ),
        home=home,
        recorder=Recorder(RecordPlace(labels_file.parent, place), Redactor(os.environ)),
    )


def _judge(rootdir: Path, value: Callable[[str], str]) -> Agent | None:
    """``eval_judge_agent`` with ``eval_judge_model``, by default the session's agent
    (``eval_agent``) with its model; ``None`` when neither is set."""
    # As the session has it: an agent command alone names the command agent.
    agent = value("eval_agent") or ("command" if value("eval_agent_command") else "")
    name = value("eval_judge_agent") or agent
    if not name:
        return None
    own = name == agent
    return make_agent(
        AgentSettings(
            name=name,
            command=(value("eval_agent_command") or None) if own else None,
            model=value("eval_judge_model") or (value("eval_model") if own else "") or None,
            placeholders={"python": sys.executable, "rootdir": str(rootdir)},
        )
    )


def _judged(labels: list[Label], base: Path) -> dict[tuple[str, str, str], bool | str]:
    """The judge's stored answers on the labelled runs: (results file as labelled, run,
    check id) to yes or no."""
    answers: dict[tuple[str, str, str], bool | str] = {}
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
