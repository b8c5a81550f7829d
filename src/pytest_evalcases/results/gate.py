"""The verdict: per-case outcomes from run records, per-variant summaries, the gate
policy and the exit status (docs/reference.md)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_evalcases.kinds import SEVERITIES, CaseOutcome, Severity, Status
from pytest_evalcases.results.factors import Factors, differing
from pytest_evalcases.results.perturbation import ClassScore
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.results.stats import mcnemar_exact, wilson
from pytest_evalcases.text import plural

EXIT_PASS = 0
EXIT_BLOCKED = 1
EXIT_INCONCLUSIVE = 2
_RANK = {"PASS": 0, "INCONCLUSIVE": 1, "BLOCKED": 2}


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


@dataclass(frozen=True)
class VariantSummary:
    """Counts of one variant (configuration or graded directory)."""

    name: str
    cases: list[CaseVerdict]

    def count(self, outcome: str, severity: str | None = None) -> int:
        return sum(
            1
            for c in self.cases
            if c.outcome == outcome and (severity is None or c.counted_severity == severity)
        )

    @property
    def decided(self) -> list[CaseVerdict]:
        """The cases that passed or failed (not errored, not skipped)."""
        return [c for c in self.cases if c.outcome in ("passed", "failed")]

    @property
    def ran(self) -> list[CaseVerdict]:
        """The cases that ran: passed, failed or errored (not skipped), as the
        ``eval gate`` summary and the results file's ``total`` count them."""
        return [c for c in self.cases if c.outcome != "skipped"]

    @property
    def checks_passed(self) -> int:
        return sum(c.checks_passed for c in self.decided)

    @property
    def checks_total(self) -> int:
        return sum(c.checks_total for c in self.decided)

    @property
    def pass_rate(self) -> float | None:
        decided = self.decided
        return self.count("passed") / len(decided) if decided else None


@dataclass(frozen=True)
class Comparison:
    """A variant against the baseline (the first variant)."""

    baseline: str
    variant: str
    regressed_cases: list[str]
    improved_cases: list[str]
    regressed_checks: list[tuple[str, str]]
    improved_checks: list[tuple[str, str]]
    #: exact McNemar p-value on the paired case outcomes, and the discordant counts
    p_value: float
    b: int
    c: int
    #: The factors that differ between the two variants (docs/variants.md); ``None``
    #: when their factors are not known (graded directories).
    differ: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Verdict:
    """``status`` is PASS, BLOCKED, INCONCLUSIVE, or NONE when nothing was graded."""

    status: Status
    reason: str = ""

    @property
    def exit_code(self) -> int | None:
        return {"PASS": EXIT_PASS, "BLOCKED": EXIT_BLOCKED, "INCONCLUSIVE": EXIT_INCONCLUSIVE}.get(
            self.status
        )


@dataclass(frozen=True)
class GateReport:
    """Everything the summary prints and the exit status follows."""

    variants: list[VariantSummary]
    comparisons: list[Comparison]
    broken_files: list[RunRecord]
    verdict: Verdict
    repeated: bool = False
    records: list[RunRecord] = field(default_factory=list)
    #: Extra lines for the summary before the verdict (the baseline comparison).
    notes: list[str] = field(default_factory=list)
    #: What each variant is made of, by name (docs/variants.md).
    factors: Mapping[str, Factors] = field(default_factory=dict)
    #: ``--eval-perturb``: originals against perturbed runs, per class (docs/perturbation.md).
    perturbation: tuple[ClassScore, ...] = ()


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


def compare(
    base: VariantSummary, other: VariantSummary, factors: Mapping[str, Factors] | None = None
) -> Comparison:
    """Cases and checks that regressed or improved from ``base`` to ``other``; with
    the variants' ``factors``, the ones that differ between them. Cases skipped in
    either (a case for another agent) count in neither direction."""
    before = {c.case_id: c for c in base.decided}
    after = {c.case_id: c for c in other.decided}
    regressed_cases, improved_cases = [], []
    regressed_checks: list[tuple[str, str]] = []
    improved_checks: list[tuple[str, str]] = []
    for case_id in before.keys() & after.keys():
        b, a = before[case_id], after[case_id]
        if b.outcome == "passed" and a.outcome == "failed":
            regressed_cases.append(case_id)
        elif b.outcome == "failed" and a.outcome == "passed":
            improved_cases.append(case_id)
        for check_id in b.checks.keys() & a.checks.keys():
            if b.checks[check_id] and not a.checks[check_id]:
                regressed_checks.append((case_id, check_id))
            elif not b.checks[check_id] and a.checks[check_id]:
                improved_checks.append((case_id, check_id))
    return Comparison(
        baseline=base.name,
        variant=other.name,
        regressed_cases=sorted(regressed_cases),
        improved_cases=sorted(improved_cases),
        regressed_checks=sorted(regressed_checks),
        improved_checks=sorted(improved_checks),
        p_value=mcnemar_exact(len(regressed_cases), len(improved_cases)),
        b=len(regressed_cases),
        c=len(improved_cases),
        differ=_differ(factors or {}, base.name, other.name),
    )


def _differ(factors: Mapping[str, Factors], base: str, other: str) -> tuple[str, ...] | None:
    if base not in factors or other not in factors:
        return None
    return differing(factors[base], factors[other])


def unfinished(verdict: Verdict, incomplete: Sequence[str]) -> Verdict:
    """``verdict`` for a run that did not finish (``incomplete``: why): never PASS, as
    the cases it did not run could have failed; INCONCLUSIVE instead."""
    if not incomplete or verdict.status != "PASS":
        return verdict
    return Verdict("INCONCLUSIVE", "run incomplete: " + "; ".join(incomplete))


def variant_verdict(
    summary: VariantSummary,
    min_pass_rate: float,
    broken: int,
    incomplete: Sequence[str] = (),
    *,
    red_first: bool = False,
) -> Verdict:
    """The gate policy for one variant (docs/reference.md, "Exit statuses of `pytest`").

    ``red_first``: the outcomes are those of ``--eval-red-first``, where a case "fails"
    because its checks all held: the policy is the same, the reasons say so."""
    verdict = _variant_verdict(summary, min_pass_rate, broken, red_first)
    return unfinished(verdict, incomplete)


def _variant_verdict(
    summary: VariantSummary, min_pass_rate: float, broken: int, red_first: bool
) -> Verdict:
    for severity in ("critical", "normal"):
        failed = [
            c.case_id
            for c in summary.cases
            if c.outcome == "failed" and c.counted_severity == severity
        ]
        if failed:
            cases = plural(len(failed), severity + " case")
            if red_first:
                # Under --eval-red-first such a case passed against the configuration:
                # it tests nothing yet (docs/writing-cases.md).
                what = (
                    "passes on first write (it tests nothing)"
                    if len(failed) == 1
                    else "pass on first write (they test nothing)"
                )
            else:
                what = "failed"
            return Verdict("BLOCKED", f"{cases} {what}: {_ids(failed)}")
    rate = summary.pass_rate
    # Advisory failures alone never block: the pass rate counts them only beside a
    # critical or normal case that reached a verdict, so that `-k` on an advisory case
    # is not blocked by a pass rate of one (docs/reference.md, "Exit statuses").
    gated = any(c.counted_severity != "advisory" for c in summary.decided)
    if gated and rate is not None and rate < min_pass_rate - 1e-9:
        if red_first:
            reason = (
                f"only {rate:.0%} of the cases fail first, as they should "
                f"(eval_min_pass_rate {min_pass_rate:.0%})"
            )
        else:
            reason = f"pass rate {rate:.0%} is below eval_min_pass_rate {min_pass_rate:.0%}"
        return Verdict("BLOCKED", reason)
    errored = [c.case_id for c in summary.cases if c.outcome == "error"]
    if errored or broken:
        parts = []
        if errored:
            parts.append(f"{plural(len(errored), 'case')} errored: {_ids(errored)}")
        if broken:
            parts.append(f"{plural(broken, 'case file')} could not be loaded")
        return Verdict("INCONCLUSIVE", "; ".join(parts))
    if rate is None:
        return Verdict("NONE", "nothing was graded")
    return Verdict("PASS")


def evaluate(
    records: list[RunRecord],
    min_pass_rate: float,
    order: Sequence[str] = (),
    *,
    incomplete: Sequence[str] = (),
    red_first: bool = False,
    factors: Mapping[str, Factors] | None = None,
    perturbed_block: bool = False,
) -> GateReport:
    """Aggregate every record of the session into the gate report.

    ``order``: the variant names as configured, the baseline first; under xdist records
    arrive in any order, so the order of appearance cannot say which is the baseline.
    ``incomplete``: why the run did not finish (interrupted, a worker crashed), if it
    did not: such a run is never PASS. ``red_first``: the outcomes are those of
    ``--eval-red-first`` (see :func:`variant_verdict`). ``factors``: what each variant
    is made of, by name, for the comparisons to say what they are about.
    ``perturbed_block``: perturbed runs (``--eval-perturb``) count as runs of their case;
    without it they count in nothing here, being advisory (docs/perturbation.md).
    """
    broken = [r for r in records if r.kind == "file"]
    runs = [r for r in records if r.kind != "file" and (perturbed_block or r.perturbation is None)]
    by_variant = case_verdicts(runs)
    rank = {name: i for i, name in enumerate(order)}
    names = sorted(by_variant, key=lambda name: rank.get(name, len(rank)))
    variants = [VariantSummary(name, by_variant[name]) for name in names]
    comparisons = [compare(variants[0], v, factors) for v in variants[1:]]
    verdicts = [
        (v.name, variant_verdict(v, min_pass_rate, len(broken), red_first=red_first))
        for v in variants
    ]
    if not verdicts:
        verdict = (
            Verdict("INCONCLUSIVE", f"{plural(len(broken), 'case file')} could not be loaded")
            if broken
            else Verdict("NONE", "nothing was graded")
        )
    else:
        graded = [(n, v) for n, v in verdicts if v.status != "NONE"]
        if not graded:
            verdict = Verdict("NONE", "nothing was graded")
        else:
            name, worst = max(graded, key=lambda nv: _RANK[nv[1].status])
            reason = worst.reason
            if len(variants) > 1 and reason:
                reason = f"{name}: {reason}"
            verdict = Verdict(worst.status, reason)
    verdict = unfinished(verdict, incomplete)
    repeated = any(c.runs > 1 for v in variants for c in v.cases)
    return GateReport(
        variants, comparisons, broken, verdict, repeated, records, factors=dict(factors or {})
    )


def severities_present(summary: VariantSummary) -> list[Severity]:
    present = {c.counted_severity for c in summary.cases}
    return [s for s in SEVERITIES if s in present]


def _ids(ids: list[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
