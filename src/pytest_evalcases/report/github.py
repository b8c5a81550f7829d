"""GitHub's views of a results file (docs/ci.md): the job summary, the workflow
commands that annotate each failed case at its line, and the pull-request comment.

All three are made from the results file (:mod:`~pytest_evalcases.report.findings`);
none decides anything: the verdict is the file's.
"""

from __future__ import annotations

from pytest_evalcases.report.findings import BaselineDelta, Finding, Regression, regressions
from pytest_evalcases.results.baseline import RATE
from pytest_evalcases.results.document import ResultsDocument, VariantEntry
from pytest_evalcases.results.stats import wilson
from pytest_evalcases.text import percent, plural, usd

#: The first line of the pull-request comment: an action finds its earlier comment by it
#: and updates that one instead of adding another.
MARKER = "<!-- pytest-evalcases -->"

#: How many failed cases a summary or comment lists; the rest are counted.
MAX_LISTED = 50

#: Characters that mean something in GitHub's markdown, escaped in free text.
_MARKDOWN = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|"})


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``), escaped."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_commands(found: list[Finding]) -> list[str]:
    """``::error file=…,line=…,title=…::MESSAGE``, one per failed or errored case;
    ``::warning`` for a failure of advisory severity, which never blocks."""
    out = []
    for f in found:
        level = "error" if f.blocks or f.outcome == "error" else "warning"
        props = f"file={escape_property(f.path)},line={f.line},title={escape_property(_title(f))}"
        out.append(f"::{level} {props}::{escape_data(_message(f))}")
    return out


def _title(f: Finding) -> str:
    if f.broken_file:
        return f"eval case file {f.path} does not load"
    if f.outcome == "error":
        return f"eval case {f.name} reached no verdict"
    return f"eval case {f.name} failed ({f.severity})"


def _message(f: Finding) -> str:
    lines = []
    if f.runs > 1 and f.graded_runs:
        lines.append(
            f"passed {f.passes} of {plural(f.graded_runs, 'graded run')} "
            f"(minimum pass rate {percent(f.min_pass_rate, 0)})"
        )
    lines += [f"{c.id}: {c.message}" if c.message else c.id for c in f.checks]
    if f.error:
        lines.append(f.error)
    return "\n".join(lines) or f.outcome


def job_summary(doc: ResultsDocument, found: list[Finding], delta: BaselineDelta | None) -> str:
    """The markdown of the job summary: the verdict, each variant's numbers, the failed
    and errored cases and, with a baseline, the regressions and the usage against it."""
    out = [f"## {_verdict(doc)}", "", *_state(doc), *_variant_table(doc)]
    if found:
        out += ["", "### Failed and errored cases", ""]
        out += _listed(found)
    if delta is not None:
        out += ["", f"### Against the baseline `{_code(delta.label)}`", ""]
        out += _delta_table(delta)
        out += _regression_lines(regressions(found, delta))
    return "\n".join(out) + "\n"


def comment(doc: ResultsDocument, found: list[Finding], delta: BaselineDelta | None) -> str:
    """The markdown of a pull-request comment: the marker, the verdict, the numbers,
    the delta against the baseline and the newly regressed cases; the verdict and one
    line of numbers when all is green."""
    out = [MARKER, f"### {_verdict(doc)}", ""]
    # A block lifted by an override is never "all green": the comment says what was lifted.
    lifted = doc.override is not None and doc.override.outcome == "applied"
    green = (
        doc.verdict == "PASS"
        and not lifted
        and not found
        and (delta is None or not delta.regressed)
    )
    if green:
        parts = [f"{_variant_name(v)}: {_passed(v)}" for v in doc.variants]
        if delta is not None:
            parts.append(f"{RATE} {_arrow(delta.pass_rate)} against `{_code(delta.label)}`")
        out.append("; ".join(parts) + ".")
        return "\n".join(out) + "\n"
    out += [*_state(doc), *_variant_table(doc)]
    if delta is not None:
        out += ["", f"Against the baseline `{_code(delta.label)}`:", ""]
        out += _delta_table(delta)
        out += _regression_lines(regressions(found, delta))
    named = {r.finding.name for r in regressions(found, delta)} if delta is not None else set()
    rest = [f for f in found if f.name not in named]
    if rest:
        heading = "Also failing" if named else "Failed and errored cases"
        out += ["", f"{heading}:", ""]
        out += _listed(rest)
    return "\n".join(out) + "\n"


def _verdict(doc: ResultsDocument) -> str:
    if doc.verdict == "NONE":
        return "eval gate: nothing was graded"
    return f"eval gate: {doc.verdict}"


def _state(doc: ResultsDocument) -> list[str]:
    """Why the verdict, and what the run was not (incomplete, part of the suite)."""
    out = []
    if doc.verdict_reason:
        out.append(_text(doc.verdict_reason))
    if not doc.complete:
        out.append("Incomplete: " + _text("; ".join(doc.incomplete_reasons)))
    elif doc.selection is not None and not doc.selection.whole:
        out.append("Part of the suite: " + _text(doc.selection.describe()))
    if doc.override is not None:
        by = doc.override.by
        who = f" (by {by.describe()})" if by is not None else ""
        out.append("Override: " + _text(doc.override.line() + who))
    return [part for line in out for part in (line, "")]


def _variant_table(doc: ResultsDocument) -> list[str]:
    rows = [
        "| variant | cases passed | checks passed | errors | pass rate | tokens | cost |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    for v in doc.variants:
        usage = v.usage
        tokens = f"{usage.tokens_total:,}" if usage and usage.runs_with_tokens else "n/a"
        cost = usd(usage.cost_total) if usage and usage.runs_with_cost else "n/a"
        rows.append(
            f"| {_text(_variant_name(v))} | {v.counts.passed}/{v.counts.total} "
            f"| {v.checks_passed}/{v.checks_total} | {v.counts.errors} "
            f"| {_pass_rate(v)} | {tokens} | {cost} |"
        )
    return rows


def _pass_rate(v: VariantEntry) -> str:
    """The case pass rate; with repeats, the runs' too with its 95 % Wilson interval."""
    rate = percent(v.counts.pass_rate)
    if not any(c.runs > 1 for c in v.cases):
        return rate
    passes = sum(c.passes for c in v.cases)
    graded = sum(c.graded_runs for c in v.cases)
    if not graded:
        return rate
    low, high = wilson(passes, graded)
    return f"{rate} (runs {passes}/{graded}, 95% CI {low:.0%}–{high:.0%})"


def _passed(v: VariantEntry) -> str:
    checks = f"{v.checks_passed}/{v.checks_total} checks"
    return f"{v.counts.passed}/{v.counts.total} cases passed, {checks}"


def _variant_name(v: VariantEntry) -> str:
    return v.name or "suite"


def _delta_table(delta: BaselineDelta) -> list[str]:
    return [
        "| | baseline | this run | change |",
        "|---|---:|---:|---:|",
        f"| {RATE} | {percent(delta.pass_rate[0])} | {percent(delta.pass_rate[1])} "
        f"| {_change(delta.pass_rate, 'points')} |",
        f"| tokens per run | {_tokens(delta.tokens_mean[0])} | {_tokens(delta.tokens_mean[1])} "
        f"| {_change(delta.tokens_mean, 'tokens')} |",
        f"| cost per run | {usd(delta.cost_mean[0])} | {usd(delta.cost_mean[1])} "
        f"| {_change(delta.cost_mean, 'usd')} |",
    ]


def _regression_lines(found: list[Regression]) -> list[str]:
    if not found:
        return []
    out = ["", "Regressed since the baseline (case / check):", ""]
    for r in found[:MAX_LISTED]:
        f = r.finding
        checks = [c.id for c in f.checks] or [f.outcome]
        pairs = ", ".join(f"`{_code(f.name)} / {_code(c)}`" for c in checks)
        advisory = " (advisory, does not block)" if r.advisory else ""
        out.append(f"- {pairs} at `{_code(f.place)}`{advisory}")
    if len(found) > MAX_LISTED:
        out.append(f"- and {len(found) - MAX_LISTED} more")
    return out


def _listed(found: list[Finding]) -> list[str]:
    """One item per finding, the first :data:`MAX_LISTED`: GitHub cuts a job summary
    above 1 MiB, and a comment above 65,536 characters."""
    out = [_finding_item(f) for f in found[:MAX_LISTED]]
    if len(found) > MAX_LISTED:
        out.append(f"- and {len(found) - MAX_LISTED} more")
    return out


def _finding_item(f: Finding) -> str:
    what = (
        "does not load"
        if f.broken_file
        else ("reached no verdict" if f.outcome == "error" else f"failed ({f.severity})")
    )
    detail = "; ".join(_text(line) for line in _message(f).splitlines())
    return f"- `{_code(f.name)}` {what} at `{_code(f.place)}`: {detail}"


def _change(pair: tuple[float | None, float | None], unit: str) -> str:
    before, after = pair
    if before is None or after is None:
        return "n/a"
    delta = after - before
    if unit == "points":
        return f"{delta * 100:+.1f} points"
    if unit == "usd":
        return f"{'+' if delta >= 0 else '-'}${abs(delta):.4f}"
    return f"{delta:+,.0f}"


def _arrow(pair: tuple[float | None, float | None]) -> str:
    return f"{percent(pair[0])} -> {percent(pair[1])}"


def _tokens(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def _text(text: str) -> str:
    """Free text (a check's message, a reason) as markdown that shows it as it is."""
    return text.translate(_MARKDOWN)


def _code(text: str) -> str:
    """Text for an inline code span: no backtick ends it early, no line breaks it."""
    return text.replace("`", "'").replace("\n", " ")
