"""The trend page's text (docs/results.md, "The trend page"): a line per series with a
legend, every string from the files escaped, a window without a whole-suite run."""

from __future__ import annotations

from datetime import timedelta

from pytest_evalcases.report import trendpage
from pytest_evalcases.results import drift, trend
from pytest_evalcases.results.document import ResultsDocument, SuiteSelection

from ..results.records import STARTED, doc, run


def runs_of(agent: str, day: int, passed: bool, **kw: object) -> ResultsDocument:
    records = [run("alpha", "passed" if passed else "failed", model="<b>m</b>")]
    pins = {"agent": agent, "config": {"": {"<AGENTS>.md": f"sha-{day}"}}}
    return doc(records, started=STARTED + timedelta(days=day), pins=pins, **kw)


def test_each_series_is_a_line_of_its_own_with_a_legend_and_everything_is_escaped() -> None:
    docs = [
        runs_of("claude", 0, True),
        runs_of("<i>codex</i>", 1, False),
        runs_of("claude", 2, True),
    ]
    computed = trend.compute(docs)

    page = trendpage.render(computed, drift.check(docs), directory="<dir>")

    assert page.count('<polyline class="series"') == 2
    assert page.count('class="legend"') == 2
    assert "agent &lt;i&gt;codex&lt;/i&gt; · model &lt;b&gt;m&lt;/b&gt;" in page
    assert "<i>" not in page
    assert "<b>m" not in page
    assert "Trend of &lt;dir&gt;" in page
    # The claude series' configuration changed on its second run: marked, escaped.
    assert "config: &lt;AGENTS&gt;.md (agent claude" in page
    assert '<p class="drift quiet">No drift</p>' in page


def test_a_window_without_a_whole_suite_run_has_no_chart_but_its_table() -> None:
    part = SuiteSelection(("-k", "alpha"), 2, 1, 2, 1)
    docs = [runs_of("claude", 0, True, selection=part)]

    page = trendpage.render(trend.compute(docs), None)

    assert "<svg" not in page
    assert "No run of the whole suite in this window." in page
    assert "part: 1 of 2 cases selected (-k alpha)" in page
    assert 'id="drift"' not in page
