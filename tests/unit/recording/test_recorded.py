"""The runs of a stored results file, found by case, variant and repetition."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_evalcases.recording.recorded import load_session, newest_results_file
from pytest_evalcases.results.reader import ResultsFileError


def _results(path: Path, date: str, cases: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"date": date, "cases": cases}))
    return path


def _case(
    case_id: str, variant: str = "", repetition: int = 0, **extra: object
) -> dict[str, object]:
    return {
        "id": case_id,
        "file": f"evals/{case_id}.json",
        "line": 0,
        "defends": "AGENTS.md",
        "severity": "normal",
        "variant": variant,
        "repetition": repetition,
        "outcome": "passed",
        **extra,
    }


def test_runs_are_found_by_case_variant_and_repetition(tmp_path: Path) -> None:
    path = _results(
        tmp_path / "r" / "s.json",
        "2026-12-01T09:00:00Z",
        [
            _case("a", recording="s.runs/a.r0"),
            _case("a", repetition=1, recording="s.runs/a.r1"),
            _case("a", variant="v", recording=None),
            {**_case("broken"), "kind": "file", "outcome": "error"},
        ],
    )
    session = load_session(path)

    first = session.find("a", "", 0)
    assert first is not None
    assert first.directory == tmp_path / "r" / "s.runs" / "a.r0"
    second = session.find("a", "", 1)
    assert second is not None
    assert second.directory == tmp_path / "r" / "s.runs" / "a.r1"
    unrecorded = session.find("a", "v", 0)
    assert unrecorded is not None
    assert unrecorded.directory is None
    assert session.find("a", "", 2) is None
    assert session.find("broken", "", 0) is None


def test_the_newest_results_file_is_the_latest_date_not_the_latest_name(tmp_path: Path) -> None:
    _results(tmp_path / "zzz-old.json", "2026-11-01T09:00:00Z", [_case("a")])
    newest = _results(tmp_path / "aaa-new.json", "2026-12-01T09:00:00Z", [_case("a")])
    (tmp_path / "torn.json").write_text("{")

    assert newest_results_file(tmp_path) == newest


def test_no_results_file_to_replay_from_says_so(tmp_path: Path) -> None:
    with pytest.raises(ResultsFileError, match="no results file to replay from"):
        newest_results_file(tmp_path / "missing")
