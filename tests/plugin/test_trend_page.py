"""``evalcases trend --alert --html`` over real runs (docs/results.md, "Drift alerts",
"The trend page"): the drift job's exit status and message, and the page as headless
Chromium lays it out — the line of whole-suite runs, the configuration change marked,
the runs the alert fired on ringed, nothing fetched."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_evalcases import cli
from tests.helpers.results import results_files, steer
from tests.helpers.suite import SuiteBuilder
from tests.plugin.test_html_report import CHROMIUM, dump_dom

CASES = [f"c-{i:02d}" for i in range(10)]


def drifted_history(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> Path:
    """Six runs: two whole ones under the first AGENTS.md; a change of it after which
    9 of 10 pass (the new baseline); a ``-k`` run of one case; two whole runs at 7 of 10.
    Returns the results directory."""
    root = make_suite.steered(CASES)

    def run(*args: str) -> None:
        pytester.runpytest("-p", "no:cacheprovider", *args)

    run()
    run()
    (root / "AGENTS.md").write_text("Answer tersely.\n", "utf-8")
    steer(root, "fail", "c-09")
    run()
    run("-k", "c-00")
    steer(root, "fail", "c-08")
    steer(root, "fail", "c-07")
    run()
    run()
    files = results_files(root)
    assert [json.loads(p.read_text("utf-8"))["total"] for p in files] == [
        10,
        10,
        10,
        None,
        10,
        10,
    ]
    return root / "evals" / "results"


def test_the_drift_job_fires_and_writes_a_page_that_renders_in_chromium(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    results = drifted_history(make_suite, pytester)
    dates = [json.loads(p.read_text("utf-8"))["date"] for p in sorted(results.glob("*.json"))]
    page = tmp_path / "trend.html"
    capsys.readouterr()

    status = cli.main(["trend", str(results), "--alert", "--html", str(page)])
    out = capsys.readouterr().out

    assert status == 1
    assert out.splitlines() == [
        f"trend page: {page}",
        "drift (pass rate): agent command · model not reported: 70.0%, 70.0% on the last 2 "
        f"whole-suite runs ({dates[4]}, {dates[5]}), each more than 10 points below the "
        f"baseline's 90.0% ({dates[2]}, first whole-suite run under this configuration)",
    ]
    text = page.read_text("utf-8")
    # Self-contained: nothing to fetch, no script.
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    assert "<script" not in text
    if not CHROMIUM.exists():
        pytest.skip("needs /usr/bin/chromium (headless) for the rest")
    probed = tmp_path / "probed.html"
    probed.write_text(text.replace("</body>", PROBE + "</body>"), "utf-8")

    dom = dump_dom(probed.as_uri(), tmp_path)

    probe = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.DOTALL)
    assert probe is not None, dom[-2000:]
    seen = json.loads(probe.group(1))
    # The chart is laid out at its size; five whole-suite runs are dots on one line,
    # left to right; the -k run is not among them.
    assert seen["svg"] == [720, 220]
    assert seen["lines"] == 1
    xs = [x for x, _ in seen["dots"]]
    assert len(xs) == 5
    assert xs == sorted(xs)
    ys = [y for _, y in seen["dots"]]
    # 100 %, 100 %, 90 %, 70 %, 70 %: lower on the page as the rate falls.
    assert ys[0] == ys[1] < ys[2] < ys[3] == ys[4]
    # The change of AGENTS.md is a marker between the second and the third run ...
    assert len(seen["changes"]) == 1
    assert xs[1] < seen["changes"][0] < xs[2]
    assert "config: AGENTS.md" in seen["labels"]
    # ... and the alert rings the last two.
    assert seen["alerts"] == seen["dots"][3:]
    assert seen["verdict"].startswith("Drift alert")
    # The table lists all six runs, the -k run without a pass rate.
    assert seen["rows"] == [
        [dates[0], "10/10", "100.0%"],
        [dates[1], "10/10", "100.0%"],
        [dates[2], "9/10", "90.0%"],
        [dates[3], "1/1", "-"],
        [dates[4], "7/10", "70.0%"],
        [dates[5], "7/10", "70.0%"],
    ]


#: Put before ``</body>`` of a copy of the page: writes into <pre id="probe"> what the
#: browser laid out — sizes and centres in pixels, as numbers rounded to whole ones.
PROBE = """
<script>
(function () {
  function centre(el) {
    var r = el.getBoundingClientRect();
    return [Math.round(r.left + r.width / 2), Math.round(r.top + r.height / 2)];
  }
  function all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
  var svg = document.querySelector('svg#trend').getBoundingClientRect();
  var seen = {
    svg: [Math.round(svg.width), Math.round(svg.height)],
    lines: all('svg#trend polyline.series').filter(function (l) {
      return l.getBBox().width > 0; }).length,
    dots: all('svg#trend circle.point').map(centre),
    alerts: all('svg#trend circle.alert').map(centre),
    changes: all('svg#trend line.change').map(function (l) { return centre(l)[0]; }),
    labels: all('svg#trend text.change').map(function (t) { return t.textContent; }),
    verdict: document.querySelector('#drift p').textContent,
    rows: all('table.runs tbody tr:not(.change)').map(function (tr) {
      return Array.prototype.slice.call(tr.cells, 0, 3).map(function (td) {
        return td.textContent; });
    })
  };
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(seen);
  document.body.appendChild(pre);
})();
</script>
"""
