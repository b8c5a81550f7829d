"""``--eval-html PATH``: one self-contained file with the case x variant matrix, each
run's failed checks behind a click, and the pass-rate trend of the results directory.
Structure is checked on the written text; rendering and the script in headless
Chromium when it is installed."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from pytest_evalcases.report import html as html_report
from tests.helpers.agents import FAKES, SAMPLES, fake_credentials
from tests.helpers.model_server import ModelServer
from tests.helpers.results import results_files
from tests.helpers.suite import SuiteBuilder
from tests.plugin.test_recording import api  # noqa: F401  (a fixture)

CHROMIUM = Path("/usr/bin/chromium")

AGENT = textwrap.dedent(
    """
    import sys
    prompt = sys.argv[1]
    if "crash" in prompt:
        sys.exit("agent crashed: no credit left")
    print('<script>alert("pwned")</script>' if "inject" in prompt else "ok")
    """
)


def case(case_id: str, prompt: str, extra: str = "") -> str:
    return (
        f"id: {case_id}\ndefends: AGENTS.md\nprompt: {prompt}\n{extra}"
        "checks:\n  - id: says-ok\n    type: output_matches\n    pattern: '^ok$'\n"
    )


#: A passing, a failing (its answer is a script tag), an erroring and a quarantined case,
#: for two configuration variants.
CASES = {
    "good": case("good", "say ok"),
    "inject": case("inject", "inject please", "description: 'Escapes <b>markup</b> & more'\n"),
    "crash": case("crash", "crash now"),
    "parked": case("parked", "say ok", "quarantine: flaky model\n"),
}
VARIANTS = {"main": "main", "pr": "pr"}


def write_results(directory: Path) -> None:
    directory.mkdir(parents=True)
    docs = {
        "2026-11-01T09-00-00.000Z.json": {
            "date": "2026-11-01T09:00:00Z",
            "pass_rate": 0.5,
            "passed": 2,
            "total": 4,
            "verdict": "BLOCKED",
            "variants": [{"name": "main", "pass_rate": 1.0}, {"name": "pr", "pass_rate": 0.0}],
            "cases": [],
        },
        "2026-11-02T09-00-00.000Z.json": {
            "date": "2026-11-02T09:00:00Z",
            "pass_rate": 0.75,
            "passed": 3,
            "total": 4,
            "verdict": "BLOCKED",
        },
    }
    for name, doc in docs.items():
        (directory / name).write_text(json.dumps(doc))
    (directory / "2026-11-03-broken.json").write_text("{not json")
    (directory / "2026-11-04-list.json").write_text("[1, 2]")


def run(make_suite: SuiteBuilder, *args: str) -> tuple[pytest.RunResult, str]:
    pytester = make_suite.pytester
    make_suite(AGENT, CASES, variants=VARIANTS)
    write_results(pytester.path / "evals" / "results")
    result = pytester.runpytest(
        "--eval-config",
        "main=main",
        "--eval-config",
        "pr=pr",
        "--eval-no-save",
        "--eval-html",
        "out/report.html",
        *args,
    )
    return result, (pytester.path / "out" / "report.html").read_text("utf-8")


def test_matrix_cells_and_trend(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> None:
    result, page = run(make_suite)

    result.assert_outcomes(passed=2, failed=2, errors=2, skipped=2)
    assert f"html report: {pytester.path / 'out' / 'report.html'}" in result.stdout.str()
    cells = re.findall(r'<td class="cell (\w+)" data-cell="(\d+-\d+)"', page)
    assert (
        sorted(cls for cls, _ in cells)
        == ["error"] * 2 + ["fail"] * 2 + ["pass"] * 2 + ["skip"] * 2
    )
    assert len({key for _, key in cells}) == 8
    # Every cell has its details, which name the failed check and quote the message.
    for _, key in cells:
        assert f'<template id="d-{key}">' in page
    assert '<b class="check">says-ok</b> [output_matches]' in page
    assert "agent crashed: no credit left" in page
    # Counted as the eval gate section counts them: the errored case ran too.
    assert re.search(r"<th scope=\"col\">main<br>.*1/3 cases", page)
    assert "main: 1/3 cases passed" in result.stdout.str()
    # Trend: the two readable results files, the broken ones skipped.
    assert page.count('<circle class="point"') == 2
    assert 'data-series="main"' in page
    assert 'data-series="pr"' in page
    assert "2026-11-02T09:00:00Z: 75% (3 of 4 cases passed) BLOCKED" in page
    # Only the configurations differ: the names say what the variants are, and the
    # command agent reports no tokens or cost, so no variant has a money cell.
    assert 'class="factors"' not in page
    assert "<tfoot>" not in page
    assert "<h2>pr vs main (config)</h2>" in page
    assert "pr vs main (config): " in result.stdout.str()


def test_the_metrics_table_has_a_row_per_metric_and_a_column_per_variant(
    make_suite: SuiteBuilder,
) -> None:
    result, page = run(make_suite)

    table = re.search(r'<h2>Metrics</h2><table id="metrics">(.*?)</table>', page)
    assert table is not None
    head = re.findall(r'<th scope="col">([^<]*)</th>', table.group(1))
    assert head == ["metric", "main", "pr"]
    rows = {
        label: re.findall(r"<td>([^<]*)</td>", cells)
        for label, cells in re.findall(
            r'<tr><th scope="row">([^<]*)</th>(.*?)</tr>', table.group(1)
        )
    }
    # The command agent reports no tokens or cost, and no run is a runaway: no such rows.
    assert list(rows) == [
        "runs",
        "wall time, passed",
        "wall time, failed",
        "failures by mode",
        "errors by kind",
    ]
    assert rows["runs"] == ["1/2 passed (50%, 95% CI 9%–91%)"] * 2
    assert rows["failures by mode"] == ["unclassified 1"] * 2
    assert rows["errors by kind"] == ["crash 1"] * 2
    # The same figures as the terminal's wall line of each variant.
    walls = [line for line in result.stdout.lines if line.startswith("  wall ")]
    assert len(walls) == 2
    for i, wall in enumerate(walls):
        passed, failed = wall.removeprefix("  wall ").split(" · ")
        assert rows["wall time, passed"][i] == passed.replace("(1 passed)", "(1 run)")
        assert rows["wall time, failed"][i] == failed.replace("(1 failed)", "(1 run)")


def test_trend_includes_this_run_when_it_is_saved(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite(AGENT, CASES, variants=VARIANTS)
    write_results(pytester.path / "evals" / "results")

    pytester.runpytest("--eval-config", "main=main", "--eval-html", "report.html")

    page = (pytester.path / "report.html").read_text()
    assert page.count('<circle class="point"') == 3
    assert (
        ": 50% (1 of 3 cases passed) BLOCKED</title>" in page.rsplit('<circle class="point"', 1)[1]
    )


def test_everything_from_cases_and_agents_is_escaped(make_suite: SuiteBuilder) -> None:
    _, page = run(make_suite)

    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in page
    assert "<b>markup</b>" not in page
    assert "Escapes &lt;b&gt;markup&lt;/b&gt; &amp; more" in page
    # The page's own script is the only one.
    assert page.count("<script>") == 1


def test_self_contained(make_suite: SuiteBuilder) -> None:
    _, page = run(make_suite)

    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page
    assert "@import" not in page


def test_no_results_and_no_eval_items(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")

    result = pytester.runpytest("--eval-html", "report.html")

    assert result.ret == 0
    page = (pytester.path / "report.html").read_text()
    assert "No eval case was run." in page
    assert "No results files yet." in page


def test_read_trend_is_defensive(tmp_path: Path) -> None:
    docs = {
        "a.json": {"date": "2026-01-03", "pass_rate": 90, "passed": 9, "total": 10},
        "b.json": {"date": "2026-01-01", "passed": 1, "total": 4},
        "c.json": {"date": "2026-01-02", "pass_rate": True},
        "d.json": {"date": "2026-01-02", "pass_rate": None, "passed": 0, "total": 0},
        "e.json": ["not", "an", "object"],
        "f.json": {"pass_rate": 0.5, "variants": {"pr": {"pass_rate": 0.25}, "x": 3}},
    }
    for name, doc in docs.items():
        (tmp_path / name).write_text(json.dumps(doc))
    (tmp_path / "g.json").write_bytes(b"\xff\xfe")

    points = html_report.read_trend(tmp_path)

    assert [(p.date, p.pass_rate) for p in points] == [
        ("2026-01-01", 0.25),
        ("2026-01-03", 0.9),
        ("f", 0.5),
    ]
    assert points[-1].variants == {"pr": 0.25}
    assert html_report.read_trend(tmp_path / "missing") == []


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (headless)")
def test_renders_in_headless_chromium(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, tmp_path: Path
) -> None:
    _, page = run(make_suite)
    report = pytester.path / "out" / "report.html"
    inject = re.search(r'data-cell="(\d+-\d+)"[^>]*title="inject \[pr\]', page)
    assert inject is not None

    dom = dump_dom(f"{report.as_uri()}#cell-{inject.group(1)}", tmp_path)

    # The script ran to its end without an error ...
    assert re.search(r'<body[^>]*class="[^"]*js-ready', dom)
    assert 'data-cells="8"' in dom
    assert not re.search(r"<html[^>]*data-js-errors", dom)
    # ... and showed the cell named in the URL: its failed check, still escaped.
    shown = details_section(dom)
    assert f'data-shown="{inject.group(1)}"' in shown
    assert "says-ok" in shown
    assert "&lt;script&gt;alert" in shown
    assert 'class="cell fail selected"' in dom
    assert "<svg" in dom
    assert 'class="point"' in dom


def details_section(dom: str) -> str:
    """The report's details panel, as Chromium left it."""
    shown = dom[dom.index('<section id="details"') :]
    return shown[: shown.index("</section>")]


def dump_dom(url: str, profile: Path) -> str:
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile / 'chromium-profile'}",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    shutil.rmtree(profile / "chromium-profile", ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (headless)")
def test_clicking_a_failed_cell_shows_its_failed_checks(
    make_suite: SuiteBuilder, tmp_path: Path
) -> None:
    _, page = run(make_suite)
    cell = re.search(
        r'<td class="cell fail" data-cell="(\d+-\d+)"[^>]*title="inject \[main\]', page
    )
    assert cell is not None
    key = cell.group(1)
    # A copy of the report with a script after the page's own: it notes what the
    # details panel shows, clicks the red cell as a user would, and notes it again.
    clicked = tmp_path / "clicked.html"
    clicked.write_text(page + CLICK_SCRIPT.replace("KEY", key), "utf-8")

    dom = dump_dom(clicked.as_uri(), tmp_path)

    assert not re.search(r"<html[^>]*data-js-errors", dom)
    probe = re.search(r'<pre id="probe" ([^>]*)>(.*?)</pre>', dom, re.DOTALL)
    assert probe is not None
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', probe.group(1)))
    # Before the click the panel held something else (the first red or grey cell,
    # shown on load) and no failed check of this case was rendered.
    before = probe.group(2)
    assert before.startswith('&lt;section id="details"')
    assert attrs["data-shown-before"] != key
    assert attrs["data-checks-before"] == ""
    assert "inject [main]" not in before
    assert "says-ok" not in before
    # After it: this cell's details, its failed check rendered on the page, the
    # agent's answer quoted and still escaped.
    assert attrs["data-shown-after"] == key
    assert attrs["data-checks-after"] == "says-ok [output_matches]"
    shown = details_section(dom)
    assert f'data-shown="{key}"' in shown
    assert "<h2>inject [main]: failed</h2>" in shown
    assert '<ul class="failed"><li><b class="check">says-ok</b> [output_matches]:' in shown
    assert '&lt;script&gt;alert("pwned")&lt;/script&gt;' in shown
    assert f'<td class="cell fail selected" data-cell="{key}"' in dom
    assert dom.count(" selected") == 1


#: Appended to a copy of the report. <pre id="probe"> gets the details panel's markup
#: before the click (as text), which cell it showed before and after the click of the
#: cell ``KEY``, and the failed checks rendered in it (laid out, not merely present).
CLICK_SCRIPT = """
<script>
(function () {
  var panel = document.getElementById('details');
  function rendered() {
    var items = panel.querySelectorAll('ul.failed li'), names = [];
    for (var i = 0; i < items.length; i++) {
      if (items[i].getClientRects().length) {
        names.push(items[i].textContent.split(':')[0]);
      }
    }
    return names.join(', ');
  }
  var probe = document.createElement('pre');
  probe.id = 'probe';
  probe.textContent = panel.outerHTML;
  probe.setAttribute('data-shown-before', panel.getAttribute('data-shown') || '');
  probe.setAttribute('data-checks-before', rendered());
  document.querySelector('td.cell[data-cell="KEY"]').click();
  probe.setAttribute('data-shown-after', panel.getAttribute('data-shown') || '');
  probe.setAttribute('data-checks-after', rendered());
  document.body.appendChild(probe);
})();
</script>
"""


# --- transcripts of recorded runs (docs/replay.md, "Reading a run") -------------------


def recorded_report(pytester: pytest.Pytester, *args: str) -> tuple[Path, str]:
    """A saved run of the recording tests' agent (one request to the scripted Messages
    API per run, through the recording proxy), one case of which echoes markup."""
    (pytester.path / "evals" / "markup.yaml").write_text(
        "id: markup\ndefends: AGENTS.md\nprompt: MARK-<i>slanted</i>\n"
        "checks: [{type: output_matches, pattern: 'answer to'}]\n"
    )
    result = pytester.runpytest(
        "--eval-agent", "http", "-p", "no:cacheprovider", "--eval-html", "report.html", *args
    )
    result.assert_outcomes(passed=3)
    return pytester.path / "report.html", (pytester.path / "report.html").read_text("utf-8")


@pytest.mark.parametrize("options", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_each_recorded_run_links_to_its_transcript(
    pytester: pytest.Pytester,
    api: ModelServer,  # noqa: F811
    options: list[str],
) -> None:
    _, page = recorded_report(pytester, *options)

    [results] = results_files(pytester.path)
    for case_id in ("alpha", "beta", "markup"):
        # The run's details link to its transcript, which is on the page, closed.
        assert f'<p class="tr"><a href="#transcript-{case_id}">transcript</a></p>' in page
        assert f'<details class="transcript" id="transcript-{case_id}"><summary>' in page
        assert f"$ evalcases show {results} &#x27;{case_id}&#x27;" in page
    transcript = page[page.index('id="transcript-alpha"') :].split("</details>")[0]
    assert "\nprompt\n  MARK-alpha\n" in transcript
    assert "\nanswer\n  answer to MARK-alpha\n" in transcript
    assert "verdict: passed · 1 of 1 check passed" in transcript
    # What the agent and the model said is escaped.
    assert "<i>slanted</i>" not in page
    assert "answer to MARK-&lt;i&gt;slanted&lt;/i&gt;" in page


def test_no_transcripts_without_recordings(make_suite: SuiteBuilder) -> None:
    _, page = run(make_suite)

    assert 'class="transcript"' not in page
    assert "Transcripts</h2>" not in page


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (headless)")
def test_a_transcript_link_opens_its_transcript_in_chromium(
    pytester: pytest.Pytester,
    api: ModelServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    report, _ = recorded_report(pytester)

    dom = dump_dom(f"{report.as_uri()}#transcript-beta", tmp_path)

    assert not re.search(r"<html[^>]*data-js-errors", dom)
    assert re.search(r'<details class="transcript" id="transcript-beta" open="">', dom)
    assert re.search(r'<details class="transcript" id="transcript-alpha">', dom)


# --- variants of agents and models (docs/variants.md) ----------------------------------

#: Each fake CLI's answer: Claude's says it committed, Codex's does not.
ANSWERS = {"claude": "claude-json-success.json", "codex": "codex-exec.jsonl"}
COMMIT = (
    "id: commit\ndefends: AGENTS.md\nprompt: commit the staged change\n"
    "checks:\n  - id: says-committed\n    type: output_matches\n    pattern: Committed\n"
)


def agent_matrix(
    make_suite: SuiteBuilder,
    monkeypatch: pytest.MonkeyPatch,
    bin_dir: Path,
    *variants: str,
    options: tuple[str, ...] = (),
) -> tuple[pytest.RunResult, str]:
    """A session of ``--eval-variant`` ``variants`` (and ``options``) over the fake
    ``claude`` and ``codex`` (each printing its own sample, through a wrapper in
    ``bin_dir``) and the command agent (``ok``, no tokens, no cost), and the HTML
    report it wrote."""
    bin_dir.mkdir()
    # The fakes and their samples are copied beside the wrappers: under the sandbox the
    # agent sees the rootdir, not the repository's tests when it lives below /tmp.
    fakes = bin_dir / "fakes"
    shutil.copytree(FAKES, fakes, ignore=shutil.ignore_patterns("__pycache__"))
    for program, sample in ANSWERS.items():
        shutil.copy(SAMPLES / sample, fakes / sample)
        wrapper = bin_dir / program
        wrapper.write_text(
            f"#!/bin/sh\nFAKE_AGENT_SAMPLE='{fakes / sample}' exec '{fakes / program}' \"$@\"\n"
        )
        wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    fake_credentials(monkeypatch)
    make_suite("print('ok')", {"commit": COMMIT}, fixtures={"AGENTS.md": "Commit with care.\n"})
    given = [arg for spec in variants for arg in ("--eval-variant", spec)]
    result = make_suite.pytester.runpytest(
        *given, *options, "--eval-no-save", "--eval-html", "report.html", "-p", "no:randomly"
    )
    return result, (make_suite.pytester.path / "report.html").read_text("utf-8")


MATRIX = (
    "cc=agent:claude",
    "cx=agent:codex",
    "cx5=agent:codex,model:gpt-5",
    "cmd=agent:command",
)


def money_cells(page: str) -> list[str]:
    """The matrix's tokens-and-cost cells, one per variant, their lines joined by the
    terminal's `` · ``."""
    foot = re.search(r"<tfoot>(.*?)</tfoot>", page)
    assert foot is not None
    return [
        cell.replace("<br>", " · ")
        for cell in re.findall(r'<td class="usage[^"]*">(.*?)</td>', foot.group(1))
    ]


@pytest.mark.parametrize("options", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_agent_and_model_variants_say_what_they_are_and_spend(
    make_suite: SuiteBuilder,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    options: tuple[str, ...],
) -> None:
    result, page = agent_matrix(
        make_suite, monkeypatch, tmp_path / "bin", *MATRIX, options=("--eval-repeat", "2", *options)
    )

    result.assert_outcomes(passed=2, failed=6)
    out = result.stdout.lines
    # Each column header says what its variant is made of, as the terminal does.
    for name, made_of in (
        ("cc", "claude"),
        ("cx", "codex"),
        ("cx5", "codex, model gpt-5"),
        ("cmd", "command"),
    ):
        assert f'<th scope="col">{name}<br><span class="factors">{made_of}</span><br>' in page
        assert any(line.startswith(f"{name} ({made_of}): ") for line in out)
    # Tokens and cost per variant (two runs each), side by side under the matrix: the
    # terminal's usage line of each variant, "not reported" where its agent reported
    # neither.
    assert money_cells(page) == [
        "tokens 852 (426 per run) · cost $0.0836 ($0.0418 per run)",
        "tokens 50,770 (25,385 per run) · cost not reported",
        "tokens 50,770 (25,385 per run) · cost not reported",
        "not reported",
    ]
    usage = [line.strip() for line in out if line.startswith("  tokens ") and " ± " not in line]
    assert usage == money_cells(page)[:3]
    assert '<th scope="row">tokens and cost</th>' in page
    # The comparisons name the factors that differ, in the terminal's words; the one
    # in which two differ says that it is confounded.
    headings = re.findall(r"<h2>([^<]* vs [^<]*)</h2>", page)
    assert headings == [
        "cx vs cc (agent)",
        "cx5 vs cc (confounded: agent and model differ)",
        "cmd vs cc (agent)",
    ]
    for heading in headings:
        assert any(line.startswith(f"{heading}: 1 check regressed, 0 improved") for line in out)
    confounded = page.split("<h2>cx5 vs cc", 1)[1].split("<h2>", 1)[0]
    assert '<p class="confounded">Confounded: more than one factor differs' in confounded
    assert page.count('class="confounded"') == 1
    assert "<p>1 check regressed, 0 improved; cases 1 regressed, 0 improved" in confounded


def test_a_variants_arguments_are_shown_as_text(
    make_suite: SuiteBuilder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _, page = agent_matrix(
        make_suite,
        monkeypatch,
        tmp_path / "bin",
        "cc=agent:claude",
        "x=agent:claude,args:--append-system-prompt '<script>alert(1)</script>'",
    )

    assert (
        '<span class="factors">claude, args --append-system-prompt '
        "&lt;script&gt;alert(1)&lt;/script&gt;</span>"
    ) in page
    assert "<script>alert" not in page
    assert page.count("<script>") == 1
    assert "<h2>x vs cc (args)</h2>" in page


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (headless)")
def test_agent_matrix_renders_in_headless_chromium(
    make_suite: SuiteBuilder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _, page = agent_matrix(
        make_suite,
        monkeypatch,
        tmp_path / "bin",
        *MATRIX,
        "x=agent:claude,args:--append-system-prompt '<script>alert(1)</script>'",
    )
    probed = tmp_path / "probed.html"
    probed.write_text(page + HEADER_SCRIPT, "utf-8")

    dom = dump_dom(probed.as_uri(), tmp_path)

    assert not re.search(r"<html[^>]*data-js-errors", dom)
    # The page's script counts the matrix's cells: the money row is not one of them.
    assert re.search(r'<body[^>]*class="[^"]*js-ready', dom)
    assert 'data-cells="5"' in dom
    probe = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.DOTALL)
    assert probe is not None
    # What a reader sees, laid out: each header's make-up (the markup in a variant's
    # arguments as text, not an element) and the money row.
    seen = json.loads(html.unescape(probe.group(1)))
    assert seen["factors"] == [
        "claude",
        "codex",
        "codex, model gpt-5",
        "command",
        "claude, args --append-system-prompt <script>alert(1)</script>",
    ]
    assert seen["money"] == [
        "tokens and cost",
        "tokens 426 (426 per run)\ncost $0.0418 ($0.0418 per run)",
        "tokens 25,385 (25,385 per run)\ncost not reported",
        "tokens 25,385 (25,385 per run)\ncost not reported",
        "not reported",
        "tokens 426 (426 per run)\ncost $0.0418 ($0.0418 per run)",
    ]


#: Appended to a copy of the report: <pre id="probe"> gets, as JSON, the rendered text
#: of the column headers' make-up and of the money row (only what is laid out).
HEADER_SCRIPT = """
<script>
(function () {
  function texts(selector) {
    var found = document.querySelectorAll(selector), out = [];
    for (var i = 0; i < found.length; i++) {
      if (found[i].getClientRects().length) { out.push(found[i].innerText); }
    }
    return out;
  }
  var probe = document.createElement('pre');
  probe.id = 'probe';
  probe.textContent = JSON.stringify({
    factors: texts('#matrix thead .factors'),
    money: texts('#matrix tfoot th, #matrix tfoot td')
  });
  document.body.appendChild(probe);
})();
</script>
"""
