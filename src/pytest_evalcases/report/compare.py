"""``evalcases compare``'s output: two results files side by side, as lines."""

from __future__ import annotations

from pathlib import Path

from pytest_evalcases.report import metrics
from pytest_evalcases.report.summary import described_variants
from pytest_evalcases.report.table import table
from pytest_evalcases.report.trend import suite
from pytest_evalcases.results import baseline, skills
from pytest_evalcases.results.baseline import BaselineResult, CaseRow
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.gate import counted_runs
from pytest_evalcases.results.metrics import Metrics, compute_metrics
from pytest_evalcases.results.policy import GatePolicy
from pytest_evalcases.text import percent, plural, usd


def lines(
    result: BaselineResult,
    before: ResultsDocument,
    after: ResultsDocument,
    a_path: Path,
    b_path: Path,
    *,
    every: bool = False,
) -> list[str]:
    """The comparison: runs, case table (every case, or those that differ), numbers,
    pins, verdict. When either file is part of the suite, the cases only one of them
    ran are counted, not listed (unless ``every``): they were not compared."""
    out = [f"A: {a_path} ({before.date or '?'}, verdict {before.verdict}{_part(before)})"]
    out += _variants(before)
    out.append(f"B: {b_path} ({after.date or '?'}, verdict {after.verdict}{_part(after)})")
    out += _variants(after)
    out.append("")
    rows = [r for r in result.rows if every or r.change or r.before != r.after]
    one_side = [r for r in result.rows if r.before is None or r.after is None]
    if result.common is not None and not every:
        rows = [r for r in rows if r not in one_side]
    if rows:
        out += table(
            ["case", "variant", "A", "B", "change"],
            [[r.case_id, r.variant, r.before or "-", r.after or "-", _change(r)] for r in rows],
        )
    elif result.common is None:
        out.append(f"every one of {len(result.rows)} cases has the same outcome in A and B")
    else:
        out.append(f"every one of {result.common} cases both ran has the same outcome")
    if result.common is not None:
        out.append(result.scope(("A", "B")))
        if one_side and not every:
            out.append(f"not compared: {plural(len(one_side), 'case')} only one of them ran")
    out.append("")
    out += table(
        ["", "A", "B"],
        [
            [baseline.RATE, percent(result.pass_rate[0]), percent(result.pass_rate[1])],
            ["tokens per run", _tokens(result.tokens_mean[0]), _tokens(result.tokens_mean[1])],
            ["cost per run", usd(result.cost_mean[0]), usd(result.cost_mean[1])],
            ["regressed", "", str(len(result.regressed))],
            ["improved", "", str(len(result.improved))],
            *(
                [["advisory regressed", "", str(len(result.advisory_regressed))]]
                if result.advisory_regressed
                else []
            ),
        ],
    )
    out.append("")
    out += _metrics(before, after)
    out += _skills(before, after)
    if result.pin_expected:
        out.append("pins changed as expected with the configuration:")
        out += [f"  {d}" for d in result.pin_expected]
    if result.pin_differences:
        out.append("pins differ (results may not be comparable):")
        out += [f"  {d}" for d in result.pin_differences]
    elif not result.pin_expected:
        out.append("pins: the same")
    if result.blocked:
        out.append("B would be BLOCKED against A: " + "; ".join(result.reasons))
    else:
        out.append("B passes the baseline gate against A")
    return out


def _metrics(before: ResultsDocument, after: ResultsDocument) -> list[str]:
    """Each variant's metrics in A and B side by side (docs/results.md, "Metrics"),
    the variant named on each row when the files have several; nothing when neither
    file has a run."""
    a, b = _measured(before), _measured(after)
    names = list(dict.fromkeys(v.variant for v in (*a.variants, *b.variants)))
    if not names:
        return []
    found = []
    for name in names:
        for label, *cells in metrics.rows([a.of(name), b.of(name)]):
            found.append([f"{name or 'suite'}: {label}" if len(names) > 1 else label, *cells])
    return [*table(["metrics", "A", "B"], found), ""]


def _measured(doc: ResultsDocument) -> Metrics:
    """The file's metrics; for a file written before they were stored, computed from
    its runs as the gate would have (perturbed runs only when they blocked)."""
    if doc.metrics is not None:
        return doc.metrics
    runs = counted_runs(doc.cases, doc.policy or GatePolicy())
    return compute_metrics(runs, [v.name for v in doc.variants])


def _change(row: CaseRow) -> str:
    """``regressed``, or ``regressed (advisory)`` for a case that never blocks."""
    if row.change == "regressed" and not row.blocks:
        return "regressed (advisory)"
    return row.change


def _skills(before: ResultsDocument, after: ResultsDocument) -> list[str]:
    """Each skill's trigger scores in A and B, by variant (docs/skills.md); nothing when
    neither file checked a skill."""
    a = {(s.skill, s.variant): s for s in skills.scores(before.cases)}
    b = {(s.skill, s.variant): s for s in skills.scores(after.cases)}
    if not a and not b:
        return []

    def rate(score: skills.TriggerScore | None, hits: str, total: str) -> str:
        if score is None or not getattr(score, total):
            return "-"
        n, k = getattr(score, total), getattr(score, hits)
        return f"{k}/{n} ({percent(k / n)})"

    rows = [
        [
            skill,
            variant,
            rate(a.get((skill, variant)), "fired", "positives"),
            rate(b.get((skill, variant)), "fired", "positives"),
            rate(a.get((skill, variant)), "false_triggers", "negatives"),
            rate(b.get((skill, variant)), "false_triggers", "negatives"),
        ]
        for skill, variant in sorted(a.keys() | b.keys())
    ]
    head = ["skill", "variant", "recall A", "recall B", "false triggers A", "false triggers B"]
    return [*table(head, rows), ""]


def _variants(doc: ResultsDocument) -> list[str]:
    """``   variants: cc (claude), cx (codex, model gpt-5)`` for a file whose variants
    differ in more than their configuration (docs/variants.md); nothing otherwise."""
    factors = {v.name: v.factors for v in doc.variants if v.factors is not None}
    described = described_variants(factors)
    if not described:
        return []
    shown = ", ".join(f"{name} ({f.describe()})" for name, f in described.items())
    return [f"   variants: {shown}"]


def _part(doc: ResultsDocument) -> str:
    """``, part: 3 of 10 cases selected (-m critical)`` for a file that is not the
    whole suite run to its end; ``""`` for one that is."""
    return "" if doc.complete_suite else f", {suite(doc)}"


def _tokens(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"
