"""Fixtures of the whole suite: the one suite builder and the fake ``claude`` CLI; the
marks that keep the default developer run (``pytest -m "not slow"``) short."""

from __future__ import annotations

import os
import re
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

#: The marks whose tests the default developer run (``pytest -m "not slow"``, the README's
#: contributing part) leaves to CI: each of these tests is ``slow`` too. ``.ci/run`` runs
#: every test.
SLOW_MARKS = ("real_cli", "xdist")
#: The options that start pytest-xdist workers in a pytester session: ``-n 2``, ``-n2``,
#: ``--numprocesses=2``, ``--tx popen``.
WORKER_OPTIONS = re.compile(r"-n|-n\S+|--numprocesses(=.*)?|--tx(=.*)?")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` in this suite: twice the cores, at most four more. A fifth of the
    suite's time is spent waiting (agents that sleep until a timeout or a signal, the
    real CLIs' start-up and retries, interrupted sessions winding down): with one worker
    a core, the cores idle through it. Measured on 2 cores: 572 s with 2 workers, 476 s
    with 4."""
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:
        cores = os.cpu_count() or 1
    return min(2 * cores, cores + 4)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        # A case run serially and under xdist is one test parametrized with an "xdist" id.
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "xdist" in callspec.id.split("-"):
            item.add_marker(pytest.mark.xdist)
        if any(item.get_closest_marker(name) for name in SLOW_MARKS):
            item.add_marker(pytest.mark.slow)


def starts_workers(args: tuple[Any, ...]) -> bool:
    """Whether the pytest command line ``args`` starts xdist workers."""
    return any(WORKER_OPTIONS.fullmatch(str(arg)) for arg in args)


@pytest.fixture
def pytester(pytester: pytest.Pytester, request: pytest.FixtureRequest) -> pytest.Pytester:
    """pytest's ``pytester``, refusing to start xdist workers in a test not marked
    ``xdist``: the mark is what keeps those sessions out of the default developer run."""
    if request.node.get_closest_marker("xdist") is not None:
        return pytester
    for name in ("runpytest", "runpytest_inprocess", "runpytest_subprocess", "inline_run"):
        setattr(pytester, name, _without_workers(getattr(pytester, name), request.node.nodeid))
    return pytester


def _without_workers(run: Callable[..., Any], nodeid: str) -> Callable[..., Any]:
    def checked(*args: Any, **kwargs: Any) -> Any:
        if starts_workers(args):
            pytest.fail(f"{nodeid} runs pytest under xdist: mark it xdist (tests/conftest.py)")
        return run(*args, **kwargs)

    return checked


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
