"""Results files (SPEC 5.1): one JSON document per run, written atomically.

The document is built from the run records alone, so that a file written by pytest
and a file merged from shards (``evalcases merge``) are computed the same way. Plain
Python; :mod:`.recording` decides when and where a file is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_evalcases.atomic import write_atomic
from pytest_evalcases.errors import EvalcasesError
from pytest_evalcases.redact import redact_data
from pytest_evalcases.results import gate
from pytest_evalcases.results.record import RunRecord

FORMAT = 1
DEFAULT_DIR = Path("evals") / "results"


class ResultsFileError(EvalcasesError):
    """A results file that cannot be read: missing, not JSON, or not a results file."""


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
    tolerance: float = 3.0
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


def parse_date(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None


def executed(records: Iterable[RunRecord]) -> bool:
    """Whether any eval item ran: a run that is neither skipped nor a broken file."""
    return any(r.kind != "file" and r.outcome != "skipped" for r in records)


def usage(records: Iterable[RunRecord]) -> dict[str, Any]:
    """Token and cost totals and means per run, over the runs that report them."""
    tokens = [
        (r.tokens_in or 0) + (r.tokens_out or 0)
        for r in records
        if r.kind != "file" and (r.tokens_in is not None or r.tokens_out is not None)
    ]
    costs = [r.cost_usd for r in records if r.kind != "file" and r.cost_usd is not None]
    return {
        "runs_with_tokens": len(tokens),
        "tokens_total": sum(tokens),
        "tokens_mean": sum(tokens) / len(tokens) if tokens else None,
        "runs_with_cost": len(costs),
        "cost_total": sum(costs),
        "cost_mean": sum(costs) / len(costs) if costs else None,
    }


def _counts(cases: Sequence[gate.CaseVerdict], broken: int) -> dict[str, Any]:
    passed = sum(1 for c in cases if c.outcome == "passed")
    failed = sum(1 for c in cases if c.outcome == "failed")
    errors = sum(1 for c in cases if c.outcome == "error") + broken
    return {
        "passed": passed,
        "failed": failed,
        "errors": errors,
        "skipped": sum(1 for c in cases if c.outcome == "skipped"),
        "total": passed + failed + errors,
        "pass_rate": passed / (passed + failed) if passed + failed else None,
    }


def _case_verdict(case: gate.CaseVerdict) -> dict[str, Any]:
    """A case's verdict in one variant over its repetitions: the pass rate of its
    graded runs with its 95 % Wilson interval, against the case's ``min_pass_rate``."""
    rate = case.pass_rate
    return {
        "id": case.case_id,
        "outcome": case.outcome,
        "runs": case.runs,
        "graded": case.graded,
        "passes": case.passes,
        "errors": case.errors,
        "pass_rate": rate,
        "ci95": [round(bound, 4) for bound in case.interval] if rate is not None else None,
        "min_pass_rate": case.min_pass_rate,
    }


def document(
    records: Sequence[RunRecord],
    min_pass_rate: float,
    *,
    started: datetime,
    finished: datetime | None = None,
    complete: bool = True,
    incomplete_reasons: Sequence[str] = (),
    pins: dict[str, Any] | None = None,
    sources: dict[str, str] | None = None,
    shard: tuple[int, int] | None = None,
    verdict: gate.Verdict | None = None,
    order: Sequence[str] = (),
    mode: str = "run",
) -> dict[str, Any]:
    """The results document of ``records``. Counts are per case verdict (a case
    repeated five times counts once); ``verdict`` overrides the gate's own. ``order``
    names the variants as configured (the first is the baseline); ``mode`` is ``run``,
    or ``red-first`` for authoring runs, which trends leave out."""
    report = gate.evaluate(list(records), min_pass_rate, order=order)
    broken = len(report.broken_files)
    all_cases = [c for v in report.variants for c in v.cases]
    final = verdict or report.verdict
    variants = []
    for v in report.variants:
        entry: dict[str, Any] = {"name": v.name, "source": (sources or {}).get(v.name, "")}
        entry.update(_counts(v.cases, broken))
        entry["checks_passed"] = v.checks_passed
        entry["checks_total"] = v.checks_total
        entry["verdict"] = gate.variant_verdict(v, min_pass_rate, broken).status
        entry["cases"] = [_case_verdict(c) for c in v.cases]
        variants.append(entry)
    doc: dict[str, Any] = {
        "format": FORMAT,
        "date": iso(started),
        "finished": iso(finished) if finished else None,
        "duration": round((finished - started).total_seconds(), 3) if finished else None,
        "complete": complete,
        "incomplete_reasons": list(incomplete_reasons),
        "mode": mode,
    }
    doc.update(_counts(all_cases, broken))
    doc.update(
        {
            "checks_passed": sum(v.checks_passed for v in report.variants),
            "checks_total": sum(v.checks_total for v in report.variants),
            "verdict": final.status,
            "verdict_reason": final.reason,
            "min_pass_rate": min_pass_rate,
            "shard": f"{shard[0]}/{shard[1]}" if shard else None,
            "usage": usage(records),
            "pins": pins or {},
            "variants": variants,
            "comparisons": [
                {
                    "baseline": c.baseline,
                    "variant": c.variant,
                    "regressed_cases": c.regressed_cases,
                    "improved_cases": c.improved_cases,
                    "regressed_checks": [list(pair) for pair in c.regressed_checks],
                    "improved_checks": [list(pair) for pair in c.improved_checks],
                    "mcnemar_p": c.p_value,
                }
                for c in report.comparisons
            ],
            "cases": [r.to_dict() for r in records],
        }
    )
    redacted: dict[str, Any] = redact_data(doc)
    return redacted


def records_of(doc: dict[str, Any]) -> list[RunRecord]:
    """The run records stored in a results document."""
    return [RunRecord.from_dict(c) for c in doc.get("cases", []) if isinstance(c, dict)]


def load(path: Path) -> dict[str, Any]:
    """Read a results file; anything that is not one is a :class:`ResultsFileError`."""
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise ResultsFileError(f"{path}: cannot read results file: {exc.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsFileError(
            f"{path}:{exc.lineno}: not a results file: invalid JSON ({exc.msg})"
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise ResultsFileError(f"{path}: not a results file: no `cases` list")
    for i, case in enumerate(doc["cases"]):
        if not isinstance(case, dict) or not {"id", "outcome"} <= case.keys():
            raise ResultsFileError(f"{path}: cases[{i}]: expected an object with id and outcome")
    return doc


def write(doc: dict[str, Any], path: Path, *, replace: bool = False) -> Path:
    """Write ``doc`` to ``path`` atomically and return where it landed.

    A temporary file in the same directory is renamed into place, so a reader never
    sees half a file. Unless ``replace``, an existing file is never overwritten: the
    name gets a ``-1``, ``-2``, ... suffix instead (two runs in the same millisecond,
    two shards writing into one directory).
    """
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return write_atomic(path, text, replace=replace)
