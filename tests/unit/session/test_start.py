"""session/start.py: whether a session that may run no case still reads the plugin's
settings (the sessions: tests/plugin/test_lazy_imports.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.session.start import eval_option_given, sets_ini


def test_an_eval_option_given_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    assert eval_option_given(["-q", "--eval-agent=claude"])
    assert not eval_option_given(["-q", "tests"])
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x --eval-repeat 2")
    assert eval_option_given(["-q"])


def test_an_ini_line_or_an_override_that_sets_an_eval_value(tmp_path: Path) -> None:
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\naddopts = -q\n")
    assert not sets_ini([], ini)
    assert not sets_ini([], None)
    assert sets_ini(["eval_timeout=5"], None)
    ini.write_text("[pytest]\n  eval_timeout = 5\n")
    assert sets_ini([], ini)
    ini.write_bytes(b"\xff\xfe")
    assert sets_ini([], ini)
