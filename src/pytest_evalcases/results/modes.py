"""Failure modes (docs/results.md, "Failure modes"): what a failed run is classified
into, how a run's failures spread over the modes, and the baseline gate's rule on a
mode that is new (docs/results.md, "The baseline gate").

A failed run takes the ``mode:`` of its first failing check that has one (in the
case's order), else ``loop`` when its transcript holds the same tool call with the
same input ``eval_loop_threshold`` times or more, else ``unclassified``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_evalcases import defaults
from pytest_evalcases.kinds import FAILURE_MODES, FailureMode
from pytest_evalcases.results.record import CheckRecord, RunRecord
from pytest_evalcases.text import percent

if TYPE_CHECKING:
    from pytest_evalcases.agents.base import ToolCall

#: The outcomes of a run that failed: an advisory case's failure is ``xfailed``.
FAILED = ("failed", "xfailed")


def failure_mode(word: object) -> FailureMode | None:
    """``word`` as a failure mode (one read back from a results file); ``None`` for
    anything that names none."""
    for mode in FAILURE_MODES:
        if mode == word:
            return mode
    return None


def classify(
    checks: Sequence[CheckRecord],
    calls: Sequence[ToolCall] | None,
    threshold: int = defaults.LOOP_THRESHOLD,
) -> FailureMode:
    """The failure mode of a failed run whose checks are ``checks`` and whose transcript
    is ``calls`` (``None`` without one)."""
    for check in checks:
        mode = failure_mode(check.mode)
        if not check.passed and mode is not None:
            return mode
    if calls is not None and looped(calls, threshold):
        return "loop"
    return "unclassified"


def looped(calls: Iterable[ToolCall], threshold: int = defaults.LOOP_THRESHOLD) -> bool:
    """Whether one tool call, the same tool with the same input, is made ``threshold``
    times or more (anywhere in the transcript, not only in a row)."""
    counts = Counter((call.name, call.input) for call in calls)
    return bool(counts) and max(counts.values()) >= threshold


def distribution(records: Iterable[RunRecord]) -> dict[FailureMode, int]:
    """How many failed runs (``failed`` and advisory ``xfailed``) of ``records`` are of
    each mode, in :data:`~pytest_evalcases.kinds.FAILURE_MODES` order, modes with none
    left out. A run without a mode (a file written before failure modes) counts in none."""
    counts = Counter(
        failure_mode(r.failure_mode) for r in records if r.outcome in FAILED and r.kind != "file"
    )
    return {mode: counts[mode] for mode in FAILURE_MODES if counts[mode]}


@dataclass(frozen=True)
class ModeRule:
    """The baseline gate's failure-mode rule: a mode under ``rare`` of the baseline's
    failures (or absent) and over ``new`` of the run's blocks, when at least
    ``min_failures`` failed runs of the run are of that mode (so that one failure out of
    one never blocks). ``unclassified`` never blocks by this rule: it says nothing about
    what went wrong."""

    rare: float = defaults.BASELINE_MODE_RARE
    new: float = defaults.BASELINE_MODE_NEW
    min_failures: int = defaults.BASELINE_MODE_MIN_FAILURES

    def to_dict(self) -> dict[str, Any]:
        """The rule's keys in the ``policy.baseline`` object."""
        return {
            "mode_rare": self.rare,
            "mode_new": self.new,
            "mode_min_failures": self.min_failures,
        }

    def new_modes(self, before: Iterable[RunRecord], after: Iterable[RunRecord]) -> list[str]:
        """One reason per failure mode of the critical and normal failed runs of
        ``after`` that is new against ``before``'s (``new failure mode tool_misuse: 40%
        of failures (baseline 0%)``); none when ``before`` has a failed run without a
        mode (a file written before failure modes: it cannot say which are new)."""
        old_runs = [r for r in before if r.outcome == "failed" and r.kind != "file"]
        if any(failure_mode(r.failure_mode) is None for r in old_runs):
            return []
        old = distribution(old_runs)
        new = distribution(r for r in after if r.outcome == "failed")
        old_total, new_total = sum(old.values()), sum(new.values())
        reasons: list[str] = []
        for mode, count in new.items():
            share = count / new_total
            was = old.get(mode, 0) / old_total if old_total else 0.0
            if (
                mode != "unclassified"
                and count >= self.min_failures
                and share > self.new + 1e-9
                and was < self.rare - 1e-9
            ):
                reasons.append(
                    f"new failure mode {mode}: {percent(share, 0)} of failures "
                    f"(baseline {percent(was, 0)})"
                )
        return reasons
