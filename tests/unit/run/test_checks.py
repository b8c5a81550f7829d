"""Check evaluators, called directly on real workspaces."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.agents.base import ToolCall
from pytest_evalcases.cases.registry import CheckContext
from pytest_evalcases.errors import PathEscapeError, RunError
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run.checks import default_registry

REGISTRY = default_registry()


def evaluate(
    check: dict[str, Any],
    workspace: Path,
    *,
    output: str | None = "",
    tools: tuple[ToolCall, ...] | None = None,
    fixture: Path | None = None,
    tool_inputs: bool = True,
) -> CheckRecord:
    model = REGISTRY.check_adapter.validate_python(check)
    ctx = CheckContext(
        workspace=workspace,
        fixture=fixture,
        output=output,
        tool_calls=tools,
        env=dict(os.environ),
        tool_inputs=tool_inputs,
    )
    return REGISTRY.evaluate(0, model, ctx)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src/pkg").mkdir(parents=True)
    (root / "src/pkg/service.py").write_text("import os\n\nclass Service:\n    pass\n")
    (root / "src/pkg/util.py").write_text("def helper():\n    return 1\n")
    (root / "README.md").write_text("# Project\n")
    return root


def test_output_patterns_are_multiline_and_accept_inline_flags(ws: Path) -> None:
    answer = "Committed.\nfix(auth): token expiry\nCo-Authored-By: Claude"
    assert evaluate(
        {"type": "output_matches", "pattern": "^fix\\(auth\\)"}, ws, output=answer
    ).passed
    result = evaluate(
        {"type": "output_not_matches", "pattern": "(?i)co-authored-by:\\s*claude"},
        ws,
        output=answer,
    )
    assert not result.passed
    assert result.id == "output_not_matches-0"
    assert "matched the final answer at line 3: 'Co-Authored-By: Claude'" in result.message


def test_output_check_without_output_is_an_error(ws: Path) -> None:
    with pytest.raises(RunError, match="no final answer"):
        evaluate({"type": "output_not_matches", "pattern": "x"}, ws, output=None)


def test_file_exists_and_absent_with_globs(ws: Path) -> None:
    assert evaluate({"type": "file_exists", "path": "src/**/*.py"}, ws).passed
    assert not evaluate({"type": "file_exists", "path": "tests/*.py"}, ws).passed
    absent = evaluate({"type": "file_absent", "path": "src/pkg/*.py"}, ws)
    assert not absent.passed
    assert "src/pkg/service.py" in absent.message
    assert evaluate({"type": "file_absent", "path": ".claude/**"}, ws).passed
    assert not evaluate({"type": "file_exists", "path": "src"}, ws).passed  # a directory
    assert evaluate({"type": "directory_exists", "path": "src/pkg"}, ws).passed
    assert not evaluate({"type": "directory_exists", "path": "README.md"}, ws).passed


def test_file_matches_and_aliases(ws: Path) -> None:
    assert evaluate(
        {"type": "file_matches", "path": "src/pkg/service.py", "pattern": "^class "}, ws
    ).passed
    assert evaluate(
        {"type": "file_contains", "file": "src/pkg/service.py", "pattern": "^class "}, ws
    ).passed
    assert evaluate(
        {"type": "file_contains", "path": "src/pkg/service.py", "pattern": "^class "}, ws
    ).passed
    miss = evaluate({"type": "file_matches", "path": "src/pkg/util.py", "pattern": "^class "}, ws)
    assert not miss.passed
    assert miss.message == "src/pkg/util.py: pattern '^class ' not found"
    bad = evaluate(
        {"type": "file_not_contains", "file": "src/pkg/service.py", "pattern": "import os"}, ws
    )
    assert not bad.passed
    assert bad.message == "src/pkg/service.py:1: pattern 'import os' must not match: 'import os'"


@pytest.mark.parametrize("type_", ["file_matches", "file_not_matches"])
def test_missing_file_fails_with_not_found(ws: Path, type_: str) -> None:
    result = evaluate({"type": type_, "path": "nope.py", "pattern": "x"}, ws)
    assert not result.passed
    assert "not found" in result.message


def test_symlink_out_of_the_workspace_is_an_error_not_read(ws: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    (ws / "link.txt").symlink_to(secret)
    with pytest.raises(PathEscapeError, match="resolves outside the workspace"):
        evaluate({"type": "file_matches", "path": "link.txt", "pattern": "password"}, ws)
    with pytest.raises(PathEscapeError):
        evaluate({"type": "file_exists", "path": "*.txt"}, ws)


def test_file_unchanged_compares_with_the_fixture(ws: Path, tmp_path: Path) -> None:
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    (fixture / "README.md").write_text("# Project\n")
    (fixture / "gone.md").write_text("x")
    check = {"type": "file_unchanged", "path": "README.md"}
    assert evaluate(check, ws, fixture=fixture).passed
    (ws / "README.md").write_text("# Project, edited\n")
    changed = evaluate(check, ws, fixture=fixture)
    assert not changed.passed
    assert "changed from the fixture" in changed.message
    deleted = evaluate({"type": "file_unchanged", "path": "gone.md"}, ws, fixture=fixture)
    assert "deleted" in deleted.message
    with pytest.raises(RunError, match="has no such file"):
        evaluate({"type": "file_unchanged", "path": "src/pkg/util.py"}, ws, fixture=fixture)


def test_commands_run_in_the_workspace(ws: Path) -> None:
    assert evaluate({"type": "command_succeeds", "command": "test -f README.md"}, ws).passed
    failed = evaluate({"type": "command_succeeds", "command": "echo boom >&2; exit 4"}, ws)
    assert not failed.passed
    assert "exit status 4" in failed.message
    assert "boom" in failed.message
    assert evaluate({"type": "command_fails", "command": "grep -rq TODO src"}, ws).passed
    assert not evaluate({"type": "command_fails", "command": "true"}, ws).passed
    slow = evaluate({"type": "command_succeeds", "command": "sleep 5", "timeout": 0.3}, ws)
    assert not slow.passed
    assert "timed out" in slow.message


CALLS = (
    ToolCall(name="Bash", kind="shell", input="grep -rn TODO src/"),
    ToolCall(name="Read", kind="read", input='{"file_path": "src/app.py"}'),
)


def test_tool_checks_match_names_kinds_and_inputs(ws: Path) -> None:
    assert evaluate({"type": "tool_called", "tool": "Read"}, ws, tools=CALLS).passed
    assert evaluate(
        {"type": "tool_called", "tool": "shell", "input": "^grep"}, ws, tools=CALLS
    ).passed
    # `tool` is searched like every pattern (docs/case-format.md, `tool_called`); anchors
    # make it exact.
    assert evaluate({"type": "tool_called", "tool": "Bas"}, ws, tools=CALLS).passed
    assert not evaluate({"type": "tool_called", "tool": "^Bas$"}, ws, tools=CALLS).passed
    assert not evaluate({"type": "tool_called", "tool": "(?i)^write"}, ws, tools=CALLS).passed
    result = evaluate(
        {"type": "tool_not_called", "tool": "shell", "input": "grep -r"}, ws, tools=CALLS
    )
    assert not result.passed
    assert result.message.endswith("call Bash: 'grep -rn TODO src/'")
    assert evaluate({"type": "tool_not_called", "tool": "web"}, ws, tools=CALLS).passed


def test_tool_checks_without_transcript_are_errors(ws: Path) -> None:
    with pytest.raises(RunError, match="needs a transcript"):
        evaluate({"type": "tool_not_called", "tool": "shell"}, ws, tools=None)
    with pytest.raises(RunError, match="needs tool inputs"):
        evaluate(
            {"type": "tool_called", "tool": "shell", "input": "rg"},
            ws,
            tools=CALLS,
            tool_inputs=False,
        )
