"""Every pytest run of a project that has the plugin installed imports it: what only
some runs need (the agent drivers, the HTML report, the baseline, the end of a session
that ran cases with its pins, the preflight, ``--eval-changed``'s git diff) is imported
by the runs that use it. ``benchmarks/imports.py`` measures what this saves."""

from __future__ import annotations

import ast

import pytest

from tests.helpers.suite import SuiteBuilder

#: Prints, as pytest ends, which of the modules below this session imported.
PROBE = """
import sys

WATCHED = {watched!r}


def pytest_unconfigure(config):
    print("imported:", sorted(m for m in WATCHED if m in sys.modules))
"""

DRIVERS = [f"pytest_evalcases.agents.{name}" for name in ("claude", "codex", "gemini", "command")]
ONLY_WHEN_USED = [
    *DRIVERS,
    "pytest_evalcases.agents.base",
    "pytest_evalcases.agents.preflight",
    "pytest_evalcases.containment",
    "pytest_evalcases.plugin.preflight",
    "pytest_evalcases.report.html",
    "pytest_evalcases.results.baseline",
    "pytest_evalcases.recording.proxy",
    "pytest_evalcases.session.changed",
    "pytest_evalcases.session.finish",
    "pytest_evalcases.session.pins",
]


def imported(result: pytest.RunResult) -> list[str]:
    (line,) = [line for line in result.stdout.lines if line.startswith("imported:")]
    names: list[str] = ast.literal_eval(line.partition(":")[2].strip())
    return names


@pytest.fixture
def project(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> None:
    """A project of normal tests beside an (empty) evals directory."""
    make_suite()
    pytester.makeconftest(PROBE.format(watched=ONLY_WHEN_USED))
    pytester.makepyfile(test_unit="def test_unit():\n    assert True\n")


@pytest.mark.usefixtures("project")
def test_a_session_without_eval_cases_imports_none_of_them(pytester: pytest.Pytester) -> None:
    # A subprocess: an in-process run shares this process's modules.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")

    result.assert_outcomes(passed=1)
    assert imported(result) == []


@pytest.mark.usefixtures("project")
def test_a_named_agent_imports_its_own_driver_only(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--eval-agent-command", "echo {prompt}"
    )

    result.assert_outcomes(passed=1)
    loaded = imported(result)
    assert "pytest_evalcases.agents.command" in loaded
    assert not [m for m in DRIVERS if m in loaded and not m.endswith(".command")]
    assert "pytest_evalcases.report.html" not in loaded
    assert "pytest_evalcases.results.baseline" not in loaded
