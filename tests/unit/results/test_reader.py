"""The one reader of results files: a good file, each kind of bad file, a directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.results import headlines, reader, writer
from pytest_evalcases.results.document import SuiteSelection

from .records import STARTED, doc, run


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), "utf-8")
    return path


def _good() -> dict[str, Any]:
    return doc([run("alpha", "passed", "main"), run("beta", "failed", "main")]).to_dict()


def test_a_good_file_reads_into_the_typed_document(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.json", _good())

    loaded = reader.load(path)

    assert (loaded.date, loaded.mode, loaded.verdict) == (
        "2026-12-01T09:30:00.000Z",
        "run",
        "BLOCKED",
    )
    assert (loaded.counts.passed, loaded.counts.failed, loaded.counts.pass_rate) == (1, 1, 0.5)
    assert [(r.case_id, r.outcome) for r in loaded.cases] == [
        ("alpha", "passed"),
        ("beta", "failed"),
    ]
    assert [c.graded_runs for c in loaded.variants[0].cases] == [1, 1]


_RUN = '"file": "evals/a.yaml", "line": 1, "defends": "AGENTS.md", "severity": "normal"'


def test_a_file_with_only_a_cases_list_reads_with_defaults(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.json", {"cases": [run("alpha", "passed").to_dict()]})

    loaded = reader.load(path)

    assert (loaded.mode, loaded.complete, loaded.min_pass_rate, loaded.variants) == (
        "run",
        True,
        0.9,
        (),
    )
    assert loaded.cases[0].case_id == "alpha"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "r.json:1: not a results file: invalid JSON (Expecting property name"),
        ("[1, 2]", "r.json: not a results file: no `cases` list"),
        ('{"tests": []}', "r.json: not a results file: no `cases` list"),
        (
            '{"cases": [3]}',
            "r.json: not a results file: cases[0]: expected an object",
        ),
        (
            '{"cases": [{"id": "a"}]}',
            "r.json: not a results file: cases[0].outcome: missing",
        ),
        (
            f'{{"cases": [{{"id": "a", "outcome": "passed", {_RUN}}}, '
            f'{{"id": "b", "outcome": "won", {_RUN}}}]}}',
            "r.json: not a results file: cases[1].outcome: expected one of passed, failed, "
            "error, xfailed, skipped, got 'won'",
        ),
        (
            '{"cases": [{"id": "a", "outcome": "passed", "file": "evals/a.yaml"}]}',
            "r.json: not a results file: cases[0].line: missing",
        ),
        (
            f'{{"cases": [{{"id": "a", "outcome": "passed", {_RUN}, "tokens_in": "many"}}]}}',
            "r.json: not a results file: cases[0].tokens_in: expected a whole number, got 'many'",
        ),
        (
            f'{{"cases": [{{"id": "a", "outcome": "passed", {_RUN}, "recording": 5}}]}}',
            "r.json: not a results file: cases[0].recording: expected a string, got 5",
        ),
        (
            f'{{"cases": [{{"id": "a", "outcome": "passed", {_RUN}, "replay": "some"}}]}}',
            "r.json: not a results file: cases[0].replay: expected one of full, partial, live, "
            "diverged or null, got 'some'",
        ),
        (
            f'{{"cases": [{{"id": "a", "outcome": "passed", {_RUN}, "saved_tokens": 1.5}}]}}',
            "r.json: not a results file: cases[0].saved_tokens: expected a whole number, got 1.5",
        ),
        (
            f'{{"cases": [{{"id": "a", "outcome": "passed", {_RUN}, "recorded_tokens_out": []}}]}}',
            "r.json: not a results file: cases[0].recorded_tokens_out: expected a whole number,"
            " got []",
        ),
        (
            f'{{"cases": [{{"id": "a", "outcome": "passed", {_RUN}, "recorded_cost_usd": "$1"}}]}}',
            "r.json: not a results file: cases[0].recorded_cost_usd: expected a number",
        ),
        (
            '{"cases": [], "mode": "practice"}',
            "r.json: not a results file: mode: expected one of run, red-first, got 'practice'",
        ),
        (
            '{"cases": [], "variants": [{"name": "main", "cases": [{"graded": "2"}]}]}',
            "r.json: not a results file: variants[0].cases[0].graded: expected a whole "
            "number, got '2'",
        ),
        (
            '{"cases": [], "date": 20261201}',
            "r.json: not a results file: date: expected a string, got 20261201",
        ),
    ],
)
def test_a_malformed_file_names_the_file_and_the_field(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "r.json"
    path.write_text(content, "utf-8")

    with pytest.raises(reader.ResultsFileError) as caught:
        reader.load(path)

    assert str(caught.value).startswith(str(tmp_path / message))
    assert "Traceback" not in str(caught.value)


def test_a_missing_or_binary_file_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe")

    with pytest.raises(reader.ResultsFileError) as missing:
        reader.load(tmp_path / "nowhere.json")
    with pytest.raises(reader.ResultsFileError) as binary:
        reader.load(tmp_path / "bin.json")

    assert str(missing.value) == (
        f"{tmp_path / 'nowhere.json'}: cannot read results file: No such file or directory"
    )
    assert str(binary.value) == f"{tmp_path / 'bin.json'}: cannot read results file: not UTF-8 text"


def test_a_directory_reads_oldest_first_and_reports_the_broken_file(tmp_path: Path) -> None:
    newer = doc([run("alpha", "failed")], started=STARTED.replace(day=2)).to_dict()
    older = doc([run("alpha", "passed")]).to_dict()
    _write(tmp_path / "a.json", newer)
    _write(tmp_path / "b.json", older)
    (tmp_path / "c.json").write_text("{not json", "utf-8")
    (tmp_path / "notes.txt").write_text("not a results file", "utf-8")

    found = reader.read_dir(tmp_path)

    assert [f.path.name for f in found.files] == ["b.json", "a.json"]
    assert [d.date for d in found.documents] == [
        "2026-12-01T09:30:00.000Z",
        "2026-12-02T09:30:00.000Z",
    ]
    assert found.problems == [
        f"{tmp_path / 'c.json'}:1: not a results file: invalid JSON "
        "(Expecting property name enclosed in double quotes)"
    ]
    assert reader.read_dir(tmp_path / "missing").files == []


def test_a_red_first_file_is_refused_as_a_baseline(tmp_path: Path) -> None:
    path = _write(tmp_path / "red.json", doc([run("alpha", "failed")], mode="red-first").to_dict())

    assert reader.load(path).is_red_first
    with pytest.raises(reader.ResultsFileError) as caught:
        reader.load_baseline(path)

    assert str(caught.value) == (
        f"{path}: a red-first results file (written under --eval-red-first) cannot be a "
        "baseline: its outcomes are inverted"
    )


def test_the_selection_reads_back_and_older_files_get_complete_suite_from_complete(
    tmp_path: Path,
) -> None:
    part = SuiteSelection(("-m", "critical"), 10, 7, 10, 7, ())
    written = _write(
        tmp_path / "part.json", doc([run("alpha", "passed")], selection=part).to_dict()
    )
    old_whole = _write(tmp_path / "old.json", {"cases": [], "complete": True})
    old_cut = _write(tmp_path / "cut.json", {"cases": [], "complete": False})
    old_shard = _write(tmp_path / "shard.json", {"cases": [], "shard": "1/2"})

    loaded = reader.load(written)

    assert (loaded.complete_suite, loaded.selection) == (False, part)
    assert [reader.load(p).complete_suite for p in (old_whole, old_cut, old_shard)] == [
        True,
        False,
        False,
    ]
    assert reader.load(old_whole).selection is None
    bad = _write(tmp_path / "bad.json", {"cases": [], "selection": {"collected": "ten"}})
    with pytest.raises(reader.ResultsFileError, match=r"selection\.collected: expected"):
        reader.load(bad)


def test_a_file_nested_deeper_than_the_limit_is_refused_before_it_is_walked(
    tmp_path: Path,
) -> None:
    """JSON the parser reads (65 levels), nested deeper than any results file: refused,
    as a file too deep for the parser is, so that no later walk of it recurses."""
    data = _good()
    nested: Any = "leaf"
    # The document and its pins are two levels: 64 in all.
    for _ in range(reader.MAX_DEPTH - 2):
        nested = [nested]
    data["pins"]["nested"] = nested
    path = _write(tmp_path / "r.json", data)
    too_deep = _write(tmp_path / "s.json", data | {"pins": {"nested": [nested]}})

    assert reader.load(path).pins["nested"] == nested
    with pytest.raises(reader.ResultsFileError) as caught:
        reader.load(too_deep)

    assert str(caught.value) == f"{too_deep}: not a results file: nested more than 64 levels deep"


def test_a_written_results_file_nests_well_below_the_limit(tmp_path: Path) -> None:
    path = writer.write(doc([run("alpha", "passed", "main")]), tmp_path / "r.json")

    assert reader._depth(json.loads(path.read_text("utf-8"))) < 10


@pytest.mark.parametrize("version", [99, 0, "1", True])
def test_an_unknown_format_version_is_refused_everywhere(tmp_path: Path, version: Any) -> None:
    path = _write(tmp_path / "r.json", _good() | {"format": version})
    (tmp_path / "lenient").mkdir()
    headline = {"date": "2026-01-01", "pass_rate": 0.5, "format": version}
    _write(tmp_path / "lenient" / "s.json", headline)

    with pytest.raises(reader.ResultsFileError) as caught:
        reader.load(path)

    assert str(caught.value) == (
        f"{path}: results file format {version!r} is not known: this version of "
        "pytest-evalcases reads format 1 (a newer version may have written it)"
    )
    assert reader.read_dir(tmp_path).problems == [str(caught.value)]
    assert headlines.read_headlines(tmp_path / "lenient") == []
