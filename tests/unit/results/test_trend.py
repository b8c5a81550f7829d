"""The trend over a results directory: red-first runs left out and counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.errors import UsageError
from pytest_evalcases.report import trend as report
from pytest_evalcases.results import trend, writer

from .records import STARTED, doc, run


def test_red_first_files_are_left_out_of_the_trend_and_counted(tmp_path: Path) -> None:
    for day, outcome, mode in (
        (1, "passed", "run"),
        (2, "failed", "red-first"),
        (3, "failed", "run"),
    ):
        written = doc([run("alpha", outcome)], started=STARTED.replace(day=day), mode=mode)
        writer.write(written, tmp_path / f"{day}.json")
    (tmp_path / "broken.json").write_text("{}", "utf-8")

    found = trend.history(tmp_path)
    computed = trend.compute(found.documents)

    assert [d.date[:10] for d in found.documents] == ["2026-12-01", "2026-12-03"]
    assert found.red_first == 1
    assert found.problems == [
        f"skipped {tmp_path / 'broken.json'}: not a results file: no `cases` list"
    ]
    assert [(c.name, c.outcomes, c.flips) for c in computed.cases] == [
        ("alpha", ["passed", "failed"], 1)
    ]
    out = report.lines(computed, len(found.documents), found.red_first)
    assert out[:2] == [
        "last 2 of 2 runs",
        "left out 1 red-first run (authoring runs under --eval-red-first, their outcomes inverted)",
    ]


def test_no_red_first_note_without_red_first_files(tmp_path: Path) -> None:
    writer.write(doc([run("alpha", "passed")]), tmp_path / "1.json")

    found = trend.history(tmp_path)

    assert found.red_first == 0
    assert report.lines(trend.compute(found.documents), 1)[:2] == ["last 1 of 1 runs", ""]


def test_a_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        trend.history(tmp_path / "nope")

    assert str(caught.value) == f"{tmp_path / 'nope'}: no such directory of results files"


def test_runs_that_graded_a_directory_are_left_out_of_the_wall_times(tmp_path: Path) -> None:
    records = [
        run("alpha", "passed", duration=30.0),
        run("beta", "passed", duration=0.004, graded_dir=True),
    ]
    writer.write(doc(records), tmp_path / "1.json")

    computed = trend.compute(trend.history(tmp_path).documents)

    assert computed.durations("passed") == [30.0]
