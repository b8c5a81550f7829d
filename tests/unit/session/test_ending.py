"""session/ending.py: how a run that ran ends its item, and what becomes of its
workspace (the sessions: tests/plugin/test_runs.py, test_kept_workspaces.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run.keep import KeepPlace
from pytest_evalcases.run.runner import RunReport
from pytest_evalcases.session.ending import ending
from pytest_evalcases.session.settings import Settings
from pytest_evalcases.session.state import EvalSession
from tests.unit.session.test_orchestration import planned


def _report(workspace: Path, passed: bool) -> RunReport:
    check = CheckRecord("answer", "file_exists", None, passed, "answer.txt is missing")
    return RunReport(checks=[check], workspace=workspace)


def test_a_passed_run_says_its_checks_and_its_workspace_goes(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # pytest's tmp_path_retention_policy other than "all": a passed run's goes.
    settings = dataclasses.replace(Settings(rootdir=tmp_path), keep_workspaces=False)

    end = ending(EvalSession(settings, agent=None), planned(tmp_path), _report(workspace, True))

    assert end.kind == "passed"
    assert "answer" in end.text
    assert not workspace.exists()


def test_a_failed_run_keeps_its_workspace_where_the_settings_say(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    kept = tmp_path / "kept"
    place = KeepPlace(root=kept, directory=kept / "r.workspaces", max_bytes=10**6)
    state = EvalSession(dataclasses.replace(Settings(rootdir=tmp_path), keep=place), agent=None)

    end = ending(state, planned(tmp_path), _report(workspace, passed=False))

    assert end.kind == "failed"
    assert end.line
    assert end.report.workspace is not None
    assert end.report.workspace.is_relative_to(kept)
    assert str(end.report.workspace) in end.text


def test_an_advisory_case_that_failed_is_an_xfail(tmp_path: Path) -> None:
    state = EvalSession(Settings(rootdir=tmp_path), agent=None)
    run = planned(tmp_path, "severity: advisory\n")

    end = ending(state, run, _report(tmp_path / "ws", passed=False))

    assert (end.kind, end.line) == ("xfailed", "")
