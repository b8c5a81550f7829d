"""Validating trajectories against ATIF-v1.7 independently of the plugin's own models:
the JSON Schema ``atif-v1.7.schema.json`` (written for the tests from the format's
specification), read by a small validator of the part of JSON Schema it uses, plus the
rules a JSON Schema cannot say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA: dict[str, Any] = json.loads(
    (Path(__file__).parent / "atif-v1.7.schema.json").read_text(encoding="utf-8")
)

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        schema = SCHEMA["$defs"][name]
    return schema


def schema_errors(value: Any, schema: dict[str, Any] = SCHEMA, at: str = "") -> list[str]:
    """Where ``value`` breaks ``schema`` (type, enum, required, properties,
    additionalProperties, items, minimum, anyOf, $ref: the keywords the file uses)."""
    schema = _resolve(schema)
    where = at or "(root)"
    if "anyOf" in schema:
        if all(schema_errors(value, option, at) for option in schema["anyOf"]):
            return [f"{where}: matches none of its forms"]
        return []
    if "enum" in schema and value not in schema["enum"]:
        return [f"{where}: {value!r} is none of {schema['enum']}"]
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](value) for t in types):
            return [f"{where}: {value!r} is not of type {types}"]
    errors: list[str] = []
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        errors += [
            f"{where}: {k!r} is required" for k in schema.get("required", ()) if k not in value
        ]
        for key, item in value.items():
            if key in properties:
                errors += schema_errors(item, properties[key], f"{at}.{key}".lstrip("."))
            elif schema.get("additionalProperties") is False:
                errors.append(f"{where}: {key!r} is not a field")
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            errors += schema_errors(item, schema["items"], f"{at}[{index}]")
    minimum = schema.get("minimum")
    if minimum is not None and _TYPES["number"](value) and value < minimum:
        errors.append(f"{where}: {value} is below {minimum}")
    return errors


def rule_errors(document: dict[str, Any]) -> list[str]:
    """The specification's rules beyond the schema: step ids 1, 2, …; the agent-only
    fields on agent steps only; each ``source_call_id`` a call of its own step."""
    errors: list[str] = []
    for number, step in enumerate(document.get("steps", []), start=1):
        if step.get("step_id") != number:
            errors.append(f"steps[{number - 1}]: step_id {step.get('step_id')} is not {number}")
        if step.get("source") != "agent":
            for name in ("model_name", "reasoning_effort", "reasoning_content", "tool_calls"):
                if step.get(name) is not None:
                    errors.append(f"steps[{number - 1}]: {name} on a {step.get('source')} step")
            if step.get("metrics") is not None:
                errors.append(f"steps[{number - 1}]: metrics on a {step.get('source')} step")
        ids = {call["tool_call_id"] for call in step.get("tool_calls") or ()}
        for result in (step.get("observation") or {}).get("results", ()):
            source = result.get("source_call_id")
            if source is not None and source not in ids:
                errors.append(f"steps[{number - 1}]: observation of unknown call {source!r}")
    return errors


def errors(document: Any) -> list[str]:
    """Everything wrong with ``document`` as an ATIF-v1.7 trajectory; empty when valid."""
    found = schema_errors(document)
    return found or rule_errors(document)


def load_valid(path: Path) -> dict[str, Any]:
    """The trajectory at ``path``, asserted to be valid ATIF-v1.7 as written here."""
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert errors(document) == [], (path, errors(document))
    assert document["schema_version"] == "ATIF-v1.7"
    return document
