"""Calibrating judge checks against human labels (docs/judge.md): the labels file
(``eval_judge_calibration``), Cohen's kappa of the judge against them per check id,
and the calibration report beside the labels file that the gate reads. Plain Python.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from pytest_evalcases import defaults
from pytest_evalcases.atomic import write_atomic

#: The calibration report's name beside the labels file: ``judge-labels.yaml`` ->
#: ``judge-labels.kappa.json``.
REPORT_SUFFIX = ".kappa.json"


class CalibrationError(Exception):
    """A labels file or calibration report that cannot be read; the message names it."""


@dataclass(frozen=True)
class Label:
    """One person's yes/no answer to a judge check's question on one stored run."""

    check: str
    #: The results file of the run, as written in the labels file (relative to it).
    results: str
    #: The run's node id in that results file.
    run: str
    yes: bool
    labeller: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "results": self.results,
            "run": self.run,
            "label": "yes" if self.yes else "no",
            "labeller": self.labeller,
        }


@dataclass(frozen=True)
class Confusion:
    """Human label against judge answer, counted."""

    #: Both said yes; the human yes, the judge no; the human no, the judge yes; both no.
    yes_yes: int = 0
    yes_no: int = 0
    no_yes: int = 0
    no_no: int = 0

    @classmethod
    def of(cls, pairs: Iterable[tuple[bool, bool]]) -> Confusion:
        """The table of ``(human, judge)`` pairs."""
        counts = [0, 0, 0, 0]
        for human, judge in pairs:
            counts[(0 if human else 2) + (0 if judge else 1)] += 1
        return cls(*counts)

    @property
    def n(self) -> int:
        return self.yes_yes + self.yes_no + self.no_yes + self.no_no

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa: (p_o - p_e) / (1 - p_e); ``None`` when it is undefined (no
        pairs, or both raters gave one answer throughout, so that chance agreement is
        certain and agreement says nothing of the judge)."""
        n = self.n
        if n == 0:
            return None
        # Exact fractions: a kappa of exactly 0.6 must not come out 0.5999999999999996
        # and miss the threshold in floating point.
        observed = Fraction(self.yes_yes + self.no_no, n)
        human_yes = Fraction(self.yes_yes + self.yes_no, n)
        judge_yes = Fraction(self.yes_yes + self.no_yes, n)
        expected = human_yes * judge_yes + (1 - human_yes) * (1 - judge_yes)
        if expected >= 1:
            return None
        return float((observed - expected) / (1 - expected))

    def to_dict(self) -> dict[str, int]:
        return {
            "yes_yes": self.yes_yes,
            "yes_no": self.yes_no,
            "no_yes": self.no_yes,
            "no_no": self.no_no,
        }


@dataclass(frozen=True)
class CheckCalibration:
    """The calibration of one judge check id: its table, kappa, and whether it blocks."""

    check: str
    confusion: Confusion
    #: Labels whose run has no judgement of the check (not judged, or not found).
    unmatched: int = 0
    #: Labels whose run the judge, asked again, gave no answer on (an error): out of n.
    errors: int = 0

    @property
    def n(self) -> int:
        return self.confusion.n

    @property
    def kappa(self) -> float | None:
        return self.confusion.kappa

    @property
    def calibrated(self) -> bool:
        """Kappa at least ``JUDGE_MIN_KAPPA`` on at least ``JUDGE_MIN_LABELS`` labels."""
        kappa = self.kappa
        return (
            kappa is not None
            and kappa >= defaults.JUDGE_MIN_KAPPA
            and self.n >= defaults.JUDGE_MIN_LABELS
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "kappa": self.kappa,
            "calibrated": self.calibrated,
            "unmatched": self.unmatched,
            "errors": self.errors,
            "confusion": self.confusion.to_dict(),
        }

    @classmethod
    def from_dict(cls, check: str, data: Mapping[str, Any]) -> CheckCalibration:
        table = data.get("confusion")
        if not isinstance(table, dict):
            raise ValueError(f"check {check!r}: no confusion table")
        counts = {k: int(table.get(k, 0)) for k in ("yes_yes", "yes_no", "no_yes", "no_no")}
        unmatched, errors = int(data.get("unmatched", 0)), int(data.get("errors", 0))
        return cls(check, Confusion(**counts), unmatched, errors)


def report_path(labels: Path) -> Path:
    """Where ``evalcases calibrate`` writes the report of ``labels``, and the gate reads it."""
    return labels.with_name(labels.stem + REPORT_SUFFIX)


def load_labels(path: Path) -> list[Label]:
    """The labels of a labels file (YAML or JSON: ``labels:``, a list of ``check``,
    ``results``, ``run``, ``label`` yes/no, ``labeller``); an absent file has none."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise CalibrationError(f"{path}: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text) if text.strip() else {"labels": []}
    except yaml.YAMLError as exc:
        raise CalibrationError(f"{path}: not YAML/JSON: {exc}") from None
    entries = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise CalibrationError(f"{path}: expected a mapping with a list `labels:`")
    labels = []
    for i, entry in enumerate(entries):
        where = f"{path}: labels[{i}]"
        if not isinstance(entry, dict):
            raise CalibrationError(f"{where}: expected a mapping")
        missing = [k for k in ("check", "results", "run", "label") if entry.get(k) in (None, "")]
        if missing:
            raise CalibrationError(f"{where}: missing {', '.join(missing)}")
        answer = entry["label"]
        if answer is True or answer is False:
            # YAML 1.1 reads an unquoted yes/no as a boolean.
            yes = bool(answer)
        elif str(answer).lower() in ("yes", "no"):
            yes = str(answer).lower() == "yes"
        else:
            raise CalibrationError(f"{where}.label: expected yes or no, got {answer!r}")
        labels.append(
            Label(
                check=str(entry["check"]),
                results=str(entry["results"]),
                run=str(entry["run"]),
                yes=yes,
                labeller=str(entry.get("labeller") or ""),
            )
        )
    return labels


def append_labels(path: Path, new: Sequence[Label]) -> None:
    """Add ``new`` to the labels file at ``path`` (made when absent), rewritten whole
    and atomically. A JSON file stays JSON; anything else is written as YAML."""
    labels = [label.to_dict() for label in (*load_labels(path), *new)]
    if path.suffix == ".json":
        text = json.dumps({"labels": labels}, indent=2) + "\n"
    else:
        text = yaml.safe_dump({"labels": labels}, sort_keys=False)
    write_atomic(path, text)


def calibrate(
    labels: Sequence[Label], judged: Mapping[tuple[str, str, str], bool | str]
) -> dict[str, CheckCalibration]:
    """Per check id, the labels against the judge's answers: ``judged`` maps (results
    file as labelled, run, check id) to the judge's yes or no, or to the error that left
    it without one (that label is left out of n, never counted as yes or no)."""
    pairs: dict[str, list[tuple[bool, bool]]] = {}
    unmatched: dict[str, int] = {}
    errors: dict[str, int] = {}
    for label in labels:
        pairs.setdefault(label.check, [])
        answer = judged.get((label.results, label.run, label.check))
        if isinstance(answer, str):
            errors[label.check] = errors.get(label.check, 0) + 1
            continue
        if answer is None:
            unmatched[label.check] = unmatched.get(label.check, 0) + 1
            continue
        pairs[label.check].append((label.yes, answer))
    return {
        check: CheckCalibration(
            check, Confusion.of(found), unmatched.get(check, 0), errors.get(check, 0)
        )
        for check, found in sorted(pairs.items())
    }


def write_report(path: Path, found: Mapping[str, CheckCalibration]) -> None:
    """Write the calibration report the gate reads (:func:`read_report`)."""
    document = {
        "format": "evalcases-judge-calibration",
        "min_kappa": defaults.JUDGE_MIN_KAPPA,
        "min_labels": defaults.JUDGE_MIN_LABELS,
        # Not `checks`: a file with that key in evals/ would be taken for a case file.
        "calibrations": {check: one.to_dict() for check, one in sorted(found.items())},
    }
    write_atomic(path, json.dumps(document, indent=2) + "\n")


def read_report(path: Path) -> dict[str, CheckCalibration]:
    """The calibration report at ``path`` by check id; none when it is absent (no check
    is calibrated). The kappa is computed again from the tables, never taken on trust."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise CalibrationError(f"{path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
        checks = data["calibrations"]
        return {str(k): CheckCalibration.from_dict(str(k), v) for k, v in checks.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CalibrationError(
            f"{path}: not a calibration report ({exc}); run `evalcases calibrate` again"
        ) from None


def table(found: Mapping[str, CheckCalibration]) -> list[str]:
    """The report as text lines: per check id, n, kappa, the table and the verdict."""
    lines = []
    for check, one in sorted(found.items()):
        kappa = f"{one.kappa:.2f}" if one.kappa is not None else "undefined"
        c = one.confusion
        state = "calibrated: blocks" if one.calibrated else "uncalibrated: reported only"
        lines.append(
            f"{check}: kappa {kappa} on n={one.n} (human/judge yes/yes {c.yes_yes}, "
            f"yes/no {c.yes_no}, no/yes {c.no_yes}, no/no {c.no_no}) -> {state}"
        )
        if one.unmatched:
            lines.append(f"  {one.unmatched} label(s) name no judged run of {check}")
        if one.errors:
            lines.append(
                f"  {one.errors} label(s) left out of n: the judge gave no answer on their run"
            )
    return lines


def relative(path: Path, start: Path) -> str:
    """``path`` as a labels file names it: relative to the file's directory, POSIX."""
    return Path(os.path.relpath(path, start)).as_posix()
