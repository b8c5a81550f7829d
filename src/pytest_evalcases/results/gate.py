"""The verdict: per-variant summaries of the case outcomes, the gate (:func:`decide`)
and the exit status (docs/reference.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING

from pytest_evalcases.kinds import SEVERITIES, Severity, Status
from pytest_evalcases.results import override, perturbation, skills
from pytest_evalcases.results.factors import Factors, differing
from pytest_evalcases.results.metrics import Metrics, compute_metrics
from pytest_evalcases.results.outcomes import BLOCKING, CaseVerdict, case_verdicts
from pytest_evalcases.results.override import Override
from pytest_evalcases.results.perturbation import ClassScore
from pytest_evalcases.results.policy import GatePolicy
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.results.stats import mcnemar_exact
from pytest_evalcases.text import plural

if TYPE_CHECKING:
    # A session without --eval-baseline never reads one (docs/results.md, "The
    # baseline gate"): the comparison comes in made, by whoever compared.
    from pytest_evalcases.results.baseline import BaselineResult

EXIT_PASS = 0
EXIT_BLOCKED = 1
EXIT_INCONCLUSIVE = 2
_RANK = {"PASS": 0, "INCONCLUSIVE": 1, "BLOCKED": 2}


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
        """Passed of the cases that passed or failed, advisory ones included (the
        results file's ``pass_rate``)."""
        decided = self.decided
        return self.count("passed") / len(decided) if decided else None

    @property
    def gated(self) -> list[CaseVerdict]:
        """The critical and normal cases that passed or failed: those the gate counts."""
        return [c for c in self.decided if c.counted_severity in BLOCKING]

    @property
    def gated_pass_rate(self) -> float | None:
        """The gate's pass rate: of the critical and normal cases that passed or failed
        (errored, skipped and quarantined cases, and advisory ones, excluded)."""
        gated = self.gated
        return sum(c.outcome == "passed" for c in gated) / len(gated) if gated else None


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
    #: What the verdict was decided by, besides the records.
    policy: GatePolicy = field(default_factory=GatePolicy)
    #: Each variant's own verdict by name, as the results file's ``variants`` say it.
    variant_verdicts: Mapping[str, Verdict] = field(default_factory=dict)
    #: ``--eval-baseline``: the run compared with the baseline; ``None`` without one.
    baseline: BaselineResult | None = None
    #: ``--eval-override``: what came of it; ``None`` without one.
    override: Override | None = None
    #: Each variant's metrics, over the runs the verdict counts (docs/results.md, "Metrics").
    metrics: Metrics = field(default_factory=Metrics)


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


def unsaved(verdict: Verdict, why: str) -> Verdict:
    """``verdict`` of a run whose results file could not be written (``why``, naming
    the file): never PASS, as the record the run was to leave is missing; INCONCLUSIVE
    with the reason instead (docs/results.md, "The results file"). BLOCKED stays."""
    if not why or verdict.status not in ("PASS", "INCONCLUSIVE"):
        return verdict
    return Verdict("INCONCLUSIVE", "; ".join(r for r in (verdict.reason, why) if r))


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
    blocking = []
    for severity in BLOCKING:
        # Sorted: records arrive in any order under xdist and from shards, and the
        # reason must be the same as one serial run's.
        failed = sorted(
            c.case_id
            for c in summary.cases
            if c.outcome == "failed" and c.counted_severity == severity
        )
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
            # Every blocking case is named: the reason is what a reviewer acts on.
            blocking.append(f"{cases} {what}: {', '.join(failed)}")
    if blocking:
        return Verdict("BLOCKED", "; ".join(blocking))
    # Advisory cases are reported and never block: the pass rate is that of the
    # critical and normal cases (docs/reference.md, "Exit statuses of `pytest`").
    rate = summary.gated_pass_rate
    if rate is not None and rate < min_pass_rate - 1e-9:
        if red_first:
            reason = (
                f"only {rate:.0%} of the critical and normal cases fail first, as they "
                f"should (eval_min_pass_rate {min_pass_rate:.0%})"
            )
        else:
            reason = (
                f"pass rate of the critical and normal cases {rate:.0%} is below "
                f"eval_min_pass_rate {min_pass_rate:.0%}"
            )
        return Verdict("BLOCKED", reason)
    return _settled(summary, broken)


def _settled(summary: VariantSummary, broken: int) -> Verdict:
    """The verdict of a variant that nothing blocks: INCONCLUSIVE with errors."""
    errored = sorted(c.case_id for c in summary.cases if c.outcome == "error")
    if errored or broken:
        parts = []
        if errored:
            parts.append(f"{plural(len(errored), 'case')} errored: {_ids(errored)}")
        if broken:
            parts.append(f"{plural(broken, 'case file')} could not be loaded")
        return Verdict("INCONCLUSIVE", "; ".join(parts))
    if summary.pass_rate is None:
        return Verdict("NONE", "nothing was graded")
    return Verdict("PASS")


def counted_runs(records: Sequence[RunRecord], policy: GatePolicy) -> list[RunRecord]:
    """The runs the gate counts: every run but broken files; perturbed runs
    (``--eval-perturb``) only when the policy lets them block (docs/perturbation.md)."""
    return [
        r
        for r in records
        if r.kind != "file" and (policy.perturbed_block or r.perturbation is None)
    ]


def decide(
    records: Sequence[RunRecord],
    policy: GatePolicy | None = None,
    *,
    order: Sequence[str] = (),
    factors: Mapping[str, Factors] | None = None,
    incomplete: Sequence[str] = (),
    started: bool = True,
    baseline: BaselineResult | None = None,
) -> GateReport:
    """The gate: every record of a run, decided under ``policy`` (the defaults without
    one) into the report whose ``verdict`` the exit status follows. The one place a
    verdict is made, for a session and for ``evalcases merge`` alike.

    ``order``: the variant names as configured, the baseline first; under xdist records
    arrive in any order, so the order of appearance cannot say which is the baseline.
    ``factors``: what each variant is made of, by name, for the comparisons to say what
    they are about. ``incomplete``: why the run did not finish (interrupted, a worker
    crashed), if it did not: such a run is never PASS, nor, when ``started`` (a case
    began) without a record, "nothing was graded". ``baseline``: the run compared with
    the baseline file that ``policy.baseline`` names (:func:`baseline.check_run
    <pytest_evalcases.results.baseline.check_run>`); with the policy's perturbation
    blocking, perturbed runs (``--eval-perturb``) count as runs of their case, and
    otherwise in nothing here, being advisory (docs/perturbation.md).
    """
    policy = policy or GatePolicy()
    red_first = policy.red_first
    broken = [r for r in records if r.kind == "file"]
    runs = counted_runs(records, policy)
    by_variant = case_verdicts(runs)
    rank = {name: i for i, name in enumerate(order)}
    names = sorted(by_variant, key=lambda name: rank.get(name, len(rank)))
    variants = [VariantSummary(name, by_variant[name]) for name in names]
    comparisons = [compare(variants[0], v, factors) for v in variants[1:]]
    verdicts = [
        (v.name, variant_verdict(v, policy.min_pass_rate, len(broken), red_first=red_first))
        for v in variants
    ]
    verdict = unfinished(_worst(verdicts, len(broken)), incomplete)
    if not records and started and incomplete:
        # Cut short in its first case: nothing was graded, and the run did not finish
        # either; never "nothing was graded", which exits as pytest does.
        verdict = Verdict("INCONCLUSIVE", "run incomplete: " + "; ".join(incomplete))
    shortfalls = skills.shortfalls(skills.scores(records), policy.skill_limits)
    if shortfalls:
        # A skill's trigger scores falling short block (docs/skills.md, "Trigger scores").
        verdict = _blocked(verdict, "; ".join(shortfalls))
    notes: list[str] = []
    if baseline is not None:
        if baseline.blocked:
            verdict = _blocked(verdict, "baseline: " + "; ".join(baseline.reasons))
        notes += baseline.lines()
    elif red_first and policy.baseline is not None:
        # An authoring run's outcomes are inverted: compared with a baseline, every
        # case would count the wrong way round (docs/results.md, "The baseline gate").
        name = PurePath(policy.baseline.file).name
        notes.append(f"baseline {name}: not compared with a red-first run")
    judged = None
    if policy.override is not None:
        blocks = _blocks(verdict, verdicts, variants, shortfalls, baseline, records, policy)
        judged = override.judge(policy.override, verdict.status, blocks)
        if judged.outcome == "applied":
            verdict = _lifted(variants, len(broken), incomplete, policy.override)
    max_delta = policy.perturb_max_delta
    return GateReport(
        variants,
        comparisons,
        broken,
        verdict,
        repeated=any(c.runs > 1 for v in variants for c in v.cases),
        records=list(records),
        notes=notes,
        factors=dict(factors or {}),
        perturbation=tuple(perturbation.scores(records, max_delta))
        if max_delta is not None
        else (),
        policy=policy,
        variant_verdicts={name: unfinished(v, incomplete) for name, v in verdicts},
        baseline=baseline,
        override=judged,
        metrics=compute_metrics(runs, names),
    )


def _blocks(
    verdict: Verdict,
    verdicts: Sequence[tuple[str, Verdict]],
    variants: Sequence[VariantSummary],
    shortfalls: Sequence[str],
    baseline: BaselineResult | None,
    records: Sequence[RunRecord],
    policy: GatePolicy,
) -> override.Blocks | None:
    """What made ``verdict`` BLOCKED, for an override to be judged against; ``None``
    when it is not."""
    if verdict.status != "BLOCKED":
        return None
    named = len(verdicts) > 1
    reasons = [
        f"{name}: {v.reason}" if named and name else v.reason
        for name, v in verdicts
        if v.status == "BLOCKED"
    ]
    failed = {
        severity: sorted(
            {
                c.case_id
                for v in variants
                for c in v.cases
                if c.outcome == "failed" and c.counted_severity == severity
            }
        )
        for severity in BLOCKING
    }
    liftable = ["normal cases"] if any(v.status == "BLOCKED" for _, v in verdicts) else []
    if shortfalls:
        reasons += shortfalls
        liftable.append("skills' trigger scores")
    regressed: list[str] = []
    if baseline is not None and baseline.blocked:
        reasons.append("baseline: " + "; ".join(baseline.reasons))
        liftable.append("the baseline gate")
        regressed = [row.case_id for row in baseline.regressed]
    return override.Blocks(
        reasons=tuple(reasons),
        critical=tuple(failed["critical"]),
        trigger_critical=tuple(override.trigger_critical(records, policy.skill_limits)),
        cases=tuple(sorted({*failed["normal"], *regressed})),
        liftable=tuple(liftable),
    )


def _lifted(
    variants: Sequence[VariantSummary], broken: int, incomplete: Sequence[str], rationale: str
) -> Verdict:
    """The verdict of a run whose block an override lifted: what nothing blocked
    would be, PASS (overridden) when that is PASS; errors and a run that did not
    finish stay INCONCLUSIVE."""
    settled = [(v.name, _settled(v, broken)) for v in variants]
    verdict = unfinished(_worst(settled, broken), incomplete)
    if verdict.status == "PASS":
        return Verdict("PASS", f"overridden: {rationale}")
    if verdict.status == "INCONCLUSIVE":
        return Verdict("INCONCLUSIVE", f"{verdict.reason}; block overridden: {rationale}")
    return verdict


def _worst(verdicts: Sequence[tuple[str, Verdict]], broken: int) -> Verdict:
    """The run's verdict: its worst variant's, named when there are several."""
    if not verdicts:
        if broken:
            return Verdict("INCONCLUSIVE", f"{plural(broken, 'case file')} could not be loaded")
        return Verdict("NONE", "nothing was graded")
    graded = [(n, v) for n, v in verdicts if v.status != "NONE"]
    if not graded:
        return Verdict("NONE", "nothing was graded")
    name, worst = max(graded, key=lambda nv: _RANK[nv[1].status])
    reason = worst.reason
    if len(verdicts) > 1 and reason:
        reason = f"{name}: {reason}"
    return Verdict(worst.status, reason)


def _blocked(verdict: Verdict, reason: str) -> Verdict:
    """``verdict`` BLOCKED for ``reason`` too; nothing graded stays so."""
    if verdict.status == "NONE":
        return verdict
    if verdict.status == "BLOCKED" and verdict.reason:
        reason = f"{verdict.reason}; {reason}"
    return Verdict("BLOCKED", reason)


def severities_present(summary: VariantSummary) -> list[Severity]:
    present = {c.counted_severity for c in summary.cases}
    return [s for s in SEVERITIES if s in present]


def _ids(ids: list[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
