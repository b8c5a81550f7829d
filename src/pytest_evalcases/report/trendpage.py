"""``evalcases trend --html PATH``: the trend as one self-contained page (inline CSS and
SVG, no script, nothing fetched) — docs/results.md, "The trend page".

At the top the drift check's verdict; under it a chart of the pass rate of each series
over its whole-suite runs, a configuration change marked as a dashed line where it
happened and each run a drift alert fired on ringed in red; then a table of every run
of each series, runs of part of the suite included (without a pass rate), and the
flaky and calibration lists of ``evalcases trend``.
"""

from __future__ import annotations

import html
from datetime import datetime, timezone
from pathlib import Path

from pytest_evalcases.atomic import write_atomic
from pytest_evalcases.report import chart
from pytest_evalcases.report.trend import suite
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.drift import Drift
from pytest_evalcases.results.trend import CaseHistory, Series, Trend
from pytest_evalcases.text import percent, plural

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px;margin:0 0 8px;overflow-wrap:anywhere}h2{font-size:16px;margin:20px 0 8px}
.meta{color:#666;font-size:12px}
.drift{font-weight:600;padding:6px 10px;border-radius:4px;display:inline-block}
.fired{background:#fbd5d5}.quiet{background:#d8f3dc}
table{border-collapse:collapse;margin-bottom:12px}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left}
tr.change td{background:#fff4e0;color:#8a5a00;font-size:12px}
tr.alert td{background:#fbd5d5}tr.part td{color:#888}
"""


def write(path: Path, trend: Trend, drift: Drift | None, *, directory: str = "") -> Path:
    """Render and write the page atomically."""
    write_atomic(path, render(trend, drift, directory=directory))
    return path


def render(trend: Trend, drift: Drift | None, *, directory: str = "") -> str:
    """The page of ``trend``, with the verdict of ``drift`` when it was checked."""
    heading = f"Trend of {directory}" if directory else "Trend"
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    alerts = _alerted(drift)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(heading)}</title>",
        f"<style>{_CSS}{chart.css('trend')}</style></head>",
        "<body>",
        f"<h1>{_e(heading)}</h1>",
        f'<p class="meta">{plural(len(trend.runs), "run")}, {len(trend.series)} series '
        f"· written {_e(stamp)}</p>",
        _verdict(drift),
        "<h2>Pass rate over time</h2>",
        _chart(trend, alerts),
        "<h2>Runs</h2>",
        *(_table(line, alerts, len(trend.series) > 1) for line in trend.series),
        "<h2>Cases</h2>",
        _cases("Flaky (outcome changed under the same configuration)", trend, flaky=True),
        _cases("Always passed (saturated)", trend, which="passed"),
        _cases("Always failed", trend, which="failed"),
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _alerted(drift: Drift | None) -> set[tuple[str, str]]:
    """``(series, date)`` of the runs an alert fired on."""
    if drift is None:
        return set()
    return {(a.series.describe(), date) for a in drift.alerts for date in a.dates}


def _verdict(drift: Drift | None) -> str:
    if drift is None:
        return ""
    lines = drift.lines()
    kind = "fired" if drift.fired else "quiet"
    items = "".join(f"<li>{_e(line)}</li>" for line in lines)
    title = "Drift alert" if drift.fired else "No drift"
    return (
        f'<div id="drift" class="{kind}"><p class="drift {kind}">{title}</p><ul>{items}</ul></div>'
    )


def _axis(trend: Trend) -> list[ResultsDocument]:
    """The runs on the chart's time axis: those with a whole-suite point, oldest first."""
    whole = {id(p.document) for line in trend.series for p in line.points if p.whole}
    return [d for d in trend.runs if id(d) in whole]


def _chart(trend: Trend, alerts: set[tuple[str, str]]) -> str:
    axis = _axis(trend)
    if not axis:
        return '<p class="meta" id="trend">No run of the whole suite in this window.</p>'
    place = {id(d): i for i, d in enumerate(axis)}
    lines: list[chart.Line] = []
    markers: list[chart.Marker] = []
    several = len(trend.series) > 1
    for k, line in enumerate(trend.series):
        name = line.key.describe()
        dots = tuple(
            chart.Dot(
                place[id(p.document)],
                p.pass_rate,
                f"{p.document.date}: {percent(p.pass_rate)} ({p.passed}/{p.graded}) "
                f"{p.verdict}" + (f" · {name}" if several else ""),
                alert=(name, p.document.date) in alerts,
            )
            for p in line.points
            if p.whole and p.pass_rate is not None
        )
        colour = chart.COLOURS[k % len(chart.COLOURS)] if several else "#222"
        lines.append(chart.Line(name, colour, dots))
        for p in line.points:
            if p.config_change:
                at = next((i for i, d in enumerate(axis) if d.date >= p.document.date), None)
                if at is not None:
                    label = "config: " + ", ".join(p.config_change[:3])
                    markers.append(chart.Marker(at, label + (f" ({name})" if several else "")))
    left_out = len(trend.runs) - len(axis)
    note = (
        f'<p class="meta">{plural(left_out, "run")} of part of the suite or cut short: '
        "in the table, not on the chart.</p>"
        if left_out
        else ""
    )
    key = (
        '<p class="meta key">Each dot a whole-suite run (its pass rate and counts on '
        "hover); a dashed line: the configuration changed; a red ring: a drift alert "
        "fired on that run.</p>"
    )
    return (
        chart.line_chart(lines, len(axis), first=axis[0].date, last=axis[-1].date, markers=markers)
        + key
        + note
    )


def _table(line: Series, alerts: set[tuple[str, str]], several: bool) -> str:
    name = line.key.describe()
    rows = []
    for p in line.points:
        if p.config_change:
            rows.append(
                f'<tr class="change"><td colspan="6">configuration changed: '
                f"{_e(', '.join(p.config_change))}</td></tr>"
            )
        alerted = (name, p.document.date) in alerts
        css = "alert" if alerted else ("" if p.whole else "part")
        rows.append(
            f'<tr class="{css}"><td>{_e(p.document.date)}</td><td>{p.passed}/{p.graded}</td>'
            f"<td>{_e(percent(p.pass_rate) if p.whole else '-')}</td><td>{p.errors}</td>"
            f"<td>{_e(p.verdict)}{' · drift alert' if alerted else ''}</td>"
            f"<td>{_e(suite(p.document))}</td></tr>"
        )
    return (
        f'<h3>{_e(name)}</h3><table class="runs" data-series="{_e(name)}"><thead><tr>'
        "<th>date</th><th>passed</th><th>pass rate</th><th>errors</th><th>verdict</th>"
        f"<th>suite</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _cases(title: str, trend: Trend, *, flaky: bool = False, which: str = "") -> str:
    chosen: list[CaseHistory]
    if flaky:
        chosen = [c for c in trend.cases if c.flips]
    else:
        chosen = trend.saturated if which == "passed" else trend.always_failing
    if not chosen:
        return f"<p>{_e(title)}: none</p>"
    items = "".join(f"<li>{_e(c.name)}</li>" for c in chosen)
    return f"<p>{_e(title)}: {len(chosen)}</p><ul>{items}</ul>"
