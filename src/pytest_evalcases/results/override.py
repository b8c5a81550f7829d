"""Overrides and quarantines (docs/results.md, "Overrides and quarantines").

``--eval-override "RATIONALE"`` is a decision to ship past a block, made on record: the
gate (:func:`pytest_evalcases.results.gate.decide`) weighs it against what blocked
(:func:`judge`). It lifts a block of normal cases, of skills' trigger scores and of the
baseline gate; never one of a failing critical case, nor of a trigger score that falls
short on a critical case's runs. The results file records the judgement, who gave the
override (:func:`author`) and when; the rationale is part of the gate policy, so
``evalcases merge`` of the shards reaches the same verdict.

A quarantined case (``quarantine:``) is skipped with its reason: a critical one is a
gap in the gate, named in the summary and the results file (:func:`quarantined`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_evalcases import git
from pytest_evalcases.kinds import GRADED, SEVERITIES, OverrideOutcome, Severity, Status
from pytest_evalcases.results import skills
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.text import plural

#: Environment variables that name who runs the session when git has no ``user.name``
#: (a CI checkout): (name variable, email variable or ``None``), first found wins.
IDENTITY_VARIABLES: tuple[tuple[str, str | None], ...] = (
    ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"),
    ("GITHUB_ACTOR", None),
    ("GITLAB_USER_LOGIN", "GITLAB_USER_EMAIL"),
    ("BUILD_REQUESTEDFOR", "BUILD_REQUESTEDFOREMAIL"),
    ("USER", None),
    ("USERNAME", None),
)


@dataclass(frozen=True)
class Author:
    """Who gave the override: git's ``user.name`` / ``user.email`` of the rootdir's
    repository, else an environment variable's value; ``source`` says which
    (``git config``, ``env GITHUB_ACTOR``), ``None`` when nothing said."""

    name: str | None = None
    email: str | None = None
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "email": self.email, "source": self.source}

    def describe(self) -> str:
        """``Ada <ada@example.com>``, or ``unknown``."""
        if self.name and self.email:
            return f"{self.name} <{self.email}>"
        return self.name or self.email or "unknown"


@dataclass(frozen=True)
class Override:
    """What came of ``--eval-override``: the results file's ``override`` object."""

    rationale: str
    outcome: OverrideOutcome
    #: Why it was applied, refused or unused, in words.
    why: str
    #: The verdict without the override, and its reasons (one per blocking cause).
    verdict: Status
    reasons: tuple[str, ...] = ()
    #: What the override lifted (or would have): the blocking cases' ids.
    cases: tuple[str, ...] = ()
    #: Who gave it, and when (ISO UTC); set where the run is written.
    by: Author | None = None
    at: str | None = None

    def signed(self, by: Author | None, at: str | None) -> Override:
        return replace(self, by=by, at=at)

    def line(self) -> str:
        """The ``eval gate`` section's line about the override."""
        if self.outcome == "applied":
            return f"override applied: {self.verdict} lifted ({'; '.join(self.reasons)})"
        return f"override {self.outcome}: {self.why}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "rationale": self.rationale,
            "outcome": self.outcome,
            "why": self.why,
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "cases": list(self.cases),
            "by": self.by.to_dict() if self.by is not None else None,
            "at": self.at,
        }


@dataclass(frozen=True)
class Blocks:
    """What blocked a run, sorted into what an override may lift and what it may not."""

    #: The gate's reasons, one per blocking cause.
    reasons: tuple[str, ...]
    #: Failing critical cases, and critical cases a trigger-score shortfall counts.
    critical: tuple[str, ...]
    trigger_critical: tuple[str, ...]
    #: Failing normal cases and the baseline's regressed ones.
    cases: tuple[str, ...]
    #: Causes an override lifts, in words (``normal cases``, ``the baseline gate``).
    liftable: tuple[str, ...]


def judge(rationale: str, verdict: Status, blocks: Blocks | None) -> Override:
    """The override ``rationale`` against the gate's ``verdict`` and what made it BLOCKED
    (``blocks``; ``None`` when it is not)."""
    if verdict != "BLOCKED" or blocks is None:
        said = "nothing was graded" if verdict == "NONE" else f"the verdict is {verdict}"
        return Override(rationale, "unused", f"{said}: nothing to override", verdict)
    refusals = []
    if blocks.critical:
        refusals.append(
            f"{plural(len(blocks.critical), 'critical case')} failed: {', '.join(blocks.critical)}"
        )
    if blocks.trigger_critical:
        refusals.append(
            "a skill's trigger score falls short on "
            f"{plural(len(blocks.trigger_critical), 'critical case')}: "
            + ", ".join(blocks.trigger_critical)
        )
    cases = tuple(sorted({*blocks.critical, *blocks.trigger_critical, *blocks.cases}))
    if refusals:
        why = "; ".join(refusals) + " (no override for a failing critical case)"
        return Override(rationale, "refused", why, verdict, blocks.reasons, cases)
    why = "blocked only by " + " and ".join(blocks.liftable)
    return Override(rationale, "applied", why, verdict, blocks.reasons, cases)


def trigger_critical(records: Sequence[RunRecord], limits: skills.SkillLimits) -> list[str]:
    """The critical cases whose graded runs count in a skill's trigger shortfall: a
    missed trigger where the recall falls short, a false one where the false-trigger
    rate does (docs/skills.md, "Trigger scores")."""
    short: set[tuple[str, str, str]] = set()
    for score in skills.scores(records):
        recall, false_rate = score.recall, score.false_trigger_rate
        if limits.min_recall is not None and recall is not None and recall < limits.min_recall:
            short.add((score.skill, score.variant, "skill_used"))
        cap = limits.max_false_trigger
        if cap is not None and false_rate is not None and false_rate > cap:
            short.add((score.skill, score.variant, "skill_not_used"))
    found = {
        r.case_id
        for r in records
        if r.kind == "case" and r.outcome in GRADED and r.severity == "critical"
        for c in r.checks
        if not c.passed and c.skill is not None and (c.skill, r.variant, c.type) in short
    }
    return sorted(found)


def author(root: Path, environ: Mapping[str, str]) -> Author:
    """Who runs the session (:class:`Author`): git's identity in ``root``, else the
    first of :data:`IDENTITY_VARIABLES` set in ``environ``."""
    name, email = _git_config(root, "user.name"), _git_config(root, "user.email")
    if name or email:
        return Author(name, email, "git config")
    for name_variable, email_variable in IDENTITY_VARIABLES:
        value = environ.get(name_variable, "").strip()
        if value:
            mail = environ.get(email_variable, "").strip() if email_variable else ""
            return Author(value, mail or None, f"env {name_variable}")
    return Author()


def _git_config(root: Path, key: str) -> str | None:
    try:
        done = git.run(root, ["config", "--get", key], timeout=10)
    except (git.GitNotFound, git.GitTimedOut, OSError):
        return None
    value = done.stdout.strip() if done.returncode == 0 else ""
    return value or None


@dataclass(frozen=True)
class Quarantined:
    """A quarantined case: the results file's ``quarantined`` entry."""

    id: str
    severity: Severity
    reason: str
    file: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "severity": self.severity, "reason": self.reason, "file": self.file}


def quarantined(records: Iterable[RunRecord]) -> list[Quarantined]:
    """Each quarantined case once (over variants and repetitions), critical first, then
    by id."""
    seen: dict[str, Quarantined] = {}
    for r in records:
        if r.quarantine is not None and r.case_id not in seen:
            seen[r.case_id] = Quarantined(r.case_id, r.severity, r.quarantine, r.file)
    return sorted(seen.values(), key=lambda q: (SEVERITIES.index(q.severity), q.id))


def quarantine_lines(records: Iterable[RunRecord]) -> list[str]:
    """The ``eval gate`` section's line per quarantined critical case: a gap in the
    gate that a skip count would hide."""
    return [
        f"quarantined critical case: {q.id} ({q.reason}): the gate does not check it"
        for q in quarantined(records)
        if q.severity == "critical"
    ]
