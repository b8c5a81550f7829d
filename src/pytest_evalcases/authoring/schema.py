"""``evalcases schema``: the JSON Schema of case files, for editor completion.

Generated from the pydantic models of the check registry, so check types that plugins
register through the ``pytest_evalcases.checks`` entry point appear too.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, create_model

from pytest_evalcases.cases import schema
from pytest_evalcases.cases.registry import CheckRegistry
from pytest_evalcases.run.checks import default_registry

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def case_schema(registry: CheckRegistry | None = None) -> dict[str, Any]:
    """One case, or a mapping with a ``cases:`` list of cases (docs/case-format.md)."""
    registry = registry or default_registry()
    body = registry.case_model.model_json_schema()
    defs: dict[str, Any] = body.pop("$defs", {})
    body["title"] = "Case"
    defs["Case"] = body
    return {
        "$schema": DIALECT,
        "title": "pytest-evalcases case file",
        "description": "One eval case, or several under a top-level `cases:` list.",
        "anyOf": [
            {"$ref": "#/$defs/Case"},
            {
                "type": "object",
                "properties": {
                    "cases": {
                        "type": "array",
                        "items": {"$ref": "#/$defs/Case"},
                        "minItems": 1,
                        "description": "Several cases in one file; ids need not equal "
                        "the file name",
                    }
                },
                "required": ["cases"],
                "additionalProperties": False,
            },
        ],
        "$defs": defs,
    }


def task_schema(registry: CheckRegistry | None = None) -> dict[str, Any]:
    """A task directory's ``checks.yaml`` (docs/case-format.md, "Task-directory
    format"): every check needs an ``id`` and may carry a ``severity`` of HIGH, MEDIUM or LOW."""
    registry = registry or default_registry()
    extras: dict[str, Any] = {
        "id": (str, Field(min_length=1, description="Check id, unique in the file")),
        "severity": (
            Literal["HIGH", "MEDIUM", "LOW"],
            Field(default="HIGH", description="HIGH = critical, MEDIUM = normal, LOW = advisory"),
        ),
    }
    task_checks = tuple(
        create_model(f"Task{model.__name__}", __base__=model, __doc__=model.__doc__, **extras)
        for model in registry.models()
    )
    fields: dict[str, Any] = {
        "checks": (
            list[schema.check_union(task_checks)],  # type: ignore[misc]
            Field(min_length=1, description="All must pass"),
        )
    }
    task_file = create_model(
        "TaskFile", __base__=schema.TaskFileBase, __doc__=schema.TaskFileBase.__doc__, **fields
    )
    body = task_file.model_json_schema()
    return {"$schema": DIALECT, **body}
