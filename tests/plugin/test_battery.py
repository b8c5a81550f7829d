"""The starter battery under example_cases/battery: lint-clean, collects every case, and
no case passes when the agent does nothing (none is vacuous)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_evalcases.authoring import lint
from pytest_evalcases.cases.loading import load_case_file
from pytest_evalcases.cases.rootdir import defends_root
from pytest_evalcases.run.checks import default_registry

BATTERY = Path(__file__).resolve().parents[2] / "example_cases" / "battery"
GROUPS = {
    "attribution",
    "architecture",
    "style",
    "tooling",
    "migrations",
    "testing",
    "security",
    "stack",
}


def battery_cases() -> list[Path]:
    return sorted(p for p in (BATTERY / "evals").rglob("*.yaml") if "fixtures" not in p.parts)


def test_battery_is_lint_clean_and_large_enough() -> None:
    files = lint.discover([BATTERY])

    findings = lint.lint_files(files, defends_root(BATTERY))

    assert [f.format(BATTERY) for f in findings] == []
    assert len(files) >= 24
    assert {f.path.parent.name for f in files} == GROUPS


def test_every_example_suite_is_lint_clean_from_the_repository_root() -> None:
    # As the README has a user run it: each suite's `defends` resolve in its own project.
    out = subprocess.run(
        [sys.executable, "-m", "pytest_evalcases.cli.main", "lint", "example_cases/"],
        cwd=BATTERY.parent.parent,
        capture_output=True,
        text=True,
        check=False,
    )

    assert (out.returncode, out.stdout.strip()) == (0, "")
    assert out.stderr.strip().endswith(" case files checked: 0 errors, 0 warnings")


def test_every_case_guards_its_rule() -> None:
    registry = default_registry()
    for path in battery_cases():
        (case,) = load_case_file(path, BATTERY / "evals", registry)
        assert (BATTERY / case.defends).exists(), path
        assert case.fixture is not None, path
        assert case.prompt, path
        assert not case.bare, path  # the overlaid configuration must be discovered
        assert any(c.type in lint.NEGATIVE_CHECKS for c in case.checks), path
        if path.parent.name == "stack":
            assert case.severity == "advisory", path
    assert not list((BATTERY / "evals" / "fixtures").rglob(".git"))


def copy_battery(pytester: pytest.Pytester) -> Path:
    dest = pytester.path / "battery"
    shutil.copytree(BATTERY, dest, ignore=shutil.ignore_patterns("results", "__pycache__"))
    return dest


def test_collect_only_lists_every_case(pytester: pytest.Pytester) -> None:
    copy_battery(pytester)

    result = pytester.runpytest("battery", "--collect-only", "-q", "-p", "no:cacheprovider")

    listed = [line for line in result.stdout.lines if "::" in line]
    assert len(listed) == len(battery_cases())
    assert {line.rsplit("::", 1)[1] for line in listed} == {p.stem for p in battery_cases()}
    assert result.ret == 0
    assert "error" not in result.stdout.str().lower()


@pytest.mark.xdist
@pytest.mark.slow
def test_no_case_passes_when_the_agent_does_nothing(pytester: pytest.Pytester) -> None:
    """Setups work (no setup error) and every case is red without the agent's work;
    tool checks need a transcript, which a plain command agent does not give: they are
    errors before the agent runs."""
    copy_battery(pytester)
    noop = f"{sys.executable} -c pass"

    result = pytester.runpytest(
        "battery",
        "--eval-agent-command",
        noop,
        "--eval-config",
        "current=.",
        "--eval-no-save",
        "--eval-red-first",
        "-n",
        "2",
        "-p",
        "no:cacheprovider",
    )

    out = result.stdout.str()
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0, out  # under red-first: nothing passes at first
    assert "setup failed" not in out
    tool_cases = sum("tool_not_called" in p.read_text() for p in battery_cases())
    assert outcomes.get("errors", outcomes.get("error", 0)) == tool_cases
    # Refused before they ran (docs/trajectories.md): the no-op agent shows no tool calls.
    assert "tool_not_called read(s) the agent's transcript, and agent 'command' shows none" in out
    assert outcomes["passed"] == len(battery_cases()) - tool_cases
