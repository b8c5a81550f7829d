"""The results document, typed (docs/results.md describes every key).

:class:`ResultsDocument` is what a results file holds: built from the run records by
:func:`pytest_evalcases.results.writer.document`, read back by
:func:`pytest_evalcases.results.reader.load`. :meth:`ResultsDocument.to_dict` writes the
JSON keys in the documented order; the Python names differ only where a key would be
ambiguous (a case verdict's ``graded`` is :attr:`CaseEntry.graded_runs`).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

from pytest_evalcases.kinds import CaseOutcome, Status
from pytest_evalcases.results import judging, override, skills
from pytest_evalcases.results.factors import Factors
from pytest_evalcases.results.metrics import Metrics
from pytest_evalcases.results.override import Override
from pytest_evalcases.results.policy import GatePolicy
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.text import plural

#: The version of the file format, written as ``format``.
FORMAT = 1

#: ``run``, or ``red-first`` for an authoring run (``--eval-red-first``), whose
#: outcomes are inverted: left out of trends and refused as a baseline.
Mode = Literal["run", "red-first"]
MODES: tuple[Mode, ...] = ("run", "red-first")


@dataclass(frozen=True)
class Counts:
    """Case verdicts counted: of the whole document or of one variant."""

    passed: int = 0
    failed: int = 0
    #: Cases that reached no verdict, and case files that did not load.
    errors: int = 0
    skipped: int = 0
    #: ``passed + failed + errors``.
    total: int = 0
    #: ``passed / (passed + failed)``; ``None`` when nothing was graded.
    pass_rate: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "skipped": self.skipped,
            "total": self.total,
            "pass_rate": self.pass_rate,
        }


#: The keys of :meth:`Counts.to_dict`, at the top level of a results file and in
#: its ``counts``.
COUNT_KEYS = ("passed", "failed", "errors", "skipped", "total", "pass_rate")


@dataclass(frozen=True)
class Usage:
    """Token and cost totals and means per run, over the runs that report them."""

    runs_with_tokens: int = 0
    tokens_total: int = 0
    tokens_mean: float | None = None
    runs_with_cost: int = 0
    cost_total: float = 0
    cost_mean: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs_with_tokens": self.runs_with_tokens,
            "tokens_total": self.tokens_total,
            "tokens_mean": self.tokens_mean,
            "runs_with_cost": self.runs_with_cost,
            "cost_total": self.cost_total,
            "cost_mean": self.cost_mean,
        }


@dataclass(frozen=True)
class CaseEntry:
    """A case's verdict in one variant over its repetitions (a variant's ``cases``)."""

    id: str
    outcome: CaseOutcome
    runs: int
    #: Runs that reached a verdict (the key ``graded``).
    graded_runs: int
    passes: int
    errors: int
    pass_rate: float | None
    #: The 95 % Wilson interval of ``pass_rate``, rounded to 4 places.
    ci95: tuple[float, float] | None
    min_pass_rate: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "outcome": self.outcome,
            "runs": self.runs,
            "graded": self.graded_runs,
            "passes": self.passes,
            "errors": self.errors,
            "pass_rate": self.pass_rate,
            "ci95": list(self.ci95) if self.ci95 is not None else None,
            "min_pass_rate": self.min_pass_rate,
        }


@dataclass(frozen=True)
class VariantEntry:
    """One variant (configuration or graded directory): counts, verdict, case verdicts."""

    name: str
    source: str
    counts: Counts
    checks_passed: int
    checks_total: int
    verdict: Status
    cases: tuple[CaseEntry, ...]
    #: The agent, model, arguments and configuration the variant ran with
    #: (docs/variants.md); ``None`` for graded directories and older files.
    factors: Factors | None = None
    #: What the variant's runs spent.
    usage: Usage | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "factors": self.factors.to_dict() if self.factors is not None else None,
            **self.counts.to_dict(),
            "checks_passed": self.checks_passed,
            "checks_total": self.checks_total,
            "verdict": self.verdict,
            "usage": self.usage.to_dict() if self.usage is not None else None,
            "cases": [c.to_dict() for c in self.cases],
        }


@dataclass(frozen=True)
class ComparisonEntry:
    """A variant against the baseline variant (the first)."""

    baseline: str
    variant: str
    regressed_cases: tuple[str, ...]
    improved_cases: tuple[str, ...]
    #: ``(case id, check id)`` pairs.
    regressed_checks: tuple[tuple[str, str], ...]
    improved_checks: tuple[tuple[str, str], ...]
    mcnemar_p: float
    #: The factors that differ between the two (docs/variants.md); ``None`` when
    #: their factors are not known.
    differ: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "variant": self.variant,
            "differ": list(self.differ) if self.differ is not None else None,
            "regressed_cases": list(self.regressed_cases),
            "improved_cases": list(self.improved_cases),
            "regressed_checks": [list(pair) for pair in self.regressed_checks],
            "improved_checks": [list(pair) for pair in self.improved_checks],
            "mcnemar_p": self.mcnemar_p,
        }


@dataclass(frozen=True)
class SuiteSelection:
    """The part of the suite a run selected (docs/results.md, "Runs of part of the
    suite"): the selecting arguments, and how many cases and runs it collected and
    deselected."""

    #: The selecting arguments as given: ``-k EXPR``, ``-m EXPR``, paths and node ids,
    #: ``--eval-tags``, ``--eval-defends``, ``--eval-changed``, ``--eval-shard``,
    #: ``--deselect``, ``--ignore``, ``--lf``, ``--sw``, ``-x``/``--maxfail``.
    arguments: tuple[str, ...] = ()
    #: Eval cases collected, and of them those no run of which was selected.
    collected: int = 0
    deselected: int = 0
    #: Their runs (case x variant x repetition), collected and deselected.
    collected_runs: int = 0
    deselected_runs: int = 0
    #: What kept part of the evals roots from being collected: a path argument or
    #: node id narrower than its evals root, an ``eval_paths`` directory no path
    #: reached, ``--ignore``, ``--lf``. One phrase each.
    uncollected: tuple[str, ...] = ()

    @property
    def whole(self) -> bool:
        """Every collected run was selected, from evals roots collected whole."""
        return not self.deselected_runs and not self.uncollected

    def describe(self) -> str:
        """``3 of 10 cases selected (-m critical)``: what part of the suite ran."""
        parts = list(self.uncollected)
        if self.deselected:
            parts.append(
                f"{self.collected - self.deselected} of {plural(self.collected, 'case')} selected"
            )
        elif self.deselected_runs:
            selected = self.collected_runs - self.deselected_runs
            parts.append(f"{selected} of {plural(self.collected_runs, 'run')} selected")
        text = "; ".join(parts) or "the whole suite"
        if self.deselected_runs and self.arguments:
            return f"{text} ({shlex.join(self.arguments)})"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "arguments": list(self.arguments),
            "collected": self.collected,
            "deselected": self.deselected,
            "collected_runs": self.collected_runs,
            "deselected_runs": self.deselected_runs,
            "uncollected": list(self.uncollected),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SuiteSelection:
        """The selection of :meth:`to_dict`'s data (an xdist worker's)."""
        return cls(
            arguments=tuple(str(a) for a in data.get("arguments", ())),
            collected=int(data.get("collected", 0)),
            deselected=int(data.get("deselected", 0)),
            collected_runs=int(data.get("collected_runs", 0)),
            deselected_runs=int(data.get("deselected_runs", 0)),
            uncollected=tuple(str(u) for u in data.get("uncollected", ())),
        )


@dataclass(frozen=True)
class MergedFrom:
    """One input file of ``evalcases merge``."""

    date: str | None
    shard: str | None
    complete: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {"date": self.date, "shard": self.shard, "complete": self.complete}


@dataclass(frozen=True)
class ResultsDocument:
    """One results file."""

    date: str
    finished: str | None
    duration: float | None
    complete: bool
    incomplete_reasons: tuple[str, ...]
    mode: Mode
    counts: Counts
    checks_passed: int
    checks_total: int
    verdict: Status
    verdict_reason: str
    min_pass_rate: float
    #: ``K/N`` of ``--eval-shard``.
    shard: str | None
    usage: Usage
    #: What makes two files comparable (docs/results.md, "Pins"); free-form mapping.
    pins: dict[str, Any]
    variants: tuple[VariantEntry, ...]
    comparisons: tuple[ComparisonEntry, ...]
    #: Every run, as recorded.
    cases: tuple[RunRecord, ...]
    format: int = FORMAT
    #: The ``--eval-baseline`` comparison (``BaselineResult.to_dict()``), when there was one.
    baseline: dict[str, Any] | None = None
    #: Written by ``evalcases merge`` only.
    merged_from: tuple[MergedFrom, ...] | None = None
    merge_warnings: tuple[str, ...] | None = None
    #: The run covered the whole suite: ``complete``, and its selection ``whole``
    #: (docs/results.md, "Runs of part of the suite").
    complete_suite: bool = True
    #: What part of the suite the run selected; ``None`` in files written before it
    #: was recorded.
    selection: SuiteSelection | None = None
    #: ``--eval-regrade``: the results file whose stored runs were graded again,
    #: relative to this file's directory (docs/results.md).
    regraded_from: str | None = None
    #: ``--eval-perturb``: originals against perturbed runs per class, and the flagging
    #: threshold (docs/perturbation.md); ``None`` (no key) without perturbed runs.
    perturbation: dict[str, Any] | None = None
    #: The policy the verdict was decided under (docs/results.md, "The gate policy");
    #: ``None`` in files written before it was stored.
    policy: GatePolicy | None = None
    #: ``--eval-override``: what came of it, who gave it and when (docs/results.md,
    #: "Overrides and quarantines"); ``None`` without one.
    override: Override | None = None
    #: Each variant's metrics (docs/results.md, "Metrics"); ``None`` in files written
    #: before they were stored.
    metrics: Metrics | None = None

    @property
    def is_red_first(self) -> bool:
        return self.mode == "red-first"

    @property
    def on_the_trend(self) -> bool:
        """A whole-suite run that is not an authoring run: its counts are the state of
        the suite, comparable with other such runs (docs/results.md, "A trend with jq")."""
        return self.complete_suite and not self.is_red_first

    def with_changes(self, **changes: Any) -> ResultsDocument:
        """A copy with some fields replaced."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The document as JSON-able data, keys in the documented order."""
        data: dict[str, Any] = {
            "format": self.format,
            "date": self.date,
            "finished": self.finished,
            "duration": self.duration,
            "complete": self.complete,
            "incomplete_reasons": list(self.incomplete_reasons),
            "complete_suite": self.complete_suite,
            "selection": self.selection.to_dict() if self.selection is not None else None,
            "mode": self.mode,
            # The top-level counts are the trend's: null where they are not the state
            # of the whole suite; the real ones are always under ``counts``.
            **(self.counts.to_dict() if self.on_the_trend else dict.fromkeys(COUNT_KEYS)),
            "counts": self.counts.to_dict(),
            "checks_passed": self.checks_passed,
            "checks_total": self.checks_total,
            "verdict": self.verdict,
            "verdict_reason": self.verdict_reason,
            "min_pass_rate": self.min_pass_rate,
            "policy": self.policy.to_dict() if self.policy is not None else None,
            "override": self.override.to_dict() if self.override is not None else None,
            "quarantined": [q.to_dict() for q in override.quarantined(self.cases)],
            "shard": self.shard,
            "usage": self.usage.to_dict(),
            "pins": self.pins,
            "variants": [v.to_dict() for v in self.variants],
            "comparisons": [c.to_dict() for c in self.comparisons],
            "metrics": self.metrics.to_dict() if self.metrics is not None else None,
            "skills": [score.to_dict() for score in skills.scores(self.cases)],
            "cases": [r.to_dict() for r in self.cases],
        }
        judged = judging.document_entry(self.cases)
        if judged is not None:
            data["judge"] = judged
        if self.perturbation is not None:
            data["perturbation"] = self.perturbation
        if self.baseline is not None:
            data["baseline"] = self.baseline
        if self.regraded_from is not None:
            data["regraded_from"] = self.regraded_from
        if self.merged_from is not None:
            data["merged_from"] = [m.to_dict() for m in self.merged_from]
        if self.merge_warnings is not None:
            data["merge_warnings"] = list(self.merge_warnings)
        return data


def usage(records: Iterable[RunRecord]) -> Usage:
    """Token and cost totals and means per run, over the runs that report them."""
    runs = [r for r in records if r.kind != "file"]
    tokens = [
        (r.tokens_in or 0) + (r.tokens_out or 0)
        for r in runs
        if r.tokens_in is not None or r.tokens_out is not None
    ]
    costs = [r.cost_usd for r in runs if r.cost_usd is not None]
    return Usage(
        runs_with_tokens=len(tokens),
        tokens_total=sum(tokens),
        tokens_mean=sum(tokens) / len(tokens) if tokens else None,
        runs_with_cost=len(costs),
        cost_total=sum(costs),
        cost_mean=sum(costs) / len(costs) if costs else None,
    )
