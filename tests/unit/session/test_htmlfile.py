"""session/htmlfile.py: the session's HTML report and the line that says where it is
(the sessions: tests/plugin/test_html_report.py)."""

from __future__ import annotations

from pathlib import Path

from pytest_evalcases.session.htmlfile import write
from pytest_evalcases.session.settings import Settings
from pytest_evalcases.session.state import EvalSession
from tests.helpers.results import rec


def test_the_report_is_written_and_the_line_says_where(tmp_path: Path) -> None:
    session = EvalSession(Settings(rootdir=tmp_path), agent=None)
    session.records.append(rec("a", "passed"))

    line = write(session, tmp_path / "report.html", "eval gate: demo")

    assert line == f"html report: {tmp_path / 'report.html'}"
    assert "eval gate: demo" in (tmp_path / "report.html").read_text()


def test_a_report_that_cannot_be_written_says_why(tmp_path: Path) -> None:
    session = EvalSession(Settings(rootdir=tmp_path), agent=None)
    (tmp_path / "file").write_text("")

    line = write(session, tmp_path / "file" / "report.html", "t")

    assert line.startswith(f"html report not written: {tmp_path / 'file' / 'report.html'}: ")
