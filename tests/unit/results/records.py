"""Run records and results documents for the unit tests of results/ and report/."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.record import CheckRecord, RunRecord
from tests.helpers.results import document

STARTED = datetime(2026, 12, 1, 9, 30, tzinfo=timezone.utc)
FINISHED = datetime(2026, 12, 1, 9, 31, 2, 500000, tzinfo=timezone.utc)


def run(case: str, outcome: str, variant: str = "", **kw: Any) -> RunRecord:
    """One run of ``case`` with one check ``c`` that passed when the run did."""
    checks = kw.pop("checks", [CheckRecord("c", "output_matches", None, outcome == "passed", "")])
    return RunRecord(
        case_id=case,
        file=f"evals/{case}.yaml",
        line=1,
        defends="AGENTS.md",
        severity=kw.pop("severity", "normal"),
        variant=variant,
        outcome=outcome,  # type: ignore[arg-type]
        checks=checks,
        **kw,
    )


def doc(records: list[RunRecord], **kw: Any) -> ResultsDocument:
    return document(records, started=kw.pop("started", STARTED), **kw)
