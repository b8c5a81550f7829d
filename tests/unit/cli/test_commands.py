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
