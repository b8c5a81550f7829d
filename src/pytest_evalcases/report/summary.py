"""The ``eval gate`` terminal section as plain lines (docs/reference.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_evalcases.report import metrics
from pytest_evalcases.results import judging
from pytest_evalcases.results.document import usage
from pytest_evalcases.results.factors import FACTORS, WORKING_TREE, Factors, label
from pytest_evalcases.results.gate import Comparison, GateReport, VariantSummary, severities_present
from pytest_evalcases.results.outcomes import CaseVerdict
from pytest_evalcases.results.override import quarantine_lines
from pytest_evalcases.results.perturbation import ClassScore
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.results.skills import scores
from pytest_evalcases.results.stats import wilson
from pytest_evalcases.text import plural, ratio, usd

#: With repeats, the cases a variant lists at most (the worst); the rest are counted.
SHOWN_CASES = 10


def did_nothing(name: str) -> str:
    """The warning of a passing run in which the agent said nothing and changed no file
    (docs/results.md, "Runs that did nothing")."""
    return (
        f"warning: {name}: the agent said nothing and changed no file: "
        "its negative checks passed by default"
    )


def did_nothing_lines(records: Sequence[RunRecord]) -> list[str]:
    """One :func:`did_nothing` warning per passing run that did nothing."""
    return [
        did_nothing(f"{r.case_id}[{r.variant}]" if r.variant else r.case_id)
        for r in records
        if r.did_nothing and r.outcome == "passed"
    ]


def refused_lines(records: Sequence[RunRecord]) -> list[str]:
    """One line per passing run in which the agent CLI refused tool calls (its case
    grades them with ``tool_blocked`` / ``tool_not_blocked``), naming the calls: a
    refusal is never only in the results file (docs/agents.md, "Refused tool calls")."""
    return [
        f"refused: {_run_name(r)}: the agent CLI refused "
        f"{plural(len(r.permission_denials), 'tool call')}: "
        + "; ".join(r.permission_denials[:5])
        + (f"; and {len(r.permission_denials) - 5} more" if len(r.permission_denials) > 5 else "")
        for r in records
        if r.permission_denials and r.outcome == "passed"
    ]


def _run_name(record: RunRecord) -> str:
    return f"{record.case_id}[{record.variant}]" if record.variant else record.case_id


def score(passed: int, total: int) -> str:
    """``Score: 9/9 (100%)``, the task-directory format's score in checks."""
    return f"Score: {passed}/{total} ({ratio(passed, total)})"


def _variant_line(v: VariantSummary, factors: Factors | None = None) -> str:
    name = v.name or "suite"
    if factors is not None:
        name += f" ({factors.describe()})"
    # Cases that ran, errored ones included (as the results file's `total`); skipped
    # and quarantined cases are counted apart.
    ran = ("passed", "failed", "error")
    errors = v.count("error")
    parts = [
        f"{v.count('passed')}/{len(v.decided) + errors} cases passed",
        score(v.checks_passed, v.checks_total),
        plural(errors, "error"),
    ]
    skipped = v.count("skipped")
    if skipped:
        parts.append(f"{skipped} skipped")
    sev = [
        f"{s} {v.count('passed', s)}/{sum(v.count(o, s) for o in ran)}"
        for s in severities_present(v)
    ]
    if sev:
        parts.append(", ".join(sev))
    return f"{name}: " + " · ".join(parts)


def lines(
    report: GateReport, nothing_graded_hint: str = "", *, every_case: bool = False
) -> list[str]:
    """Every line of the section, verdict last. With repeats each variant lists its
    cases' pass rates: all of them with ``every_case`` (``pytest -v``) or up to
    :data:`SHOWN_CASES`, else the worst and a count of the others."""
    out: list[str] = []
    described = described_variants(report.factors)
    for v in report.variants:
        out.append(_variant_line(v, described.get(v.name)))
        spent = variant_usage_line(report, v.name)
        if spent:
            out.append(spent)
        measured = report.metrics.of(v.name)
        if measured is not None:
            out.extend(metrics.lines(measured, runs=report.repeated))
        if report.repeated:
            out.extend(_case_lines(v, every_case))
    for cmp in report.comparisons:
        out.append(
            f"{cmp.variant} vs {cmp.baseline}{label(cmp.differ)}: "
            f"{plural(len(cmp.regressed_checks), 'check')} regressed, "
            f"{len(cmp.improved_checks)} improved; "
            f"cases {len(cmp.regressed_cases)} regressed, {len(cmp.improved_cases)} improved "
            f"({mcnemar(cmp)})"
        )
        for case_id, check_id in cmp.regressed_checks:
            out.append(f"  regressed: {case_id} / {check_id}")
        for case_id, check_id in cmp.improved_checks:
            out.append(f"  improved: {case_id} / {check_id}")
    out.extend(perturbation_lines(report.perturbation))
    out.extend(skill_lines(report.records))
    out.extend(judging.summary_lines(report.records))
    if len(report.variants) > 1:
        # What the whole session spent, beside each variant's line (docs/variants.md).
        spent = usage_line(report.records)
        if spent:
            out.append("all variants:" + spent[1:])
    for broken in report.broken_files:
        out.append(f"case file error: {broken.file}")
    replayed = replay_line(report.records)
    if replayed:
        out.append(replayed)
    retried = [r for r in report.records if r.attempts > 1 and r.reached_verdict]
    if retried:
        # A verdict reached only after errored attempts (--eval-retry-errors): the agent
        # or its provider is unreliable, which a plain PASSED would hide.
        out.append(
            f"retried: {plural(len(retried), 'run')} reached a verdict only after errored "
            "attempts: " + ", ".join(f"{_run_label(r)} ({r.attempts} attempts)" for r in retried)
        )
    out.extend(report.notes)
    out.extend(quarantine_lines(report.records))
    if report.override is not None:
        out.append(report.override.line())
    verdict = report.verdict
    if verdict.status == "NONE":
        hint = f" ({nothing_graded_hint})" if nothing_graded_hint else ""
        out.append(f"eval gate: nothing was graded{hint}")
    else:
        out.append(
            f"eval gate: {verdict.status}" + (f" ({verdict.reason})" if verdict.reason else "")
        )
    return out


def perturbation_lines(found: Sequence[ClassScore]) -> list[str]:
    """The ``eval gate`` section's lines: one per class (and variant), brittle ones marked."""
    if not found:
        return []
    max_delta = found[0].max_delta
    named = len({score.variant for score in found}) > 1
    out = [f"perturbation (flagged above {max_delta:g} points):"]
    for score in found:
        name = f"{score.variant}: {score.cls}" if named and score.variant else score.cls
        line = (
            f"  {name}: originals {_rate_ci(score.original_passes, score.original_runs)}"
            f" · perturbed {_rate_ci(score.perturbed_passes, score.perturbed_runs)}"
        )
        if score.delta is not None:
            line += f" · {_points(score.delta)}"
        if score.flagged:
            line += " BRITTLE"
        out.append(line)
    return out


def unperturbed_lines(gaps: Sequence[tuple[str, str, str]]) -> list[str]:
    """Once per class and reason: the cases a perturbation class made no item of
    (``(case id, class, why)``; docs/perturbation.md)."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for case_id, cls, why in gaps:
        grouped.setdefault((cls, why), []).append(case_id)
    out = []
    for (cls, why), ids in grouped.items():
        shown = ", ".join(ids[:SHOWN_CASES]) + (
            f" and {len(ids) - SHOWN_CASES} more" if len(ids) > SHOWN_CASES else ""
        )
        out.append(f"perturbation: no {cls} runs of {plural(len(ids), 'case')} ({why}): {shown}")
    return out


def _rate_ci(passes: int, runs: int) -> str:
    if not runs:
        return "0/0"
    low, high = wilson(passes, runs)
    return f"{passes}/{runs} ({passes / runs:.0%}, 95% CI {low:.0%}–{high:.0%})"


def _points(delta: float) -> str:
    """``-16.0 points`` for a drop of 16 points, ``+4.0 points`` for a rise."""
    return f"{0.0 - delta:+.1f} points"


def described_variants(factors: Mapping[str, Factors]) -> Mapping[str, Factors]:
    """The variants whose lines say what they are made of: all of them when their
    agent, model or arguments differ (an agent or model matrix), or when none of them
    has a configuration of its own (``--eval-variant b=model:opus`` alone: its name says
    nothing of the model); none when only their configurations differ, which their
    names and the header already say."""
    named = {name: f for name, f in factors.items() if name}
    seen = {tuple(getattr(f, k) for k in FACTORS if k != "config") for f in named.values()}
    if len(seen) > 1 or (named and all(f.config == WORKING_TREE for f in named.values())):
        return named
    return {}


def replay_line(records: Sequence[RunRecord]) -> str:
    """``replay: 6 runs replayed in full, 1 in part, 1 live, 0 diverged · saved 24,690
    tokens, $0.1234``: how the runs of ``--eval-replay`` / ``--eval-reuse`` went and what
    replaying saved (docs/replay.md); empty when no run was replayed."""
    runs = [r for r in records if r.replay is not None]
    if not runs:
        return ""
    count = {how: sum(r.replay == how for r in runs) for how in ("full", "partial", "live")}
    parts = [
        f"{plural(count['full'], 'run')} replayed in full",
        f"{count['partial']} in part",
        f"{count['live']} live",
    ]
    diverged = sum(r.replay == "diverged" for r in runs)
    if diverged:
        parts.append(f"{diverged} diverged")
    tokens = sum(r.saved_tokens or 0 for r in runs)
    costs = [r.saved_usd for r in runs if r.saved_usd is not None]
    saved = f"saved {tokens:,} tokens"
    if costs:
        saved += f", {usd(sum(costs))}"
    return "replay: " + ", ".join(parts) + " · " + saved


def variant_usage_line(report: GateReport, variant: str) -> str:
    """:func:`usage_line` of one variant's runs, as its ``eval gate`` lines and the HTML
    report's money row say it."""
    return usage_line([r for r in report.records if r.variant == variant])


def usage_line(records: Sequence[RunRecord]) -> str:
    """``  tokens 24,690 (2,469 per run) · cost $0.1234 ($0.0123 per run)``: what one
    variant's runs spent, as their agent reported it; empty when no run reported tokens
    or cost (the command agent, graded directories). Runs that did not say are counted
    apart, so that a mean over some runs is not read as one over all; scripted runs are
    left out and named."""
    ran = [r for r in records if r.kind != "file" and r.outcome != "skipped"]
    # Scripted runs spent nothing: they are not "runs that did not say" (docs/results.md).
    scripted = sum(r.scripted for r in ran)
    ran = [r for r in ran if not r.scripted]
    spent = usage(ran)
    if not spent.runs_with_tokens and not spent.runs_with_cost:
        if scripted and not ran:
            return f"  nothing spent: {plural(scripted, 'scripted run')} (the plugin's own model)"
        return _regraded_line(ran)
    parts = []
    for what, reported, total, mean in (
        ("tokens", spent.runs_with_tokens, f"{spent.tokens_total:,}", spent.tokens_mean),
        ("cost", spent.runs_with_cost, usd(spent.cost_total), spent.cost_mean),
    ):
        if not reported:
            parts.append(f"{what} not reported")
            continue
        per_run = f"{mean:,.0f}" if what == "tokens" else usd(mean)
        some = f"; {reported} of {len(ran)} runs reported it" if reported < len(ran) else ""
        parts.append(f"{what} {total} ({per_run} per run{some})")
    if scripted:
        parts.append(f"{plural(scripted, 'scripted run')} apart, which spent nothing")
    return "  " + " · ".join(parts)


def _regraded_line(records: Sequence[RunRecord]) -> str:
    """``  nothing spent: no agent ran (the stored runs had reported 24,690 tokens,
    $0.1234)``: a regrade's runs, which spent nothing (docs/replay.md, "Regrade");
    empty when no run was regraded."""
    tokens = [
        (r.recorded_tokens_in or 0) + (r.recorded_tokens_out or 0)
        for r in records
        if r.recorded_tokens_in is not None or r.recorded_tokens_out is not None
    ]
    costs = [r.recorded_cost_usd for r in records if r.recorded_cost_usd is not None]
    if not tokens and not costs:
        return ""
    said = []
    if tokens:
        said.append(f"{sum(tokens):,} tokens")
    if costs:
        said.append(usd(sum(costs)))
    return f"  nothing spent: no agent ran (the stored runs had reported {', '.join(said)})"


def mcnemar(cmp: Comparison) -> str:
    """The paired test in words: the discordant cases named by what happened to them,
    never as ``b=1``, which reads like a variant named ``b``."""
    return (
        f"McNemar exact p={cmp.p_value:.3g}: {plural(cmp.b, 'case')} passed only in "
        f"{cmp.baseline or 'the baseline'}, {cmp.c} only in {cmp.variant}"
    )


def _case_lines(v: VariantSummary, every_case: bool) -> list[str]:
    """A line per graded case, or the :data:`SHOWN_CASES` worst (failed first, then by
    pass rate) and one line counting the rest, which a suite of hundreds needs."""
    graded = [c for c in v.cases if c.graded_runs]
    rest: list[CaseVerdict] = []
    if not every_case and len(graded) > SHOWN_CASES:
        graded = sorted(graded, key=_worst_first)
        graded, rest = graded[:SHOWN_CASES], graded[SHOWN_CASES:]
    out = [_case_line(c) for c in graded]
    if rest:
        failed = sum(1 for c in rest if c.outcome == "failed")
        every_run = sum(1 for c in rest if c.outcome == "passed" and c.passes == c.graded_runs)
        counts = [
            (failed, "failed"),
            (len(rest) - failed - every_run, "passed but not every run"),
            (every_run, "passed every run"),
        ]
        out.append(
            f"  … {plural(len(rest), 'more case')}: "
            + ", ".join(f"{n} {what}" for n, what in counts if n)
            + " (pytest -v lists every case)"
        )
    return out


def _case_line(c: CaseVerdict) -> str:
    lo, hi = c.interval
    return (
        f"  {c.case_id}: {c.passes}/{c.graded_runs} runs passed "
        f"({ratio(c.passes, c.graded_runs)}, 95% CI {lo:.0%}–{hi:.0%}; "
        f"needs {c.min_pass_rate:.0%})"
        + (f", {plural(c.errors, 'errored run')}" if c.errors else "")
    )


def skill_lines(records: Sequence[RunRecord]) -> list[str]:
    """Per skill and variant, its recall and false-trigger rate with their 95 % Wilson
    intervals (docs/skills.md, "Trigger scores"); none without skill checks."""
    out = []
    for score in scores(records):
        parts = []
        for what, hits, n in (
            ("recall", score.fired, score.positives),
            ("false triggers", score.false_triggers, score.negatives),
        ):
            if n:
                lo, hi = wilson(hits, n)
                parts.append(f"{what} {hits}/{n} ({ratio(hits, n)}, 95% CI {lo:.0%}–{hi:.0%})")
            else:
                parts.append(
                    f"{what} n/a (no {'positive' if what == 'recall' else 'negative'} case)"
                )
        variant = f" [{score.variant}]" if score.variant else ""
        out.append(f"skill {score.skill}{variant}: " + " · ".join(parts))
    return out


def _worst_first(c: CaseVerdict) -> tuple[bool, float, int, str]:
    return (c.outcome != "failed", c.pass_rate or 0.0, -c.errors, c.case_id)


def _run_label(record: RunRecord) -> str:
    """The run as pytest names its item (``case[variant-r2]``)."""
    return record.nodeid.rsplit("::", 1)[-1] if record.nodeid else record.case_id
