"""The check registry: registering types, replacing a built-in, the case model."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from pydantic import ValidationError

from pytest_evalcases.cases import fields, schema
from pytest_evalcases.cases.registry import (
    CheckContext,
    CheckRegistry,
    Outcome,
    check_id,
)
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run.checks import default_registry


class MaxLines(schema.CheckModel):
    """A third-party check type."""

    type: Literal["max_lines"]
    path: fields.WorkspacePath
    limit: int


class LoudOutput(schema.CheckModel):
    """A replacement for the built-in ``output_matches``."""

    type: Literal["output_matches"]
    pattern: str


def _max_lines(check: MaxLines, ctx: CheckContext) -> Outcome:
    count = len((ctx.workspace / check.path).read_text().splitlines())
    return Outcome(count <= check.limit, f"{check.path}: {count} lines")


def _ctx(tmp_path: Path) -> CheckContext:
    return CheckContext(workspace=tmp_path, fixture=None, output="", tool_calls=None, env={})


CASE = {"id": "a", "defends": "rules/a.md"}


def test_register_adds_a_type_by_its_literal_name() -> None:
    registry = CheckRegistry()
    registry.register(MaxLines, _max_lines)

    assert registry.names == ["max_lines"]
    assert registry.models() == (MaxLines,)
    assert registry.builtin == frozenset()


def test_a_model_without_a_single_literal_type_is_refused() -> None:
    class Untyped(schema.CheckModel):
        pass

    with pytest.raises(TypeError, match=r"^Untyped.type must be a Literal of one string$"):
        CheckRegistry().register(Untyped, _max_lines)


def test_the_default_registry_has_the_builtin_types() -> None:
    registry = default_registry()

    assert registry.names == [
        "command_fails",
        "command_succeeds",
        "directory_exists",
        "file_absent",
        "file_contains",
        "file_exists",
        "file_matches",
        "file_not_contains",
        "file_not_matches",
        "file_unchanged",
        "hook_fired",
        "hook_not_fired",
        "judge",
        "mcp_called",
        "mcp_not_called",
        "output_matches",
        "output_not_matches",
        "request_matches",
        "request_not_matches",
        "skill_not_used",
        "skill_used",
        "tool_blocked",
        "tool_called",
        "tool_not_blocked",
        "tool_not_called",
    ]
    assert registry.builtin == frozenset(registry.names)


def test_a_replaced_builtin_is_no_longer_builtin_and_validates_with_its_new_model() -> None:
    registry = default_registry()
    registry.register(LoudOutput, lambda check, ctx: Outcome(True, "ok"))

    assert "output_matches" in registry.names
    assert "output_matches" not in registry.builtin
    assert "output_not_matches" in registry.builtin
    check = registry.check_adapter.validate_python({"type": "output_matches", "pattern": "("})
    # The built-in model would refuse the bad regex; the replacement does not compile it.
    assert type(check) is LoudOutput


def test_the_case_model_accepts_every_registered_type(tmp_path: Path) -> None:
    registry = default_registry()
    before = registry.case_model
    registry.register(MaxLines, _max_lines)

    case = registry.case_model.model_validate(
        {**CASE, "checks": [{"type": "max_lines", "path": "a.txt", "limit": 2}]}
    )

    assert registry.case_model is not before  # rebuilt after the registration
    assert case.checks == [MaxLines(type="max_lines", path="a.txt", limit=2)]  # type: ignore[attr-defined]
    with pytest.raises(ValidationError):
        before.model_validate({**CASE, "checks": [{"type": "max_lines", "path": "a", "limit": 2}]})


def test_the_case_model_needs_at_least_one_check() -> None:
    with pytest.raises(ValidationError) as info:
        default_registry().case_model.model_validate({**CASE, "checks": []})

    assert [e["type"] for e in info.value.errors()] == ["too_short"]


def test_a_registry_of_one_type_validates_it_without_a_union() -> None:
    registry = CheckRegistry()
    registry.register(MaxLines, _max_lines)

    check = registry.check_adapter.validate_python({"type": "max_lines", "path": "a", "limit": 1})

    assert check == MaxLines(type="max_lines", path="a", limit=1)


def test_evaluate_runs_the_evaluator_and_names_the_check(tmp_path: Path) -> None:
    registry = CheckRegistry()
    registry.register(MaxLines, _max_lines)
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    check = MaxLines(type="max_lines", path="a.txt", limit=2, description="short")

    result = registry.evaluate(4, check, _ctx(tmp_path))

    assert result == CheckRecord(
        id="max_lines-4",
        type="max_lines",
        description="short",
        passed=False,
        message="a.txt: 3 lines",
    )
    assert result.to_dict() == {
        "id": "max_lines-4",
        "type": "max_lines",
        "description": "short",
        "passed": False,
        "message": "a.txt: 3 lines",
    }


def test_check_id_prefers_the_checks_own_id() -> None:
    assert check_id(MaxLines(type="max_lines", path="a", limit=1, id="short"), 3) == "short"
    assert check_id(MaxLines(type="max_lines", path="a", limit=1), 3) == "max_lines-3"


def test_the_documented_imports_are_the_registry_names() -> None:
    from pytest_evalcases import checks
    from pytest_evalcases import schema as public_schema
    from pytest_evalcases.run import checks as run_checks

    assert checks.CheckRegistry is CheckRegistry
    assert checks.CheckContext is CheckContext
    assert checks.Outcome is Outcome
    assert checks.resolve is run_checks.resolve
    assert public_schema.CheckModel is schema.CheckModel
