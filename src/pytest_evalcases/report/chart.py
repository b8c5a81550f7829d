"""A pass-rate chart as inline SVG, drawn for the HTML report's trend and the trend page
(docs/results.md, "The trend page"): runs left to right, 0-100 % bottom to top, one
polyline per series, a dot per run with its tooltip, dashed vertical markers (a
configuration change) and ringed dots (a drift alert). Plain text out; every string in
it is escaped here."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

WIDTH, HEIGHT, PAD = 720, 220, 40
COLOURS = ("#1b6ac9", "#b35c00", "#6a3d9a", "#2a8a4a", "#a61b4d")
_LEGEND_ROW = 22
_LEGEND_STEP = 140

#: The chart's own styles, scoped by its ``id``; ``ID`` stands for it.
CSS = (
    "#ID .grid{stroke:#ddd}#ID text{font-size:11px;fill:#666}#ID .point{fill:#222}"
    "#ID line.change{stroke:#8a5a00;stroke-dasharray:3 3}#ID text.change{fill:#8a5a00}"
    "#ID .alert{fill:none;stroke:#d93a3a;stroke-width:2}"
)


@dataclass(frozen=True)
class Dot:
    """One run on a line: its place on the x axis (0 .. runs - 1), its pass rate
    (0..1) and its tooltip."""

    x: int
    rate: float
    title: str
    #: Ringed in red: a drift alert fired on this run.
    alert: bool = False


@dataclass(frozen=True)
class Line:
    name: str
    colour: str
    dots: tuple[Dot, ...]
    dashed: bool = False
    #: Whether each run gets a dot with its tooltip (else the line alone).
    marked: bool = True


@dataclass(frozen=True)
class Marker:
    """A dashed vertical line before run ``x``: an event on the time axis."""

    x: int
    label: str


def css(element_id: str) -> str:
    return CSS.replace("ID", element_id)


def line_chart(
    lines: Sequence[Line],
    runs: int,
    *,
    first: str,
    last: str,
    element_id: str = "trend",
    markers: Sequence[Marker] = (),
) -> str:
    """An SVG of ``lines`` over ``runs`` places, ``first`` and ``last`` written under
    the ends of the axis; a legend row when there is more than one line."""
    e = _escape

    def x(i: float) -> float:
        return PAD + (i * (WIDTH - 2 * PAD) / (runs - 1) if runs > 1 else (WIDTH - 2 * PAD) / 2)

    def y(rate: float) -> float:
        return HEIGHT - PAD - rate * (HEIGHT - 2 * PAD)

    height = HEIGHT + (_LEGEND_ROW if len(lines) > 1 else 0)
    # Dots shrink as runs crowd the axis, so that two hundred still read as a line.
    spacing = (WIDTH - 2 * PAD) / max(runs - 1, 1)
    radius = min(4.0, max(1.5, spacing / 3))
    out = [
        f'<svg id="{e(element_id)}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
        'aria-label="pass rate per run">'
    ]
    for rate in (0.0, 0.5, 1.0):
        out.append(
            f'<line class="grid" x1="{PAD}" x2="{WIDTH - PAD}" y1="{y(rate):.1f}" '
            f'y2="{y(rate):.1f}"/><text x="4" y="{y(rate) + 4:.1f}">{rate:.0%}</text>'
        )
    for marker in markers:
        # Halfway between the run before and the first run of the change.
        at = x(marker.x - 0.5) if marker.x > 0 else x(0) - 6
        out.append(
            f'<line class="change" x1="{at:.1f}" x2="{at:.1f}" y1="{PAD - 14}" '
            f'y2="{HEIGHT - PAD}"><title>{e(marker.label)}</title></line>'
            f'<text class="change" x="{at + 3:.1f}" y="{PAD - 16}">{e(marker.label)}</text>'
        )
    for line in lines:
        coords = " ".join(f"{x(d.x):.1f},{y(d.rate):.1f}" for d in line.dots)
        dash = ' stroke-dasharray="4 3"' if line.dashed else ""
        out.append(
            f'<polyline class="series" data-series="{e(line.name)}" fill="none" '
            f'stroke="{line.colour}" stroke-width="2"{dash} points="{coords}"/>'
        )
    for line in lines:
        if not line.marked:
            continue
        for d in line.dots:
            out.append(
                f'<circle class="point" cx="{x(d.x):.1f}" cy="{y(d.rate):.1f}" r="{radius:g}">'
                f"<title>{e(d.title)}</title></circle>"
            )
            if d.alert:
                out.append(
                    f'<circle class="alert" cx="{x(d.x):.1f}" cy="{y(d.rate):.1f}" '
                    f'r="{2 * radius:g}">'
                    f"<title>drift alert: {e(d.title)}</title></circle>"
                )
    out.append(
        f'<text x="{PAD}" y="{HEIGHT - 8}">{e(first)}</text>'
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - 8}" text-anchor="end">{e(last)}</text>'
    )
    if len(lines) > 1:
        # The legend gets a row of its own below the dates, clear of the lines.
        for k, line in enumerate(lines):
            out.append(
                f'<text class="legend" x="{PAD + _LEGEND_STEP * k}" y="{height - 6}" '
                f'style="fill:{line.colour}">{e(line.name)}</text>'
            )
    out.append("</svg>")
    return "".join(out)


def _escape(value: object) -> str:
    return html.escape(str(value), quote=True)
