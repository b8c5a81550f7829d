"""Results files (docs/results.md): the one writer.

The document is built from the gate's report alone, so that a file written by pytest
and a file merged from shards (``evalcases merge``) are computed the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_evalcases import defaults
from pytest_evalcases.atomic import write_atomic
from pytest_evalcases.redact import Redactor
from pytest_evalcases.results import gate, perturbation
from pytest_evalcases.results.document import (
    CaseEntry,
    ComparisonEntry,
    Counts,
    ResultsDocument,
    SuiteSelection,
    VariantEntry,
    usage,
)
from pytest_evalcases.results.outcomes import CaseVerdict
from pytest_evalcases.results.override import Author
from pytest_evalcases.results.record import RunRecord


@dataclass(frozen=True)
class ResultsSettings:
    """Where results go, what they are compared with, and which shard runs."""

    save: bool = True
    #: ``eval_results_dir``, absolute.
    results_dir: Path | None = None
    #: ``--eval-save PATH``, absolute: this exact file, replaced if it exists.
    save_path: Path | None = None
    #: ``--eval-baseline FILE``, absolute.
    baseline: Path | None = None
    #: ``eval_baseline_tolerance``, in percentage points.
    tolerance: float = defaults.BASELINE_TOLERANCE
    #: ``eval_config_files`` patterns, for the configuration pins.
    config_patterns: tuple[str, ...] = ()
    #: ``--eval-shard K/N`` as ``(K, N)``, 1-based.
    shard: tuple[int, int] | None = None


def iso(moment: datetime) -> str:
    """``2026-12-01T09:30:00.123Z``: UTC with milliseconds."""
    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def file_stem(moment: datetime) -> str:
    """``2026-12-01T09-30-00.123Z``: :func:`iso` without colons (Windows-safe)."""
    return iso(moment).replace(":", "-")


def parse_date(text: str | None) -> datetime | None:
    """The moment of an :func:`iso` date, or ``None`` when it is not one."""
    try:
        return datetime.fromisoformat((text or "").replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None


def executed(records: Iterable[RunRecord]) -> bool:
    """Whether any eval item ran: a run that is neither skipped nor a broken file."""
    return any(r.kind != "file" and r.outcome != "skipped" for r in records)


def _counts(cases: Sequence[CaseVerdict], broken: int) -> Counts:
    passed = sum(1 for c in cases if c.outcome == "passed")
    failed = sum(1 for c in cases if c.outcome == "failed")
    errors = sum(1 for c in cases if c.outcome == "error") + broken
    return Counts(
        passed=passed,
        failed=failed,
        errors=errors,
        skipped=sum(1 for c in cases if c.outcome == "skipped"),
        total=passed + failed + errors,
        pass_rate=passed / (passed + failed) if passed + failed else None,
    )


def _case_entry(case: CaseVerdict) -> CaseEntry:
    rate = case.pass_rate
    low, high = case.interval
    return CaseEntry(
        id=case.case_id,
        outcome=case.outcome,
        runs=case.runs,
        graded_runs=case.graded_runs,
        passes=case.passes,
        errors=case.errors,
        pass_rate=rate,
        ci95=(round(low, 4), round(high, 4)) if rate is not None else None,
        min_pass_rate=case.min_pass_rate,
    )


def document(
    report: gate.GateReport,
    *,
    started: datetime,
    finished: datetime | None = None,
    complete: bool = True,
    incomplete_reasons: Sequence[str] = (),
    pins: dict[str, Any] | None = None,
    sources: dict[str, str] | None = None,
    shard: tuple[int, int] | None = None,
    selection: SuiteSelection | None = None,
    overrider: Author | None = None,
    overridden_at: str | None = None,
) -> ResultsDocument:
    """The results document of the gate's ``report`` (:func:`gate.decide
    <pytest_evalcases.results.gate.decide>`): its records, its verdict and the policy it
    was decided under. Counts are per case verdict (a case repeated five times counts
    once). ``sources`` names each variant's configuration; the mode is ``red-first``
    for authoring runs, which trends leave out, else ``run``. ``selection`` is the part
    of the suite the run selected; without it a run is taken for the whole suite unless
    it is a shard (:func:`complete_suite`). The report's override is signed by
    ``overrider`` at ``overridden_at`` (the time the run finished without it)."""
    records = report.records
    policy = report.policy
    broken = len(report.broken_files)
    variants = tuple(
        VariantEntry(
            name=v.name,
            source=(sources or {}).get(v.name, ""),
            counts=_counts(v.cases, broken),
            checks_passed=v.checks_passed,
            checks_total=v.checks_total,
            verdict=report.variant_verdicts[v.name].status,
            cases=tuple(_case_entry(c) for c in v.cases),
            factors=report.factors.get(v.name),
            usage=usage(r for r in records if r.variant == v.name and r.kind != "file"),
        )
        for v in report.variants
    )
    comparisons = tuple(
        ComparisonEntry(
            baseline=c.baseline,
            variant=c.variant,
            regressed_cases=tuple(c.regressed_cases),
            improved_cases=tuple(c.improved_cases),
            regressed_checks=tuple(c.regressed_checks),
            improved_checks=tuple(c.improved_checks),
            mcnemar_p=c.p_value,
            differ=c.differ,
        )
        for c in report.comparisons
    )
    return ResultsDocument(
        date=iso(started),
        finished=iso(finished) if finished else None,
        duration=round((finished - started).total_seconds(), 3) if finished else None,
        complete=complete,
        incomplete_reasons=tuple(incomplete_reasons),
        mode="red-first" if policy.red_first else "run",
        counts=_counts([c for v in report.variants for c in v.cases], broken),
        checks_passed=sum(v.checks_passed for v in report.variants),
        checks_total=sum(v.checks_total for v in report.variants),
        verdict=report.verdict.status,
        verdict_reason=report.verdict.reason,
        min_pass_rate=policy.min_pass_rate,
        shard=f"{shard[0]}/{shard[1]}" if shard else None,
        usage=usage(records),
        pins=pins or {},
        variants=variants,
        comparisons=comparisons,
        cases=tuple(records),
        complete_suite=complete_suite(complete, selection, shard),
        selection=selection,
        perturbation=perturbation.to_dict(report.perturbation, policy.perturb_max_delta)
        if policy.perturb_max_delta is not None
        else None,
        baseline=report.baseline.to_dict() if report.baseline is not None else None,
        policy=policy,
        override=report.override.signed(overrider, overridden_at or iso(finished or started))
        if report.override is not None
        else None,
        metrics=report.metrics,
    )


def complete_suite(
    complete: bool, selection: SuiteSelection | None, shard: tuple[int, int] | None = None
) -> bool:
    """Whether a run covered the whole suite (its file's ``complete_suite``): it ran to
    its end and selected every run of the suite (docs/results.md, "Runs of part of the
    suite"); without a ``selection``, unless it is a ``shard``."""
    return complete and (selection.whole if selection is not None else not shard)


def dumps(doc: ResultsDocument | dict[str, Any], redact: Redactor | None = None) -> str:
    """The file's text: indented JSON, every string redacted (docs/results.md, "Secrets")
    by ``redact``, the session's, or else the environment's."""
    data = doc.to_dict() if isinstance(doc, ResultsDocument) else doc
    return json.dumps((redact or Redactor()).data(data), indent=2, ensure_ascii=False) + "\n"


def write(
    doc: ResultsDocument | dict[str, Any],
    path: Path,
    *,
    replace: bool = False,
    redact: Redactor | None = None,
) -> Path:
    """Write ``doc`` to ``path`` atomically and return where it landed.

    A temporary file in the same directory is renamed into place, so a reader never
    sees half a file. Unless ``replace``, an existing file is never overwritten: the
    name gets a ``-1``, ``-2``, ... suffix instead (two runs in the same millisecond,
    two shards writing into one directory).
    """
    return write_atomic(path, dumps(doc, redact), replace=replace)
