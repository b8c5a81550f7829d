"""How much perturbed prompts cost in pass rate, per class (docs/perturbation.md).

For each variant and perturbation class: the pass rate of the runs of the prompts as
written and of the perturbed runs, over the same cases (a case that opted out, or that
no perturbed run of the class reached, counts in neither), the drop in percentage
points, and each rate's 95 % Wilson interval. A drop above ``eval_perturb_max_delta``
marks the class brittle. Runs count when they reached a verdict: an errored run says
nothing about the wording.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.results.stats import wilson


@dataclass(frozen=True)
class ClassScore:
    """One perturbation class in one variant: originals against perturbed runs."""

    variant: str
    cls: str
    original_passes: int
    original_runs: int
    perturbed_passes: int
    perturbed_runs: int
    #: ``eval_perturb_max_delta``, in percentage points.
    max_delta: float

    @property
    def original_rate(self) -> float | None:
        return self.original_passes / self.original_runs if self.original_runs else None

    @property
    def perturbed_rate(self) -> float | None:
        return self.perturbed_passes / self.perturbed_runs if self.perturbed_runs else None

    @property
    def delta(self) -> float | None:
        """Percentage points the pass rate dropped under perturbation (negative: rose)."""
        if self.original_rate is None or self.perturbed_rate is None:
            return None
        return (self.original_rate - self.perturbed_rate) * 100

    @property
    def flagged(self) -> bool:
        """The drop exceeds ``max_delta``: the result is brittle to this class."""
        return self.delta is not None and self.delta > self.max_delta + 1e-9

    def to_dict(self) -> dict[str, Any]:
        """The class's entry in the results file's ``perturbation.classes``."""
        return {
            "variant": self.variant,
            "class": self.cls,
            "original": _rate(self.original_passes, self.original_runs),
            "perturbed": _rate(self.perturbed_passes, self.perturbed_runs),
            "delta": _round(self.delta),
            "flagged": self.flagged,
        }


def scores(records: Iterable[RunRecord], max_delta: float) -> list[ClassScore]:
    """Every (variant, class) that perturbed runs reached a verdict in, in the order of
    their first record."""
    originals: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    perturbed: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    for record in records:
        if record.kind == "file" or not record.reached_verdict:
            continue
        if record.perturbation is None:
            originals[(record.variant, record.case_id)].append(record)
        else:
            cls = record.perturbation.rpartition("-")[0]
            perturbed[(record.variant, cls)].append(record)
    out = []
    for (variant, cls), runs in perturbed.items():
        cases = {r.case_id for r in runs}
        base = [r for case_id in sorted(cases) for r in originals.get((variant, case_id), [])]
        out.append(
            ClassScore(
                variant=variant,
                cls=cls,
                original_passes=_passes(base),
                original_runs=len(base),
                perturbed_passes=_passes(runs),
                perturbed_runs=len(runs),
                max_delta=max_delta,
            )
        )
    return out


def to_dict(found: Iterable[ClassScore], max_delta: float) -> dict[str, Any]:
    """The results file's ``perturbation`` object (docs/results.md)."""
    return {"max_delta": max_delta, "classes": [score.to_dict() for score in found]}


def _passes(runs: Iterable[RunRecord]) -> int:
    return sum(1 for r in runs if r.outcome == "passed")


def _rate(passes: int, runs: int) -> Mapping[str, Any]:
    low, high = wilson(passes, runs)
    return {
        "passed": passes,
        "runs": runs,
        "pass_rate": _round(passes / runs) if runs else None,
        "interval": [_round(low), _round(high)] if runs else None,
    }


def _round(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None
