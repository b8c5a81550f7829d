"""The judge asked again about a stored run (run/reask.py): what it cannot rebuild as
the live run had it is a ``judge`` error naming the way out, never an answer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_evalcases.errors import RunError
from pytest_evalcases.recording.recorded import RecordedRun, RecordedSession
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.run.checks import default_registry
from pytest_evalcases.run.reask import Reasking, reask

CASE = """\
id: a
defends: AGENTS.md
prompt: Make the file
checks:
  - id: explains
    type: judge
    question: Does it?
    script: ["VERDICT: yes\\nREASON: it does"]
"""


def _session(tmp_path: Path, **fields: str) -> RecordedSession:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "a.yaml").write_text(CASE)
    record = RunRecord(
        "a", "evals/a.yaml", 0, "AGENTS.md", "critical", nodeid="evals/a.yaml::a", **fields
    )
    return RecordedSession(tmp_path / "out.json", {("a", "", 0): RecordedRun(record, None)})


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"variant": "new"}, "ran configuration variant 'new'.*use --stored"),
        ({"perturbation": "typo-3"}, "ran perturbation typo-3.*use --stored"),
        ({}, "was not recorded"),
    ],
    ids=["variant", "perturbation", "unrecorded"],
)
def test_a_run_that_cannot_be_rebuilt_is_a_judge_error(
    tmp_path: Path, fields: dict[str, str], said: str
) -> None:
    how = Reasking(rootdir=tmp_path, judge=None, registry=default_registry())

    with pytest.raises(RunError, match=said) as raised:
        reask(_session(tmp_path, **fields), "evals/a.yaml::a", "explains", how, "a")

    assert raised.value.kind == "judge"


def test_a_check_or_run_no_longer_there_is_a_judge_error(tmp_path: Path) -> None:
    how = Reasking(rootdir=tmp_path, judge=None, registry=default_registry())
    session = _session(tmp_path)

    with pytest.raises(RunError, match=re.escape("has no run evals/b.yaml::b")):
        reask(session, "evals/b.yaml::b", "explains", how, "b")
    with pytest.raises(RunError, match="case a has no judge check 'other' now"):
        reask(session, "evals/a.yaml::a", "other", how, "a")
