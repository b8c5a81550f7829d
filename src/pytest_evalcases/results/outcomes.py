"""Case outcomes: a case's verdict in one variant, over its runs (docs/reference.md).

Read by the gate, the baseline comparison and the trends alike, from the run records.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_evalcases.kinds import SEVERITIES, CaseOutcome, Severity
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.results.stats import wilson

#: The severities whose failures block; advisory ones are reported and never do.
BLOCKING: tuple[Severity, ...] = ("critical", "normal")


@dataclass(frozen=True)
class CaseVerdict:
    """A case's verdict in one variant, over its repetitions."""

    case_id: str
    variant: str
    severity: Severity
    outcome: CaseOutcome
    runs: int
    #: Runs that reached a verdict (passed, failed or xfailed).
    graded_runs: int
    passes: int
    errors: int
    min_pass_rate: float
    checks_passed: int
    checks_total: int
    #: check id -> passed in every graded run
    checks: dict[str, bool]
    #: A failed case's failure, as severe as its most severe failed run's (a task
    #: directory whose LOW checks alone failed: ``advisory``); ``None`` unless it failed.
    failure_severity: Severity | None = None

    @property
    def counted_severity(self) -> Severity:
        """The severity the gate counts the case under: its failure's when it failed,
        else its own (docs/case-format.md, "Task-directory format")."""
        return self.failure_severity or self.severity

    @property
    def pass_rate(self) -> float | None:
        return self.passes / self.graded_runs if self.graded_runs else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.passes, self.graded_runs)


def case_verdicts(records: Iterable[RunRecord]) -> dict[str, list[CaseVerdict]]:
    """Group run records into case verdicts, by variant in order of appearance."""
    groups: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    for record in records:
        groups[(record.variant, record.case_id)].append(record)
    by_variant: dict[str, list[CaseVerdict]] = defaultdict(list)
    for (variant, case_id), runs in groups.items():
        by_variant[variant].append(_verdict(case_id, variant, runs))
    return dict(by_variant)


def _verdict(case_id: str, variant: str, runs: list[RunRecord]) -> CaseVerdict:
    graded = [r for r in runs if r.reached_verdict]
    passes = sum(1 for r in graded if r.outcome == "passed")
    errors = sum(1 for r in runs if r.outcome == "error")
    min_rate = runs[0].min_pass_rate
    outcome: CaseOutcome
    if graded:
        outcome = "passed" if passes / len(graded) >= min_rate - 1e-9 else "failed"
    else:
        outcome = "error" if errors else "skipped"
    failed_runs = [r.failed_as for r in graded if r.outcome != "passed"]
    failure = (
        min(failed_runs, key=SEVERITIES.index) if outcome == "failed" and failed_runs else None
    )
    checks: dict[str, bool] = {}
    passed_checks = total_checks = 0
    for r in graded:
        for check in r.checks:
            checks[check.id] = checks.get(check.id, True) and check.passed
            passed_checks += check.passed
            total_checks += 1
    return CaseVerdict(
        case_id=case_id,
        variant=variant,
        severity=runs[0].severity,
        outcome=outcome,
        runs=len(runs),
        graded_runs=len(graded),
        passes=passes,
        errors=errors,
        min_pass_rate=min_rate,
        checks_passed=passed_checks,
        checks_total=total_checks,
        checks=checks,
        failure_severity=failure,
    )
