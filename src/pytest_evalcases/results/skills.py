"""Trigger scores of skills (docs/skills.md, "Trigger scores").

A ``skill_used`` check makes its case a positive of the skill (it should fire), a
``skill_not_used`` check a negative (it should not). Over every graded run, repeats
included, per skill and variant: the recall (fired when it should) and the
false-trigger rate (fired when it should not), each with its 95 % Wilson interval.
Errored and skipped runs reached no verdict and do not count. Ini
``eval_skill_min_recall`` / ``eval_skill_max_false_trigger`` make a shortfall BLOCK.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pytest_evalcases.kinds import GRADED
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.results.stats import wilson


@dataclass(frozen=True)
class TriggerScore:
    """One skill's trigger counts in one variant."""

    skill: str
    variant: str
    #: Graded ``skill_used`` checks, and how many of them passed (the skill fired).
    positives: int
    fired: int
    #: Graded ``skill_not_used`` checks, and how many of them failed (it fired anyway).
    negatives: int
    false_triggers: int

    @property
    def recall(self) -> float | None:
        return self.fired / self.positives if self.positives else None

    @property
    def false_trigger_rate(self) -> float | None:
        return self.false_triggers / self.negatives if self.negatives else None

    def to_dict(self) -> dict[str, Any]:
        """The score as a results file's ``skills`` entry (docs/results.md)."""
        return {
            "skill": self.skill,
            "variant": self.variant,
            "positives": self.positives,
            "fired": self.fired,
            "recall": self.recall,
            "recall_ci95": list(wilson(self.fired, self.positives)) if self.positives else None,
            "negatives": self.negatives,
            "false_triggers": self.false_triggers,
            "false_trigger_rate": self.false_trigger_rate,
            "false_trigger_ci95": (
                list(wilson(self.false_triggers, self.negatives)) if self.negatives else None
            ),
        }


def scores(records: Iterable[RunRecord]) -> list[TriggerScore]:
    """The trigger scores of every skill a graded run checked, by skill then variant
    (in the order the variants first appear)."""
    counts: dict[tuple[str, str], list[int]] = {}
    variants: dict[str, int] = {}
    for record in records:
        if record.kind != "case" or record.outcome not in GRADED:
            continue
        variants.setdefault(record.variant, len(variants))
        for check in record.checks:
            if check.skill is None:
                continue
            tally = counts.setdefault((check.skill, record.variant), [0, 0, 0, 0])
            if check.type == "skill_used":
                tally[0] += 1
                tally[1] += check.passed
            elif check.type == "skill_not_used":
                tally[2] += 1
                tally[3] += not check.passed
    order = sorted(counts, key=lambda key: (key[0], variants[key[1]]))
    return [TriggerScore(skill, variant, *counts[skill, variant]) for skill, variant in order]


@dataclass(frozen=True)
class SkillLimits:
    """``eval_skill_min_recall`` and ``eval_skill_max_false_trigger``; ``None``: unset."""

    min_recall: float | None = None
    max_false_trigger: float | None = None

    @property
    def active(self) -> bool:
        return self.min_recall is not None or self.max_false_trigger is not None


def shortfalls(found: Iterable[TriggerScore], limits: SkillLimits) -> list[str]:
    """What falls short of ``limits``, each naming the skill (and variant). A skill
    without positives has no recall to fall short, one without negatives no
    false-trigger rate."""
    out = []
    for score in found:
        name = score.skill + (f" [{score.variant}]" if score.variant else "")
        recall, false_rate = score.recall, score.false_trigger_rate
        if limits.min_recall is not None and recall is not None and recall < limits.min_recall:
            out.append(
                f"skill {name}: recall {recall:.0%} below eval_skill_min_recall "
                f"{limits.min_recall:.0%}"
            )
        cap = limits.max_false_trigger
        if cap is not None and false_rate is not None and false_rate > cap:
            out.append(
                f"skill {name}: false-trigger rate {false_rate:.0%} above "
                f"eval_skill_max_false_trigger {cap:.0%}"
            )
    return out
