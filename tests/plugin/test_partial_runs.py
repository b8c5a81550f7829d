"""Runs of part of the suite (docs/results.md, "Runs of part of the suite"): the results
file records the selection and ``complete_suite``; the trend, the baseline gate,
``evalcases compare``, ``evalcases merge`` and the HTML report compare like with like."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases import cli
from tests.helpers.results import results_files, steer
from tests.helpers.suite import SuiteBuilder

FIVE = [f"case-{i:02d}" for i in range(5)]
TEN = [f"case-{i:02d}" for i in range(10)]
CRITICAL = {"case-00": "critical", "case-01": "critical"}


def saved(pytester: pytest.Pytester, *args: str, name: str = "run.json") -> dict[str, Any]:
    """Run pytest with ``args``, saving to ``name``; the results file."""
    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-save", name, *args)
    doc: dict[str, Any] = json.loads((pytester.path / name).read_text("utf-8"))
    doc["_out"] = result.stdout.str()
    return doc


def selection(
    arguments: list[str],
    collected: int = 5,
    deselected: int = 0,
    uncollected: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "arguments": arguments,
        "collected": collected,
        "deselected": deselected,
        "collected_runs": collected,
        "deselected_runs": deselected,
        "uncollected": uncollected or [],
    }


@pytest.mark.parametrize(
    ("args", "whole", "expected"),
    [
        ([], True, selection([])),
        (["evals/"], True, selection(["evals/"])),
        # Given, but it deselects nothing: still the whole suite.
        (["--eval-defends", "AGENTS.md"], True, selection(["--eval-defends", "AGENTS.md"])),
        (["-m", "critical"], False, selection(["-m", "critical"], deselected=3)),
        (["-k", "case-03"], False, selection(["-k", "case-03"], deselected=4)),
        (["--eval-shard", "1/2"], False, selection(["--eval-shard", "1/2"], deselected=3)),
        (
            ["--deselect", "evals/case-04.yaml::case-04"],
            False,
            selection(["--deselect", "evals/case-04.yaml::case-04"], deselected=1),
        ),
        (
            ["evals/case-02.yaml"],
            False,
            selection(["evals/case-02.yaml"], 1, uncollected=["only evals/case-02.yaml of evals/"]),
        ),
        (
            ["evals/case-02.yaml::case-02"],
            False,
            selection(
                ["evals/case-02.yaml::case-02"],
                1,
                uncollected=["only evals/case-02.yaml::case-02 of evals/"],
            ),
        ),
    ],
)
def test_the_results_file_records_what_part_of_the_suite_ran(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    args: list[str],
    whole: bool,
    expected: dict[str, Any],
) -> None:
    make_suite.steered(FIVE, severities=CRITICAL)

    doc = saved(pytester, *args)

    assert doc["complete"] is True
    assert doc["complete_suite"] is whole
    assert doc["selection"] == expected
    results_line = next(line for line in doc["_out"].splitlines() if line.startswith("results:"))
    assert ("part of the suite" in results_line) is not whole, results_line


def test_the_results_line_says_which_part_ran(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite.steered(FIVE, severities=CRITICAL)

    doc = saved(pytester, "-m", "critical")

    assert (
        "results: run.json (part of the suite: 2 of 5 cases selected (-m critical))"
        in (doc["_out"])
    )


def test_a_run_stopped_early_is_not_the_whole_suite(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(FIVE)
    steer(root, "fail", "case-01")

    doc = saved(pytester, "-x")

    assert (doc["complete"], doc["complete_suite"]) == (False, False)
    assert doc["selection"]["arguments"] == ["-x"]


@pytest.mark.slow
def test_eval_paths_not_reached_and_ignored_directories_are_part_of_the_suite(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite.steered(["alpha"], ini="eval_paths = agent-evals\n")
    text = (pytester.path / "evals" / "alpha.yaml").read_text("utf-8")
    for path in ("agent-evals/beta.yaml", "evals/db/gamma.yaml"):
        name = Path(path).stem
        (pytester.path / path).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / path).write_text(text.replace("alpha", name), "utf-8")

    everything = saved(pytester)
    evals_only = saved(pytester, "evals/")
    ignored = saved(pytester, "--ignore", "evals/db")
    globbed = saved(pytester, "--ignore-glob", "*/db/*")

    assert everything["complete_suite"] is True
    assert everything["selection"]["collected"] == 3
    assert evals_only["complete_suite"] is False
    assert evals_only["selection"]["uncollected"] == [
        "agent-evals/ (eval_paths) is not among the paths"
    ]
    assert ignored["complete_suite"] is False
    assert ignored["selection"]["uncollected"] == ["evals/db ignored (--ignore)"]
    assert globbed["complete_suite"] is False
    assert globbed["selection"]["collected"] == 2
    assert globbed["selection"]["uncollected"] == ["*/db/* ignored (--ignore-glob)"]


def test_last_failed_narrows_the_suite(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> None:
    root = make_suite.steered(FIVE)
    steer(root, "fail", "case-02")
    pytester.runpytest("--eval-no-save")

    result = pytester.runpytest("--lf", "--eval-save", "lf.json")

    doc = json.loads((root / "lf.json").read_text("utf-8"))
    result.assert_outcomes(failed=1)
    assert doc["complete_suite"] is False
    assert "--lf" in doc["selection"]["arguments"]
    assert "--lf: only what failed last time" in doc["selection"]["uncollected"]


@pytest.mark.xdist
def test_under_xdist_the_workers_report_the_selection(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite.steered(FIVE, severities=CRITICAL)

    alone = saved(pytester, "-m", "critical", name="alone.json")
    workers = saved(pytester, "-n", "2", "-m", "critical", name="workers.json")
    whole = saved(pytester, "-n", "2", name="whole.json")

    assert workers["selection"] == alone["selection"] == selection(["-m", "critical"], 5, 3)
    assert workers["complete_suite"] is False
    assert whole["complete_suite"] is True
    assert whole["selection"] == selection([])


@pytest.mark.slow
def test_trend_marks_runs_of_part_of_the_suite_and_counts_their_cases(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_suite.steered(TEN, severities={"case-00": "advisory"})
    steer(root, "fail", "case-00")
    pytester.runpytest("-p", "no:cacheprovider")
    (root / "fail" / "case-00").unlink()
    pytester.runpytest("-p", "no:cacheprovider", "-k", "case-00")
    steer(root, "fail", "case-00")
    pytester.runpytest("-p", "no:cacheprovider")
    assert len(results_files(root)) == 3
    capsys.readouterr()

    status = cli.main(["trend", str(root / "evals" / "results")])
    out = capsys.readouterr().out

    assert status == 0
    rows = [re.split(r"\s{2,}", line) for line in out.splitlines() if line.startswith("20")]
    assert [row[1:] for row in rows] == [
        ["9/10", "90.0%", "0", "PASS", "whole"],
        ["1/1", "-", "0", "PASS", "part: 1 of 10 cases selected (-k case-00)"],
        ["9/10", "90.0%", "0", "PASS", "whole"],
    ]
    assert (
        "pass rates are of whole-suite runs only: 1 run of part of the suite or cut short "
        "(their cases count in the figures below)" in out
    )
    # Per case, the partial run counts: case-00 failed, passed, failed.
    flaky = next(line for line in out.splitlines() if line.startswith("case-00  "))
    assert flaky.split() == ["case-00", "1/3", "2", "100.0%"]


def advisory_suite(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> tuple[Path, Path]:
    """Ten cases, case-00 and case-01 advisory and case-00 failing: a whole run passes
    9 of 10 (90 %), the advisory cases alone 1 of 2. Returns the root and the baseline."""
    root = make_suite.steered(
        TEN,
        severities={"case-00": "advisory", "case-01": "advisory", "case-02": "critical"},
    )
    steer(root, "fail", "case-00")
    pytester.runpytest("-p", "no:cacheprovider", "--eval-save", "base.json")
    return root, root / "base.json"


@pytest.mark.slow
def test_the_baseline_gate_compares_a_partial_run_on_the_cases_both_ran(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root, base = advisory_suite(make_suite, pytester)

    advisory = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-m",
        "advisory or critical",
        "--eval-baseline",
        str(base),
        "--eval-save",
        "advisory.json",
    )
    one = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-no-save", "-k", "case-00", "--eval-baseline", str(base)
    )

    out = advisory.stdout.str()
    assert advisory.ret == 0, out
    # Of the three cases both ran, the critical one counts in the pass rate.
    assert (
        "baseline base.json: compared on the 3 cases both runs ran (this run is part of the "
        "suite); pass rate (critical and normal) 100.0% -> 100.0%; 0 regressed, 0 improved" in out
    )
    assert "eval gate: PASS" in out
    assert json.loads((root / "advisory.json").read_text())["baseline"]["compared_on"] == 3
    assert one.ret == 0, one.stdout.str()
    assert "compared on the 1 case both runs ran" in one.stdout.str()


def test_a_partial_run_that_regressed_is_still_blocked(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root, base = advisory_suite(make_suite, pytester)
    steer(root, "fail", "case-02")
    steer(root, "fail", "case-01")

    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--eval-no-save",
        "-m",
        "advisory or critical",
        "--eval-baseline",
        str(base),
        "-o",
        "eval_baseline_tolerance=100",
    )

    out = result.stdout.str()
    assert result.ret == 1
    assert "compared on the 3 cases both runs ran" in out
    assert "regressed since baseline (advisory, does not block): case-01" in out
    assert "regressed since baseline: case-02" in out
    assert "baseline: 1 case passed in the baseline and fails now: case-02)" in out


@pytest.mark.slow
def test_a_whole_run_against_a_partial_baseline_is_compared_on_its_cases(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(TEN)
    pytester.runpytest("-p", "no:cacheprovider", "-k", "case-00", "--eval-save", "one.json")
    steer(root, "fail", "case-05")

    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--eval-no-save",
        "--eval-baseline",
        "one.json",
        "-o",
        "eval_min_pass_rate=0.5",
        "-o",
        "eval_baseline_tolerance=0",
    )

    out = result.stdout.str()
    # The failing case-05 is not in the baseline: 100 % -> 100 % on case-00.
    assert "compared on the 1 case both runs ran (the baseline is part of the suite)" in out
    assert "pass rate (critical and normal) 100.0% -> 100.0%" in out
    assert "dropped" not in out


def test_compare_puts_a_partial_file_against_the_cases_both_ran(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root, base = advisory_suite(make_suite, pytester)
    pytester.runpytest("-p", "no:cacheprovider", "-m", "advisory", "--eval-save", "part.json")
    capsys.readouterr()

    status = cli.main(["compare", str(base), str(root / "part.json")])
    out = capsys.readouterr().out

    assert status == 0, out
    assert f"B: {root / 'part.json'} (" in out
    assert "part: 2 of 10 cases selected (-m advisory))" in out
    assert "every one of 2 cases both ran has the same outcome" in out
    assert "compared on the 2 cases both runs ran (B is part of the suite)" in out
    assert "not compared: 8 cases only one of them ran" in out
    # Advisory cases alone: no pass rate of critical and normal cases on either side.
    rate = next(line for line in out.splitlines() if line.startswith("pass rate"))
    assert rate.split() == ["pass", "rate", "(critical", "and", "normal)", "n/a", "n/a"]
    assert "case-05" not in out


@pytest.mark.slow
def test_merged_shards_are_the_whole_suite_only_when_they_cover_it(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_suite.steered(TEN, severities=CRITICAL)
    for k in (1, 2, 3):
        pytester.runpytest(
            "-p", "no:cacheprovider", f"--eval-shard={k}/3", "--eval-save", f"s{k}.json"
        )
        pytester.runpytest(
            "-p",
            "no:cacheprovider",
            "-m",
            "not critical",
            f"--eval-shard={k}/3",
            "--eval-save",
            f"m{k}.json",
        )
    shards = [str(root / f"s{k}.json") for k in (1, 2, 3)]
    narrowed = [str(root / f"m{k}.json") for k in (1, 2, 3)]
    capsys.readouterr()

    cli.main(["merge", *shards, "-o", str(root / "whole.json")])
    cli.main(["merge", *narrowed, "-o", str(root / "narrowed.json")])
    cli.main(["merge", *shards[:2], "-o", str(root / "missing.json")])
    capsys.readouterr()

    def doc(name: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((root / name).read_text("utf-8"))
        return data

    assert [doc(f"s{k}.json")["complete_suite"] for k in (1, 2, 3)] == [False] * 3
    assert doc("whole.json")["complete_suite"] is True
    assert doc("whole.json")["selection"]["deselected"] == 0
    assert doc("narrowed.json")["complete_suite"] is False
    assert doc("narrowed.json")["selection"]["deselected"] == 2
    assert doc("missing.json")["complete_suite"] is False


@pytest.mark.slow
def test_the_html_report_draws_whole_suite_runs_and_says_this_run_is_part(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite.steered(TEN)
    pytester.runpytest("-p", "no:cacheprovider")
    pytester.runpytest("-p", "no:cacheprovider", "-k", "case-03")
    pytester.runpytest("-p", "no:cacheprovider")

    pytester.runpytest("-p", "no:cacheprovider", "-k", "case-04", "--eval-html", "r.html")

    page = (pytester.path / "r.html").read_text("utf-8")
    assert page.count('<circle class="point"') == 2
    assert "2 runs of part of the suite" in page
    assert "Part of the suite: 1 of 10 cases selected (-k case-04)." in page


@pytest.mark.slow
def test_the_html_report_counts_cases_as_the_terminal_does(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(TEN, ini="eval_min_pass_rate = 0\n")
    for case_id in TEN[3:7]:
        steer(root, "fail", case_id)
    for case_id in TEN[7:]:
        steer(root, "crash", case_id)

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-html", "r.html")

    page = (pytester.path / "r.html").read_text("utf-8")
    assert "suite: 3/10 cases passed" in result.stdout.str()
    assert re.search(r'<th scope="col">suite<br><span class="score">3/10 cases', page)
