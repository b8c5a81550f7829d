"""``--eval-html PATH``: one self-contained HTML file (inline CSS, JS and SVG, nothing
fetched from the network) with the case x variant matrix of this run (each column says
what its variant is made of and what it spent), the failed checks of each run behind a
click, the comparisons with the baseline, and the pass-rate trend over the stored results
files.

Plain Python: :func:`render` turns a :class:`~pytest_evalcases.results.gate.GateReport` and
trend points into text; every string that comes from a case file or an agent is
HTML-escaped on the way in, and the script reads nothing but the page's own DOM.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from pytest_evalcases.atomic import write_atomic
from pytest_evalcases.recording import format as recording
from pytest_evalcases.recording.format import RecordingError
from pytest_evalcases.report import chart, conversation, metrics, transcript
from pytest_evalcases.report.show import run_name
from pytest_evalcases.report.summary import (
    described_variants,
    mcnemar,
    perturbation_lines,
    skill_lines,
    variant_usage_line,
)
from pytest_evalcases.results import judging
from pytest_evalcases.results.document import SuiteSelection
from pytest_evalcases.results.factors import label
from pytest_evalcases.results.gate import GateReport
from pytest_evalcases.results.headlines import Headline, read_headlines
from pytest_evalcases.results.outcomes import CaseVerdict
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.text import plural, ratio

#: Results files read for the trend, newest last; older ones are left out.
TREND_LIMIT = 200
_CELL_CLASS = {"passed": "pass", "failed": "fail", "error": "error", "skipped": "skip"}


#: One point of the trend chart: a stored results file's headline.
TrendPoint = Headline


def read_trend(results_dir: Path, limit: int = TREND_LIMIT) -> list[TrendPoint]:
    """The results files in ``results_dir`` as trend points, oldest first, the last
    ``limit``; files that do not read are left out, never an error."""
    return read_headlines(results_dir)[-limit:]


def write(
    path: Path,
    report: GateReport,
    trend: Sequence[TrendPoint],
    *,
    title: str = "",
    selection: SuiteSelection | None = None,
    results_file: Path | None = None,
) -> Path:
    """Render and write the report atomically (a reader never sees half a file)."""
    text = render(report, trend, title=title, selection=selection, results_file=results_file)
    write_atomic(path, text)
    return path


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def render(
    report: GateReport,
    trend: Sequence[TrendPoint],
    *,
    title: str = "",
    generated: datetime | None = None,
    selection: SuiteSelection | None = None,
    results_file: Path | None = None,
) -> str:
    """The whole page. ``selection``: the part of the suite this run selected, said
    when it is not the whole; the trend draws whole-suite runs only. ``results_file``:
    where the run's results are saved; each run recorded beside it gets its transcript
    embedded (docs/replay.md, "Reading a run")."""
    when = (generated or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    verdict = report.verdict
    verdict_text: str = verdict.status if verdict.status != "NONE" else "nothing was graded"
    if verdict.reason:
        verdict_text += f" ({verdict.reason})"
    heading = title or "eval gate"
    transcripts = _transcripts(report.records, results_file)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(heading)}: {_e(verdict.status)}</title>",
        f"<style>{_CSS}{chart.css('trend')}</style></head>",
        "<body>",
        f"<h1>{_e(heading)}</h1>",
        f'<p class="verdict v-{_e(verdict.status.lower())}">eval gate: {_e(verdict_text)}</p>',
        f'<p class="meta">Generated {_e(when)}. Click a cell for the runs behind it.</p>',
        _scope(selection),
        _notes(report.notes),
        _matrix(report, transcripts),
        '<section id="details" aria-live="polite"><p class="hint">'
        "Select a cell to see its failed checks.</p></section>",
        _comparisons(report),
        _metrics(report),
        _lines_section("Skills", skill_lines(report.records)),
        _lines_section("Judge checks", judging.summary_lines(report.records)),
        _lines_section("Perturbation", perturbation_lines(report.perturbation)),
        "<h2>Pass rate over time</h2>",
        _trend_svg(trend),
        _transcripts_section(transcripts),
        f"<script>{_JS}</script>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _lines_section(title: str, lines: Sequence[str]) -> str:
    """A section of the ``eval gate`` lines on skills' trigger scores (docs/skills.md)
    or on perturbation (docs/perturbation.md), as the terminal prints them; nothing
    when the run has none."""
    if not lines:
        return ""
    items = "".join(f"<li>{_e(line.strip())}</li>" for line in lines)
    return f'<h2>{_e(title)}</h2><ul class="notes" id="{_e(title.lower())}">{items}</ul>'


def _metrics(report: GateReport) -> str:
    """Each variant's metrics (docs/results.md, "Metrics"), a column per variant; the
    rows with nothing to say are left out."""
    rows = metrics.rows([report.metrics.of(v.name) for v in report.variants])
    if not rows:
        return ""
    head = "".join(f'<th scope="col">{_e(v.name or "suite")}</th>' for v in report.variants)
    body = "".join(
        f'<tr><th scope="row">{_e(label)}</th>'
        + "".join(f"<td>{_e(c)}</td>" for c in cells)
        + "</tr>"
        for label, *cells in rows
    )
    return (
        f'<h2>Metrics</h2><table id="metrics"><thead><tr><th scope="col">metric</th>{head}'
        f"</tr></thead><tbody>{body}</tbody></table>"
    )


def _matrix(report: GateReport, transcripts: dict[str, tuple[str, str]]) -> str:
    variants = report.variants
    if not variants:
        return '<p class="empty">No eval case was run.</p>'
    case_ids: list[str] = []
    for v in variants:
        for c in v.cases:
            if c.case_id not in case_ids:
                case_ids.append(c.case_id)
    runs: dict[tuple[str, str], list[RunRecord]] = {}
    for r in report.records:
        if r.kind != "file":
            runs.setdefault((r.case_id, r.variant), []).append(r)
    # What each variant is made of, where their agents, models or arguments differ
    # (the terminal's variant lines say the same; docs/variants.md).
    described = described_variants(report.factors)
    head = "".join(
        f'<th scope="col">{_e(v.name or "suite")}<br>'
        + (
            f'<span class="factors">{_e(described[v.name].describe())}</span><br>'
            if v.name in described
            else ""
        )
        + f'<span class="score">{v.count("passed")}/{len(v.ran)} cases · '
        f"{v.checks_passed}/{v.checks_total} checks</span></th>"
        for v in variants
    )
    rows = []
    templates = []
    for i, case_id in enumerate(case_ids):
        cells = []
        for j, v in enumerate(variants):
            verdict = next((c for c in v.cases if c.case_id == case_id), None)
            if verdict is None:
                cells.append('<td class="cell none">–</td>')
                continue
            key = f"{i}-{j}"
            case_runs = sorted(runs.get((case_id, v.name), []), key=lambda r: r.repetition)
            cls = _CELL_CLASS.get(verdict.outcome, "skip")
            cells.append(
                f'<td class="cell {cls}" data-cell="{key}" tabindex="0" '
                f'title="{_e(case_id)} [{_e(v.name or "suite")}]: {_e(verdict.outcome)}">'
                f"{_e(_cell_text(verdict))}</td>"
            )
            templates.append(
                f'<template id="d-{key}">'
                f"{_details(case_id, v.name, verdict, case_runs, transcripts)}</template>"
            )
        severity = next((c.severity for v in variants for c in v.cases if c.case_id == case_id), "")
        rows.append(
            f'<tr><th scope="row">{_e(case_id)} <span class="sev">{_e(severity)}</span></th>'
            + "".join(cells)
            + "</tr>"
        )
    broken = "".join(
        f'<tr><th scope="row">{_e(b.file)}</th><td class="cell error" '
        f'colspan="{len(variants)}">{_e(b.error or "case file error")}</td></tr>'
        for b in report.broken_files
    )
    return (
        '<table id="matrix"><thead><tr><th scope="col">case</th>'
        + head
        + "</tr></thead><tbody>"
        + "".join(rows)
        + broken
        + "</tbody>"
        + _usage_row(report)
        + "</table>\n"
        + "\n".join(templates)
    )


def _usage_row(report: GateReport) -> str:
    """The matrix's last row: what each variant's runs spent, the terminal's usage
    line split at its dots; none when no variant's agent reported tokens or cost."""
    spent = [variant_usage_line(report, v.name).strip() for v in report.variants]
    if not any(spent):
        return ""
    cells = "".join(
        f'<td class="usage">{"<br>".join(_e(part) for part in line.split(" · "))}</td>'
        if line
        else '<td class="usage none">not reported</td>'
        for line in spent
    )
    return f'<tfoot><tr><th scope="row">tokens and cost</th>{cells}</tr></tfoot>'


def _cell_text(c: CaseVerdict) -> str:
    if c.runs > 1 and c.graded_runs:
        return f"{c.passes}/{c.graded_runs}"
    return {"passed": "pass", "failed": "fail", "error": "error"}.get(c.outcome, c.outcome)


def _details(
    case_id: str,
    variant: str,
    verdict: CaseVerdict,
    runs: list[RunRecord],
    transcripts: dict[str, tuple[str, str]],
) -> str:
    label = f"{case_id} [{variant}]" if variant else case_id
    out = [f"<h2>{_e(label)}: {_e(verdict.outcome)}</h2>"]
    if verdict.graded_runs and verdict.runs > 1:
        lo, hi = verdict.interval
        out.append(
            f"<p>{verdict.passes}/{verdict.graded_runs} runs passed "
            f"({ratio(verdict.passes, verdict.graded_runs)}, 95% CI {lo:.0%}–{hi:.0%}; "
            f"needs {verdict.min_pass_rate:.0%}); {verdict.errors} errored</p>"
        )
    if runs and runs[0].description:
        out.append(f'<p class="desc">{_e(runs[0].description)}</p>')
    for r in runs:
        rep = f"run r{r.repetition}" if len(runs) > 1 else "run"
        out.append(f'<div class="run o-{_e(r.outcome)}"><h3>{_e(rep)}: {_e(r.outcome)}</h3>')
        failed = [c for c in r.checks if not c.passed]
        if failed:
            out.append('<ul class="failed">')
            for c in failed:
                kind = "" if c.id == c.type else f" [{_e(c.type)}]"
                out.append(
                    f'<li><b class="check">{_e(c.id)}</b>{kind}: '
                    f'<span class="msg">{_e(c.message)}</span></li>'
                )
            out.append("</ul>")
        elif r.checks:
            out.append(f"<p>All {len(r.checks)} checks passed.</p>")
        if r.error:
            kind = f" ({r.error_kind})" if r.error_kind else ""
            out.append(f'<pre class="err">no verdict{_e(kind)}: {_e(r.error)}</pre>')
        if r.workspace and r.outcome != "passed":
            out.append(f'<p class="ws">workspace: <code>{_e(r.workspace)}</code></p>')
        if r.recording and r.recording in transcripts:
            out.append(f'<p class="tr"><a href="#{_e(_anchor(r.recording))}">transcript</a></p>')
        out.append("</div>")
    return "".join(out)


def _anchor(relative: str) -> str:
    """The id of a run's transcript: ``transcript-`` and its recording directory's name
    (``case-id.variant.r0``), the same for every report of the run."""
    return "transcript-" + relative.rstrip("/").rpartition("/")[2]


def _transcripts(
    records: Sequence[RunRecord], results_file: Path | None
) -> dict[str, tuple[str, str]]:
    """Each recorded run's summary line and transcript (as ``evalcases show`` prints
    it), by its ``recording``; a recording that does not read says why instead."""
    if results_file is None:
        return {}
    repeated = {(r.case_id, r.variant) for r in records if r.repetition}
    out: dict[str, tuple[str, str]] = {}
    for r in records:
        if not r.recording or r.kind == "file":
            continue
        found = recording.exchange_file(results_file.parent / r.recording)
        if found is None:
            continue
        name = run_name(r, (r.case_id, r.variant) in repeated)
        try:
            text = transcript.text(conversation.read(found), r, name=name)
        except RecordingError as exc:
            text = f"{exc}\n"
        out[r.recording] = (
            f"{name}: {r.outcome}",
            f"$ evalcases show {results_file} '{name}'\n\n{text}",
        )
    return out


def _transcripts_section(transcripts: dict[str, tuple[str, str]]) -> str:
    if not transcripts:
        return ""
    out = ['<h2 id="transcripts">Transcripts</h2>']
    for relative, (summary, text) in transcripts.items():
        out.append(
            f'<details class="transcript" id="{_e(_anchor(relative))}">'
            f"<summary>{_e(summary)}</summary><pre>{_e(text)}</pre></details>"
        )
    return "\n".join(out)


def _comparisons(report: GateReport) -> str:
    out = []
    for cmp in report.comparisons:
        # Named as the terminal names it: the factors that differ (docs/variants.md).
        out.append(f"<h2>{_e(cmp.variant)} vs {_e(cmp.baseline)}{_e(label(cmp.differ))}</h2>")
        if cmp.differ is not None and len(cmp.differ) > 1:
            out.append(
                '<p class="confounded">Confounded: more than one factor differs, so a '
                "difference here cannot be put down to any one of them.</p>"
            )
        out.append(
            f"<p>{plural(len(cmp.regressed_checks), 'check')} regressed, "
            f"{len(cmp.improved_checks)} improved; cases {cmp.b} regressed, "
            f"{cmp.c} improved ({_e(mcnemar(cmp))})</p><ul>"
        )
        for word, pairs in (("regressed", cmp.regressed_checks), ("improved", cmp.improved_checks)):
            out.extend(
                f'<li class="{word}">{word}: {_e(case_id)} / {_e(check_id)}</li>'
                for case_id, check_id in pairs
            )
        out.append("</ul>")
    return "".join(out)


def _scope(selection: SuiteSelection | None) -> str:
    if selection is None or selection.whole:
        return ""
    return f'<p class="scope">Part of the suite: {_e(selection.describe())}.</p>'


def _notes(notes: Sequence[str]) -> str:
    """The lines the summary prints before the verdict: the baseline comparison."""
    if not notes:
        return ""
    return '<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>"


def _trend_svg(all_points: Sequence[TrendPoint]) -> str:
    # A run of part of the suite has a pass rate over other cases: on the same line as
    # the whole suite's it would zigzag (docs/results.md, "evalcases trend").
    points = [p for p in all_points if p.complete_suite]
    left_out = len(all_points) - len(points)
    note = (
        f'<p class="meta" id="trend-left-out">{plural(left_out, "run")} of part of the '
        "suite (-k, -m, paths, --eval-changed, a shard) or cut short: not on the line.</p>"
        if left_out
        else ""
    )
    if not points and left_out:
        return '<p class="empty" id="trend">No run of the whole suite yet.</p>' + note
    return _trend_line(points) + note


def _trend_line(points: Sequence[TrendPoint]) -> str:
    if not points:
        return '<p class="empty" id="trend">No results files yet.</p>'
    lines = [
        chart.Line(
            "all",
            "#222",
            tuple(
                chart.Dot(i, p.pass_rate, f"{p.date}: {p.pass_rate:.0%}{_counts(p)} {p.verdict}")
                for i, p in enumerate(points)
            ),
        )
    ]
    names = sorted({name for p in points for name in p.variants})
    if len(names) > 1:
        for k, name in enumerate(names):
            dots = tuple(
                chart.Dot(i, p.variants[name], name)
                for i, p in enumerate(points)
                if name in p.variants
            )
            colour = chart.COLOURS[k % len(chart.COLOURS)]
            lines.append(chart.Line(name, colour, dots, dashed=True, marked=False))
    return chart.line_chart(lines, len(points), first=points[0].date, last=points[-1].date)


def _counts(point: TrendPoint) -> str:
    return f" ({point.passed} of {point.total} cases passed)" if point.passed is not None else ""


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:20px 0 8px}
h3{font-size:14px;margin:8px 0 4px}
.verdict{font-weight:600;padding:6px 10px;border-radius:4px;display:inline-block}
.v-pass{background:#d8f3dc}.v-blocked{background:#fbd5d5}.v-inconclusive,.v-none{background:#e5e5e5}
.meta,.hint,.score,.sev,.factors{color:#666;font-size:12px}.factors{font-style:italic;font-weight:normal}
tfoot td.usage{font-size:12px;color:#444;white-space:nowrap}tfoot td.none{color:#888}
.confounded{color:#8a5a00}
.scope{font-weight:600;color:#8a5a00}ul.notes{font-family:ui-monospace,monospace;font-size:12px}
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:4px 8px;text-align:left}
td.cell{text-align:center;min-width:64px;cursor:pointer}
td.pass{background:#2e9e4f;color:#fff}td.fail{background:#d93a3a;color:#fff}
td.error{background:#8a8a8a;color:#fff}td.skip{background:#f1f1f1;color:#777}td.none{background:#fff}
td.selected{outline:3px solid #1b6ac9;outline-offset:-3px}
#details{margin-top:16px;padding:8px 12px;border:1px solid #ddd;border-radius:4px;max-width:1000px}
.run{border-top:1px solid #eee;padding:4px 0}.o-passed h3{color:#2e9e4f}
.o-failed h3,.o-xfailed h3{color:#d93a3a}.o-error h3{color:#666}
details.transcript{margin:4px 0}details.transcript pre{background:#f7f7f7;padding:8px;
white-space:pre-wrap;word-break:break-word;font-family:ui-monospace,monospace;font-size:12px}
.msg,pre.err{white-space:pre-wrap;word-break:break-word;font-family:ui-monospace,monospace}
#metrics td{font-size:12px;white-space:nowrap}
li.regressed{color:#a61b1b}li.improved{color:#1b7a3a}
"""

_JS = """
(function () {
  var root = document.documentElement, errors = [];
  window.addEventListener('error', function (e) {
    errors.push(String(e.message));
    root.setAttribute('data-js-errors', errors.join(' | '));
  });
  var panel = document.getElementById('details');
  function show(cell) {
    var tpl = document.getElementById('d-' + cell.getAttribute('data-cell'));
    if (!tpl || !panel) { return; }
    var old = document.querySelectorAll('td.selected');
    for (var i = 0; i < old.length; i++) { old[i].classList.remove('selected'); }
    cell.classList.add('selected');
    panel.innerHTML = '';
    panel.appendChild(tpl.content.cloneNode(true));
    panel.setAttribute('data-shown', cell.getAttribute('data-cell'));
  }
  var cells = document.querySelectorAll('td.cell[data-cell]');
  for (var i = 0; i < cells.length; i++) {
    cells[i].addEventListener('click', function (e) { show(e.currentTarget); });
    cells[i].addEventListener('keydown', function (e) {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); show(e.currentTarget); }
    });
  }
  var wanted = /^#cell-(\\d+-\\d+)$/.exec(window.location.hash);
  var first = wanted ? document.querySelector('td.cell[data-cell="' + wanted[1] + '"]')
    : document.querySelector('td.cell.fail[data-cell], td.cell.error[data-cell]');
  if (first) { show(first); }
  function openTranscript() {
    var id = window.location.hash.slice(1);
    var target = id.indexOf('transcript-') === 0 ? document.getElementById(id) : null;
    if (target) { target.open = true; target.scrollIntoView(); }
  }
  window.addEventListener('hashchange', openTranscript);
  openTranscript();
  document.body.classList.add('js-ready');
  document.body.setAttribute('data-cells', String(cells.length));
})();
"""
