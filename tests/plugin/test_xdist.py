"""Under pytest-xdist: workers run the items, the controller merges and prints one summary.

This module is where xdist is proven. The other modules run their sessions serially; here
each scenario (live runs and errors, broken files, repetitions, configuration variants,
pins and secrets, red-first, the HTML report, lint) runs the same suite once serially and
once under ``-n 2``, in two copies of one directory, and the two must agree: the exit
status, the outcome counts, the eval summary and the results file, once normalised for
what legitimately differs (dates, durations, workspace paths, the order of records).
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.suite import SuiteBuilder, eval_configs, write
from tests.plugin import (
    test_bad_input,
    test_html_report,
    test_lint,
    test_red_first,
    test_variants,
)
from tests.plugin.test_repeats import AGENT as REPEAT_AGENT
from tests.plugin.test_repeats import repeat_cases

#: Every test here compares a session under ``-n 2`` with a serial one.
pytestmark = pytest.mark.xdist

EXAMPLES = Path(__file__).resolve().parents[2] / "example_cases"

#: The outcome counts pytest prints; ``deselected`` is left out (see Session.outcomes).
OUTCOMES = ("passed", "failed", "errors", "skipped", "xfailed", "xpassed")


@dataclass
class Session:
    """One pytest session of a scenario: its result, directory and results files."""

    result: pytest.RunResult
    root: Path

    @property
    def out(self) -> str:
        return self.result.stdout.str()

    def outcomes(self) -> dict[str, int]:
        # xdist deselects on the workers, so only a serial run counts deselected items.
        counts = self.result.parseoutcomes()
        return {name: counts.get(name, 0) for name in OUTCOMES}

    def summary(self) -> list[str]:
        """The eval report, from the ``eval gate`` header on, without timings and dates,
        its lines sorted: xdist lists broken files and failures as the workers report them."""
        lines = self.out.splitlines()
        start = next(i for i, line in enumerate(lines) if "= eval gate =" in line)
        text = "\n".join(lines[start:]).replace(str(self.root), "<root>")
        kept = [
            line
            for line in text.splitlines()
            # pytest's timing line; pytest-json-report's section, placed apart under xdist.
            if line.strip()
            and not re.match(r"^=+ .* in [\d.]+s", line)
            and "JSON report" not in line
            and not line.startswith("report saved to")
        ]
        return sorted(unordered(line) for line in kept)

    def results(self) -> list[dict[str, Any]]:
        """Every results file of the run, normalised."""
        directory = self.root / "evals" / "results"
        files = sorted(directory.glob("*.json")) if directory.is_dir() else []
        texts = [unordered(f.read_text("utf-8").replace(str(self.root), "<root>")) for f in files]
        return [normalised(json.loads(text)) for text in texts]


def unordered(text: str) -> str:
    """``text`` without timings, dates, and which repetition of a case a run was: the test
    agents count their runs, so under xdist another repetition may be the one that fails."""
    text = re.sub(r"\b\d+\.\d+s\b", "<s>", text)
    # The metrics' wall times ("p50 12.1 s", "0.4 s (1 passed)").
    text = re.sub(r"\b\d[\d,]*\.\d+ s\b", "<s>", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d+Z", "<date>", text)
    text = re.sub(r"\br\d+\]", "r<n>]", text)
    # Lists of case ids ("5 normal cases failed: b, a") name them in the order they finished.
    return re.sub(
        r"(?<=: )[\w-]+(?:, [\w-]+)+", lambda m: ", ".join(sorted(m[0].split(", "))), text
    )


def normalised(doc: dict[str, Any]) -> dict[str, Any]:
    """A results file without what differs between two equal runs: the dates and
    durations (the metrics' wall times too), the workspace and recording paths (and
    mentions of workspaces in messages), the order of records."""
    doc = {k: v for k, v in doc.items() if k not in ("date", "finished", "duration")}
    cases = []
    for record in doc.get("cases", []):
        workspace = record.get("workspace")
        recording = record.get("recording")
        skip = ("duration", "workspace", "repetition", "recording")
        text = unordered(json.dumps({k: v for k, v in record.items() if k not in skip}))
        if workspace:
            text = text.replace(workspace, "<workspace>")
        # Named after the results file's date and the run's repetition, as the workspace.
        cases.append(
            {**json.loads(text), "workspace": bool(workspace), "recording": bool(recording)}
        )
    doc["cases"] = sorted(cases, key=lambda r: json.dumps(r, sort_keys=True))
    for measured in (doc.get("metrics") or {}).get("variants", []):
        # Wall times are durations; a runaway may be another repetition of its case.
        measured["wall_passed"] = measured["wall_passed"]["runs"]
        measured["wall_failed"] = measured["wall_failed"]["runs"]
        for runaway in measured["runaways"]:
            runaway.pop("repetition")
    for variant in doc.get("variants", []):
        variant["cases"] = sorted(variant.get("cases", []), key=lambda c: c["id"])
    return doc


@pytest.fixture
def serial_and_xdist(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., tuple[Session, Session]]:
    """``serial_and_xdist(*args)`` copies the suite in the pytester directory to serial/suite/
    and xdist/suite/ and runs pytest with ``args`` in each, the second time under ``-n 2``."""

    def run(*args: str) -> tuple[Session, Session]:
        source = pytester.path
        entries = [p for p in source.iterdir() if p.name not in ("serial", "xdist")]
        sessions = []
        for name, workers in (("serial", ()), ("xdist", ("-n", "2"))):
            # Both copies have the same name, which the HTML report shows.
            root = source / name / "suite"
            root.mkdir(parents=True)
            for entry in entries:
                if entry.is_dir():
                    shutil.copytree(entry, root / entry.name, symlinks=True)
                else:
                    shutil.copy2(entry, root / entry.name)
            monkeypatch.chdir(root)
            result = pytester.runpytest("-p", "no:cacheprovider", *args, *workers)
            sessions.append(Session(result, root))
        monkeypatch.chdir(source)
        return sessions[0], sessions[1]

    return run


def assert_same(serial: Session, xdist: Session, *, results: bool = True) -> None:
    """The two sessions agree on everything but what xdist legitimately changes."""
    assert xdist.result.ret == serial.result.ret
    assert xdist.outcomes() == serial.outcomes()
    assert xdist.summary() == serial.summary()
    assert "created: 2/2 workers" in xdist.out
    if results:
        assert serial.results() != []
        assert xdist.results() == serial.results()


def under_two_workers(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, str]:
    """Run with two xdist workers; the result and its output, which has one eval gate."""
    result = pytester.runpytest(*args, "-n", "2", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert out.count("= eval gate =") == 1
    return result, out


def test_drift_demo_under_two_workers(pytester: pytest.Pytester) -> None:
    shutil.copytree(EXAMPLES / "drift-demo", pytester.path / "drift-demo")

    result, out = under_two_workers(pytester, "drift-demo")

    result.assert_outcomes(passed=3, failed=3)
    assert "Score: 9/9 (100%)" in out
    assert "Score: 5/9 (56%)" in out
    assert "regressed: 01-service-architecture / service-uses-class" in out
    assert result.ret == 1


LIVE_AGENT = """
import os, sys
if "fail hard" in sys.argv[1]:
    sys.exit("agent crashed: out of memory")
print(os.environ["EVALCASES_CASE_ID"], "in", os.getcwd())
"""


def live_cases() -> dict[str, str]:
    """Six passing cases, one whose agent crashes, one broken file."""
    cases = {
        f"case-{i}": f"id: case-{i}\ndefends: AGENTS.md\nprompt: go\n"
        f"checks: [{{type: output_matches, pattern: '^case-{i} in '}}]\n"
        for i in range(6)
    }
    cases["crash"] = (
        "id: crash\ndefends: AGENTS.md\nprompt: fail hard\n"
        "checks: [{type: output_matches, pattern: x}]\n"
    )
    cases["broken"] = "id: broken\ndefends: AGENTS.md\nchecks: []\n"
    return cases


def test_live_runs_errors_and_broken_files_agree(
    make_suite: SuiteBuilder, serial_and_xdist: Callable[..., tuple[Session, Session]]
) -> None:
    make_suite(textwrap.dedent(LIVE_AGENT), live_cases())

    serial, xdist = serial_and_xdist()

    assert serial.outcomes()["errors"] == 2
    assert_same(serial, xdist)
    out = xdist.out
    assert out.count("= eval gate =") == 1
    xdist.result.assert_outcomes(passed=6, errors=2)
    assert "suite: 6/7 cases passed · Score: 6/6 (100%) · 1 error · normal 6/7" in out
    assert "agent crashed: out of memory" in out
    assert "evals/broken.yaml:3: checks:" in out
    assert "eval gate: INCONCLUSIVE (1 case errored: crash; 1 case file could not be loaded)" in out
    assert xdist.result.ret == 2
    (doc,) = xdist.results()
    # The crashed run and the broken file.
    assert (doc["verdict"], doc["errors"]) == ("INCONCLUSIVE", 2)


#: The broken files that once each had an xdist session of their own, and the ones of
#: test_many_broken_files_each_reported_and_the_run_continues: all in one suite now.
BROKEN = [
    "yaml-syntax",
    "not-utf8",
    "unknown-top-level-field",
    "regex-file-matches",
    "cwd-parent",
    "task-severity-invalid",
    "missing-id",
    "regex-output-matches",
    "path-parent",
    "cwd-missing",
]


def broken_path(name: str) -> str:
    """Each broken file at its own path: ``evals/bad.yaml`` becomes ``evals/<name>.yaml``."""
    path = test_bad_input.BAD[name].path
    return f"evals/{name}.yaml" if path == "evals/bad.yaml" else path


def broken_files() -> dict[str, str | bytes | None]:
    """Every file of :data:`BROKEN`, the valid case and the graded directory."""
    files: dict[str, str | bytes | None] = {
        "graded/ok.txt": "ok\n",
        "evals/good.yaml": test_bad_input.VALID_CASE,
    }
    for name in BROKEN:
        bad = test_bad_input.BAD[name]
        for path, extra in bad.extra.items():
            assert not isinstance(extra, test_bad_input.Link)
            files[path] = extra
        content = bad.content
        assert isinstance(content, (str, bytes))
        # Broken files named "bad" each get an id of their own.
        if isinstance(content, bytes):
            content = content.replace(b"id: bad\n", f"id: bad-{name}\n".encode())
        else:
            content = content.replace("id: bad\n", f"id: bad-{name}\n")
        files[broken_path(name)] = content
    return files


def test_broken_files_in_one_session_agree(
    make_suite: SuiteBuilder, serial_and_xdist: Callable[..., tuple[Session, Session]]
) -> None:
    make_suite(fixtures=broken_files())

    serial, xdist = serial_and_xdist("--eval-workspace", "graded")

    assert xdist.outcomes() == {**dict.fromkeys(OUTCOMES, 0), "passed": 1, "errors": 10}
    assert_same(serial, xdist)
    out = xdist.out + xdist.result.stderr.str()
    for name in BROKEN:
        bad = test_bad_input.BAD[name]
        where = broken_path(name) if bad.line is None else f"{broken_path(name)}:{bad.line}"
        head = f"case file error: {where}:" + (f" {bad.field}:" if bad.field else "")
        assert head in out, f"expected {head!r} in:\n{out}"
        message = out[out.index(head) :].split("\n=====")[0].split("\n____")[0]
        for text in bad.expect:
            assert text in message, f"{name}: expected {text!r} in:\n{message}"
    assert "10 case files could not be loaded" in out
    assert "Traceback" not in out
    assert "pytest_evalcases/" not in out
    assert "pydantic" not in out.lower().replace("pydantic_core", "")
    assert xdist.result.ret != 0


#: The four selections of test_bad_input.SELECTIONS (-m, -k, --eval-tags, --eval-defends)
#: in one session; ``-k`` drops one case by name instead of matching nothing.
SELECTION = (
    "-m", "critical", "-k", "not dropped-by-keyword",
    "--eval-tags", "x", "--eval-defends", "rules/other.md",
)  # fmt: skip


def deselected_cases() -> dict[str, str]:
    """Four valid cases, each selected by three of the options of :data:`SELECTION` and
    deselected by the one its id names: each option must deselect on its own."""
    selected = {"severity": "critical", "tags": "[x]", "defends": "rules/other.md"}
    dropped_by = {
        "marker": {"severity": "normal"},
        "keyword": {},
        "tags": {"tags": "[good]"},
        "defends": {"defends": "rules/good.md"},
    }
    return {
        f"evals/dropped-by-{name}.yaml": f"id: dropped-by-{name}\n"
        + "".join(f"{key}: {value}\n" for key, value in {**selected, **change}.items())
        + "checks:\n  - type: file_exists\n    path: ok.txt\n"
        for name, change in dropped_by.items()
    }


def test_broken_file_reported_when_selection_deselects_everything(
    make_suite: SuiteBuilder, serial_and_xdist: Callable[..., tuple[Session, Session]]
) -> None:
    bad = test_bad_input.BAD["unknown-check-type"]
    suite = {**test_bad_input.broken_suite(bad), **deselected_cases()}
    del suite["evals/good.yaml"]
    make_suite(fixtures=suite)

    serial, xdist = serial_and_xdist("--eval-workspace", "graded", *SELECTION)

    # Each valid case was deselected (by its own option: it passes the other three), and
    # no option dropped the broken file.
    assert serial.result.parseoutcomes().get("deselected") == 4
    assert xdist.outcomes() == {**dict.fromkeys(OUTCOMES, 0), "errors": 1}
    assert_same(serial, xdist, results=False)
    assert "dropped-by-" not in xdist.out
    test_bad_input.assert_reported(xdist.result, bad)


def test_failed_repetitions_of_a_passing_case_and_variants_agree(
    make_suite: SuiteBuilder, serial_and_xdist: Callable[..., tuple[Session, Session]]
) -> None:
    make_suite(
        REPEAT_AGENT,
        repeat_cases(flaky=("work; fail at 0,3,6", 0.7)),
        variants={"main": "main", "pr": "pr"},
    )

    serial, xdist = serial_and_xdist(
        "--eval-repeat", "10", *eval_configs("main=main", "pr=pr"), "-v"
    )

    # Each variant counts its own runs; failed repetitions do not fail the run.
    assert xdist.outcomes() == {**dict.fromkeys(OUTCOMES, 0), "passed": 14, "failed": 6}
    assert_same(serial, xdist)
    out = xdist.out
    assert out.count("  flaky: 7/10 runs passed (70%, 95% CI 40%–89%; needs 70%)") == 2
    assert "pr vs main (config): 0 checks regressed, 0 improved" in out
    assert "eval gate: PASS" in out
    assert xdist.result.ret == 0
    # The repetitions are separate items: both workers ran some of each variant's.
    for name in ("main", "pr"):
        ran_on = set(re.findall(rf"\[(gw\d)\].*flaky\[{name}-r\d\]", out))
        assert ran_on == {"gw0", "gw1"}


def test_a_case_below_its_min_pass_rate_agrees(
    make_suite: SuiteBuilder, serial_and_xdist: Callable[..., tuple[Session, Session]]
) -> None:
    make_suite(REPEAT_AGENT, repeat_cases(flaky=("work; fail at 0,3,6", 0.8), steady=("work", 1.0)))

    serial, xdist = serial_and_xdist("--eval-repeat", "10")

    assert xdist.outcomes() == {**dict.fromkeys(OUTCOMES, 0), "passed": 17, "failed": 3}
    assert_same(serial, xdist)
    assert "eval gate: BLOCKED (1 normal case failed: flaky)" in xdist.out
    (doc,) = xdist.results()
    verdicts = {
        c["id"]: (c["outcome"], c["passes"], c["ci95"]) for c in doc["variants"][0]["cases"]
    }
    assert verdicts == {
        "flaky": ("failed", 7, [0.3968, 0.8922]),
        "steady": ("passed", 10, [0.7225, 1.0]),
    }


def test_variants_from_directories_and_git_revisions_agree(
    pytester: pytest.Pytester,
    repo: Path,
    serial_and_xdist: Callable[..., tuple[Session, Session]],
) -> None:
    # An uncommitted edit: `.` sees it, git:HEAD does not.
    (repo / "AGENTS.md").write_text(test_variants.CLASS_RULES)

    serial, xdist = serial_and_xdist(
        *eval_configs(
            "main=configs/main", "pr=configs/pr", "old=git:HEAD~1", "new=git:main", "wt=."
        ),
    )

    assert_same(serial, xdist)
    out = xdist.out
    assert "pr vs main (config): 10 checks regressed, 1 improved" in out
    assert "new vs main (config): 10 checks regressed, 1 improved" in out
    assert "wt vs main (config): 0 checks regressed, 0 improved" in out
    assert "(McNemar exact p=0.219: 5 cases passed only in main, 1 only in pr)" in out


#: The git repository of test_variants, for the scenario above.
repo = test_variants.repo
services = test_variants.services


def lint_section(session: Session) -> list[str]:
    """The ``eval lint`` section: the findings the lint item sent to the controller."""
    lines = session.out.replace(str(session.root), "<root>").splitlines()
    start = next(i for i, line in enumerate(lines) if "= eval lint =" in line) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("="))
    return [line for line in lines[start:end] if line.strip()]


def test_pins_secrets_json_report_and_lint_agree(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    serial_and_xdist: Callable[..., tuple[Session, Session]],
) -> None:
    fake_claude(tokens=1234, cost=0.5, model="m-9")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value-123")
    make_suite.steered(["alpha", "beta"], severities={"beta": "critical"}, agent="claude")
    pytester.makepyfile(test_unit="def test_plain():\n    assert True\n")
    # The lint scenario: a rule and a case defending it, which -k leaves out; the lint
    # item, added after selection, runs although -k does not name it either.
    write(pytester.path / "rules" / "git-attribution.md", test_lint.RULE)
    write(
        pytester.path / "evals" / "good.yaml", test_lint.GOOD.format(id="good", prompt="Commit it.")
    )

    serial, xdist = serial_and_xdist(
        "--json-report", "--json-report-file=r.json",
        "--eval-lint", "-k", "alpha or beta or plain",
    )  # fmt: skip

    assert serial.result.parseoutcomes().get("deselected") == 1
    assert xdist.outcomes() == {**dict.fromkeys(OUTCOMES, 0), "passed": 4}
    assert_same(serial, xdist)
    assert xdist.result.ret == serial.result.ret == 0
    (doc,) = xdist.results()
    assert doc["pins"]["models"] == ["m-9"]
    assert doc["usage"]["tokens_total"] == 2 * 1334
    for session in (serial, xdist):
        assert "evals: WARNING suite-size: the suite has 3 cases" in session.out
    assert lint_section(xdist) == lint_section(serial)
    assert lint_section(xdist)[-1] == "eval lint: 0 errors, 1 warning"

    def reported(session: Session) -> dict[str, str]:
        report = json.loads((session.root / "r.json").read_text("utf-8"))
        return {t["nodeid"]: t["outcome"] for t in report["tests"]}

    # Each test's outcome, the lint item's among them.
    assert reported(xdist) == reported(serial)
    assert reported(xdist) == {
        "eval-lint": "passed",
        "evals/alpha.yaml::alpha": "passed",
        "evals/beta.yaml::beta": "passed",
        "test_unit.py::test_plain": "passed",
    }

    def metadata(session: Session) -> dict[str, Any]:
        report = json.loads((session.root / "r.json").read_text("utf-8"))
        return {t["nodeid"]: t.get("metadata", {}).get("evalcases") for t in report["tests"]}

    def without_timings(meta: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(meta, sort_keys=True)
        return json.loads(re.sub(r'"(duration|workspace)": [^,}]+', r'"\1": null', text))

    assert without_timings(metadata(xdist)) == without_timings(metadata(serial))
    assert metadata(xdist)["evals/beta.yaml::beta"]["severity"] == "critical"
    for session in (serial, xdist):
        for path in session.root.rglob("*.json"):
            assert "sk-ant-secret-value-123" not in path.read_text("utf-8")


def test_red_first_agrees(
    pytester: pytest.Pytester, serial_and_xdist: Callable[..., tuple[Session, Session]]
) -> None:
    test_red_first.suite(pytester)

    serial, xdist = serial_and_xdist("--eval-red-first", "-rA")

    assert xdist.outcomes() == {
        **dict.fromkeys(OUTCOMES, 0),
        "passed": 1,
        "failed": 2,
        "errors": 1,
    }
    assert_same(serial, xdist)
    assert "1 case red, as they should be; 2 pass on first write" in xdist.out
    assert [d["mode"] for d in xdist.results()] == ["red-first"]


def test_html_report_agrees(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    serial_and_xdist: Callable[..., tuple[Session, Session]],
) -> None:
    make_suite(test_html_report.AGENT, test_html_report.CASES, variants=test_html_report.VARIANTS)
    test_html_report.write_results(pytester.path / "evals" / "results")

    serial, xdist = serial_and_xdist(
        *eval_configs("main=main", "pr=pr"), "--eval-no-save",
        "--eval-html", "out/report.html",
    )  # fmt: skip

    assert xdist.outcomes() == {
        **dict.fromkeys(OUTCOMES, 0),
        "passed": 2,
        "failed": 2,
        "errors": 2,
        "skipped": 2,
    }
    assert_same(serial, xdist, results=False)

    def page(session: Session) -> str:
        text = (session.root / "out" / "report.html").read_text("utf-8")
        text = text.replace(str(session.root), "<root>")
        text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<date>", text)
        # "Generated 2026-12-01 21:59 UTC": the two sessions may straddle a minute.
        text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "<date>", text)
        text = re.sub(r"/[^\s\"'<>]*/(popen-gw\d+/)?[\w.-]+\d+", "<workspace>", text)
        return re.sub(r"\b\d+(\.\d+)? ?s\b", "<s>", text)

    def parts(session: Session) -> tuple[list[str], list[tuple[str, str]], str]:
        """The details of each cell, the cells, and the rest of the page: the matrix
        rows follow the order in which the runs finished."""
        text = page(session)
        details = re.findall(r"<template id=\"d-\d+-\d+\">.*?</template>", text, re.DOTALL)
        cells = re.findall(r'<td class="cell (\w+)" data-cell="[\d-]+"[^>]*title="([^"]*)"', text)
        rest = re.sub(r"<tbody>.*?</tbody>", "", text, flags=re.DOTALL)
        for template in details:
            rest = rest.replace(template, "")
        return sorted(re.sub(r"d-\d+-\d+", "", t) for t in details), sorted(cells), rest

    assert parts(xdist) == parts(serial)
    details, cells, _ = parts(xdist)
    assert len(details) == len(cells) == 8
