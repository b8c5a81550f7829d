"""What a results file and the summary say of its judge checks (docs/judge.md), read
from the runs' records: per check id, how it was judged and whether it is calibrated;
whether the judge shares the agent's provider (same-provider bias); and a seeded
sample of the judged runs for a human spot check. Derived from the records alone, so
that a merged file says what one unsharded run would. Plain Python."""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_evalcases import defaults
from pytest_evalcases.results.record import JudgeRecord, RunRecord
from pytest_evalcases.text import plural


@dataclass(frozen=True)
class JudgedRun:
    """One judge check's judgement in one run."""

    run: str
    check: str
    judgement: JudgeRecord

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "check": self.check,
            "judge_said": "yes" if self.judgement.yes else "no",
            "reason": self.judgement.reason,
        }


@dataclass(frozen=True)
class JudgeCheck:
    """One judge check id over a session's runs."""

    check: str
    runs: int
    yes: int
    #: The judges that answered it (``script`` for a scripted judge).
    judges: tuple[str, ...]
    blocking: bool
    kappa: float | None
    labels: int
    same_provider: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "yes": self.yes,
            "judges": list(self.judges),
            "calibrated": self.blocking,
            "kappa": self.kappa,
            "labels": self.labels,
            "same_provider": self.same_provider,
        }


def judged_runs(records: Sequence[RunRecord]) -> list[JudgedRun]:
    """Every judgement of the records, in their order."""
    return [
        JudgedRun(record.nodeid or record.case_id, check.id, check.judge)
        for record in records
        for check in record.checks
        if check.judge is not None
    ]


def checks(records: Sequence[RunRecord]) -> list[JudgeCheck]:
    """Per judge check id, sorted, what its judgements came to."""
    by_check: dict[str, list[JudgeRecord]] = {}
    for judged in judged_runs(records):
        by_check.setdefault(judged.check, []).append(judged.judgement)
    return [
        JudgeCheck(
            check,
            runs=len(found),
            yes=sum(j.yes for j in found),
            judges=tuple(sorted({j.judge for j in found})),
            blocking=all(j.blocking for j in found),
            kappa=found[-1].kappa,
            labels=found[-1].labels,
            same_provider=any(j.same_provider for j in found),
        )
        for check, found in sorted(by_check.items())
    ]


def spot_checks(
    records: Sequence[RunRecord], share: float = defaults.JUDGE_SPOT_SHARE
) -> list[JudgedRun]:
    """A ``share`` of the judged runs (at least one), drawn with a seed of the runs
    themselves: the same runs give the same sample, in one file or merged from shards."""
    judged = sorted(judged_runs(records), key=lambda j: (j.run, j.check))
    if not judged:
        return []
    seed = hashlib.sha256("\n".join(f"{j.run} {j.check}" for j in judged).encode()).hexdigest()
    count = max(1, math.ceil(len(judged) * share))
    return sorted(random.Random(seed).sample(judged, count), key=lambda j: (j.run, j.check))


def document_entry(records: Sequence[RunRecord]) -> dict[str, Any] | None:
    """The results file's ``judge`` key; ``None`` (no key) when no run was judged."""
    found = checks(records)
    if not found:
        return None
    return {
        "checks": {c.check: c.to_dict() for c in found},
        "min_kappa": defaults.JUDGE_MIN_KAPPA,
        "min_labels": defaults.JUDGE_MIN_LABELS,
        "spot_checks": [j.to_dict() for j in spot_checks(records)],
    }


def summary_lines(records: Sequence[RunRecord]) -> list[str]:
    """The summary's lines on judge checks: the uncalibrated ones, a judge of the
    agent's provider, and how many runs to spot-check."""
    found = checks(records)
    if not found:
        return []
    out = []
    unsure = [c for c in found if not c.blocking]
    if unsure:
        named = ", ".join(f"{c.check} ({_calibration(c)})" for c in unsure)
        out.append(f"judge: uncalibrated, reported and never blocking: {named}")
    same = [c.check for c in found if c.same_provider]
    if same:
        out.append("judge: same provider as the agent (same-provider bias): " + ", ".join(same))
    spot = spot_checks(records)
    out.append(
        f"judge: {plural(len(spot), 'judged run')} to spot-check (results file "
        "`judge.spot_checks`; label with `evalcases calibrate --add`)"
    )
    return out


def _calibration(check: JudgeCheck) -> str:
    if check.labels == 0:
        return "no calibration"
    kappa = f"{check.kappa:.2f}" if check.kappa is not None else "undefined"
    return f"kappa {kappa} on {check.labels} labels"
