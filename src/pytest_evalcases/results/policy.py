"""The gate policy: every number and option the verdict follows (docs/results.md,
"The gate policy").

A run stores the policy it was gated under in its results file, so that
``evalcases merge`` decides the merged verdict of its shards under the very same one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pytest_evalcases import defaults
from pytest_evalcases.results.modes import ModeRule
from pytest_evalcases.results.skills import SkillLimits


@dataclass(frozen=True)
class BaselinePolicy:
    """``--eval-baseline FILE`` and ``eval_baseline_tolerance`` (docs/results.md, "The
    baseline gate")."""

    #: The baseline's results file: relative to the directory of the results file that
    #: stores the policy, or absolute.
    file: str
    #: In percentage points.
    tolerance: float = defaults.BASELINE_TOLERANCE
    #: The rule on a failure mode that is new against the baseline's.
    modes: ModeRule = field(default_factory=ModeRule)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "tolerance": self.tolerance, **self.modes.to_dict()}


@dataclass(frozen=True)
class GatePolicy:
    """What the gate decides by, besides the run records."""

    #: ``eval_min_pass_rate``.
    min_pass_rate: float = defaults.MIN_PASS_RATE
    #: ``--eval-red-first``: a case that passes is the failure (docs/writing-cases.md).
    red_first: bool = False
    #: ``eval_skill_min_recall`` / ``eval_skill_max_false_trigger`` (docs/skills.md).
    skill_limits: SkillLimits = field(default_factory=SkillLimits)
    #: ``eval_perturb_blocking``: perturbed runs count as runs of their case.
    perturbed_block: bool = False
    #: ``eval_perturb_max_delta`` of a run of ``--eval-perturb``; ``None`` without one.
    perturb_max_delta: float | None = None
    #: ``--eval-baseline``; ``None`` without one.
    baseline: BaselinePolicy | None = None
    #: ``--eval-override``: the rationale that lifts a block of normal cases or the
    #: baseline gate (docs/results.md, "Overrides and quarantines"); ``None`` without one.
    override: str | None = None

    def with_baseline_file(self, file: str) -> GatePolicy:
        """This policy with its baseline's file named ``file`` (a path made relative to
        another directory)."""
        if self.baseline is None:
            return self
        return replace(self, baseline=replace(self.baseline, file=file))

    def to_dict(self) -> dict[str, Any]:
        """The results file's ``policy`` object, keys in the documented order."""
        return {
            "min_pass_rate": self.min_pass_rate,
            "red_first": self.red_first,
            "skill_min_recall": self.skill_limits.min_recall,
            "skill_max_false_trigger": self.skill_limits.max_false_trigger,
            "perturb_blocking": self.perturbed_block,
            "perturb_max_delta": self.perturb_max_delta,
            "baseline": self.baseline.to_dict() if self.baseline is not None else None,
            "override": self.override,
        }


def differences(first: GatePolicy, second: GatePolicy) -> list[tuple[str, Any, Any]]:
    """``(key, first's value, second's value)`` of every key of the ``policy`` object
    (``baseline.file`` for a baseline's) in which the two differ."""
    return [
        (key, a, b) for (key, a), (_, b) in zip(_flat(first), _flat(second), strict=True) if a != b
    ]


def _flat(policy: GatePolicy) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in policy.to_dict().items():
        if key == "baseline":
            given = value or dict.fromkeys(BaselinePolicy("").to_dict())
            out += [(f"baseline.{k}", v) for k, v in given.items()]
        else:
            out.append((key, value))
    return out
