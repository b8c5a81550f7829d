"""The ``evalcases`` commands over results files: exit statuses and messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_evalcases import cli
from pytest_evalcases.results import writer as resultsfile

from ..results.records import STARTED, doc, run


def _save(path: Path, **kw: object) -> Path:
    records = kw.pop("records", [run("alpha", "passed", "main")])
    return resultsfile.write(doc(records, **kw), path)  # type: ignore[arg-type]


def test_compare_refuses_a_red_first_file_on_either_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    red = _save(tmp_path / "red.json", mode="red-first")
    plain = _save(tmp_path / "plain.json")

    as_baseline = cli.main(["compare", str(red), str(plain)])
    err = capsys.readouterr().err
    as_run = cli.main(["compare", str(plain), str(red)])
    err_run = capsys.readouterr().err

    assert as_baseline == 2
    assert err == (
        f"evalcases: {red}: a red-first results file (written under --eval-red-first) "
        "cannot be a baseline: its outcomes are inverted\n"
    )
    # Its inverted outcomes would read as regressions against any baseline.
    assert as_run == 2
    assert err_run == (
        f"evalcases: {red}: a red-first results file (written under --eval-red-first) "
        "cannot be compared: its outcomes are inverted\n"
    )


def test_merge_refuses_files_of_different_modes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    red = _save(tmp_path / "s1.json", mode="red-first", shard=(1, 2))
    plain = _save(tmp_path / "s2.json", shard=(2, 2))

    status = cli.main(["merge", str(red), str(plain)])

    assert status == 2
    assert capsys.readouterr().err == (
        f"evalcases: cannot merge results files of different modes: {red} (red-first), "
        f"{plain} (run)\n"
    )


def test_merge_writes_the_variants_in_the_order_of_the_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _save(
        tmp_path / "s1.json",
        records=[run("alpha", "failed", "pr"), run("alpha", "passed", "main")],
        order=["main", "pr"],
        shard=(1, 2),
    )
    second = _save(
        tmp_path / "s2.json",
        records=[run("beta", "passed", "pr"), run("beta", "passed", "main")],
        order=["main", "pr"],
        shard=(2, 2),
        started=STARTED.replace(minute=31),
    )

    status = cli.main(["merge", str(first), str(second), "-o", str(tmp_path / "m.json")])

    merged = json.loads((tmp_path / "m.json").read_text("utf-8"))
    assert status == 1
    assert [v["name"] for v in merged["variants"]] == ["main", "pr"]
    assert merged["comparisons"][0]["baseline"] == "main"
    assert merged["comparisons"][0]["regressed_cases"] == ["alpha"]
    assert merged["mode"] == "run"
    assert merged["date"] == "2026-12-01T09:30:00.000Z"
    assert capsys.readouterr().err == (
        "merged 2 files: 3/4 cases passed, eval gate: BLOCKED (pr: 1 normal case failed: alpha)\n"
    )


def test_trend_says_how_many_red_first_runs_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _save(tmp_path / "1.json", mode="red-first")

    only_red = cli.main(["trend", str(tmp_path)])
    out_red = capsys.readouterr().out
    _save(tmp_path / "2.json", started=STARTED.replace(day=2))
    status = cli.main(["trend", str(tmp_path)])
    out = capsys.readouterr().out

    assert only_red == 0
    assert out_red == (
        f"no results files in {tmp_path}\n"
        "left out 1 red-first run (authoring runs under --eval-red-first, their outcomes "
        "inverted)\n"
    )
    assert status == 0
    assert out.splitlines()[:3] == [
        "last 1 of 1 runs",
        "left out 1 red-first run (authoring runs under --eval-red-first, their outcomes inverted)",
        "",
    ]


def _day(directory: Path, n: int, passed: int, **kw: object) -> Path:
    records = [run(f"c{i}", "passed" if i < passed else "failed") for i in range(10)]
    started = STARTED.replace(day=n)
    return _save(directory / f"{n:02d}.json", records=records, started=started, **kw)


def test_trend_alert_exits_1_naming_the_rule_and_0_with_one_line_otherwise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for n, passed in ((1, 9), (2, 9), (3, 7)):
        _day(tmp_path, n, passed)

    quiet = cli.main(["trend", str(tmp_path), "--alert"])
    out_quiet = capsys.readouterr().out
    _day(tmp_path, 4, 7)
    fired = cli.main(["trend", str(tmp_path), "--alert"])
    out_fired = capsys.readouterr().out

    assert quiet == 0
    assert out_quiet.splitlines() == [
        "no drift: 1 series checked (pass rate within 10 points of the baseline's on the "
        "last 2 whole-suite runs, mean cost per case within 1.5x over the last 7 days)"
    ]
    assert fired == 1
    assert out_fired.splitlines() == [
        "drift (pass rate): agent unknown · model not reported: 70.0%, 70.0% on the last "
        "2 whole-suite runs (2026-12-03T09:30:00.000Z, 2026-12-04T09:30:00.000Z), each "
        "more than 10 points below the baseline's 90.0% (2026-12-01T09:30:00.000Z, first "
        "whole-suite run under this configuration)"
    ]


def test_trend_alert_against_a_baseline_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    results.mkdir()
    for n in (2, 3):
        _day(results, n, 8)
    baseline = _day(tmp_path, 1, 10)
    red = _save(tmp_path / "red.json", mode="red-first")

    assert cli.main(["trend", str(results), "--alert"]) == 0
    capsys.readouterr()
    status = cli.main(["trend", str(results), "--alert", "--baseline", str(baseline)])
    out = capsys.readouterr().out
    refused = cli.main(["trend", str(results), "--alert", "--baseline", str(red)])
    err = capsys.readouterr().err

    assert status == 1
    assert out.startswith("drift (pass rate): ")
    assert out.rstrip().endswith(
        "below the baseline's 100.0% (2026-12-01T09:30:00.000Z, the baseline file)"
    )
    assert refused == 2
    assert "a red-first results file" in err
    assert cli.main(["trend", str(results), "--baseline", str(baseline)]) == 2
    assert capsys.readouterr().err == (
        "evalcases: --baseline is what --alert compares with: give --alert or --html\n"
    )


def test_trend_html_writes_the_page_and_keeps_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results").mkdir()
    for n, passed in ((1, 9), (2, 7), (3, 7)):
        _day(tmp_path / "results", n, passed)
    page = tmp_path / "trend.html"

    status = cli.main(["trend", str(tmp_path / "results"), "--html", str(page)])
    out = capsys.readouterr().out

    # Without --alert the page shows the alert, and the exit status is the report's.
    assert status == 0
    assert out.startswith(f"trend page: {page}\nlast 3 of 3 runs\n")
    text = page.read_text("utf-8")
    assert text.count('<circle class="point"') == 3
    assert text.count('<circle class="alert"') == 2
    assert "Drift alert" in text
