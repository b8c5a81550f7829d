"""Fixtures of the whole suite: the one suite builder and the fake ``claude`` CLI."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.results import install_fake_claude
from tests.helpers.suite import SuiteBuilder

# The fake CLIs in tests/fake_agents start with ``#!/usr/bin/env python3``: let that be
# the interpreter running the tests (a venv's starts in a quarter of the time a system
# Python with site-wide .pth hooks may take, and it is the one whose packages we test).
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


@pytest.fixture
def make_suite(pytester: pytest.Pytester) -> SuiteBuilder:
    """Write an eval suite (agent script, cases, fixtures, variants, ini) into the
    pytester directory; see :class:`~tests.helpers.suite.SuiteBuilder`."""
    return SuiteBuilder(pytester)


@pytest.fixture
def fake_claude(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """``fake_claude(**state)`` puts a fake ``claude`` first on PATH and returns its state
    file (rewrite it to steer the version, model, tokens, cost and failing cases)."""

    def install(**state: Any) -> Path:
        return install_fake_claude(pytester.path, monkeypatch, **state)

    return install
