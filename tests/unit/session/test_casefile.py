"""session/casefile.py: a collected case file's cases, loaded once, and the duplicate
id a later file has (the sessions: tests/plugin/test_collection.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.session.casefile import CaseFileCases
from pytest_evalcases.session.settings import Settings
from pytest_evalcases.session.state import EvalSession

CASE = "id: {id}\ndefends: AGENTS.md\nprompt: hello\nchecks: [{{type: file_exists, path: a}}]\n"


def _file(evals: Path, name: str, case_id: str) -> CaseFileCases:
    path = evals / name
    path.write_text(CASE.format(id=case_id))
    return CaseFileCases(path, evals)


def test_the_first_file_keeps_an_id_and_a_later_one_is_the_error(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    evals.mkdir()
    session = EvalSession(Settings(rootdir=tmp_path), agent=None)
    first, second = _file(evals, "a.yaml", "same"), _file(evals, "b.yaml", "same")
    for found in (first, second):
        (entry,) = found.entries(session)
        session.ids.setdefault(entry.id, {}).setdefault(found.path, entry.line + 1)

    assert first.case(session, "same", tmp_path).id == "same"
    with pytest.raises(CaseFileError, match=r"duplicate id 'same': the case at evals/a.yaml:1"):
        second.case(session, "same", tmp_path)


def test_a_case_gone_from_its_file_after_collection_says_so(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    evals.mkdir()
    session = EvalSession(Settings(rootdir=tmp_path), agent=None)
    found = _file(evals, "a.yaml", "here")

    with pytest.raises(CaseFileError, match="no longer in this file"):
        found.case(session, "gone", tmp_path)
