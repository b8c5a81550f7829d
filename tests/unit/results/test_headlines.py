"""The lenient reader of results files' headlines, for the HTML report's trend chart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_evalcases.results import headlines


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), "utf-8")
    return path


def test_headlines_read_leniently_and_leave_red_first_files_out(tmp_path: Path) -> None:
    _write(tmp_path / "a.json", {"date": "2026-01-02", "pass_rate": 0.5, "verdict": "PASS"})
    _write(tmp_path / "b.json", {"date": "2026-01-01", "passed": 1, "total": 4})
    _write(tmp_path / "c.json", {"date": "2026-01-03", "pass_rate": 1.0, "mode": "red-first"})
    (tmp_path / "d.json").write_text("{not json", "utf-8")

    found = headlines.read_headlines(tmp_path)

    assert [(h.file, h.date, h.pass_rate, h.verdict) for h in found] == [
        ("b.json", "2026-01-01", 0.25, ""),
        ("a.json", "2026-01-02", 0.5, "PASS"),
    ]


def test_a_run_of_part_of_the_suite_is_read_from_its_counts(tmp_path: Path) -> None:
    # Its top-level counts are null (docs/results.md, "A trend with jq"): the headline
    # still knows it, to say the chart leaves it out.
    nulls = dict.fromkeys(("passed", "failed", "errors", "skipped", "total", "pass_rate"))
    real = {"passed": 1, "failed": 0, "errors": 0, "skipped": 0, "total": 1, "pass_rate": 1.0}
    _write(
        tmp_path / "part.json",
        {"date": "2026-01-01", "complete_suite": False, **nulls, "counts": real},
    )

    found = headlines.read_headlines(tmp_path)

    assert [(h.pass_rate, h.passed, h.total, h.complete_suite) for h in found] == [
        (1.0, 1, 1, False)
    ]
