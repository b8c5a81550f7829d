"""The ATIF models (docs/trajectories.md): they accept what the format's specification
accepts and refuse what it refuses, as the independent JSON Schema of the tests does,
and read a trajectory's tool calls as the tool checks need them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.agents import atif
from pytest_evalcases.agents.base import ToolCall, Usage
from tests.helpers import atif as independent

#: The specification's own example (two calls in one step, observations, metrics, a
#: step of an earlier version), extended with the fields of later versions.
EXAMPLE: dict[str, Any] = {
    "schema_version": "ATIF-v1.7",
    "session_id": "025B810F",
    "agent": {
        "name": "harbor-agent",
        "version": "1.0.0",
        "model_name": "gemini-2.5-flash",
        "tool_definitions": [{"type": "function", "function": {"name": "financial_search"}}],
        "extra": {},
    },
    "notes": "Initial test trajectory",
    "final_metrics": {
        "total_prompt_tokens": 1120,
        "total_completion_tokens": 124,
        "total_cached_tokens": 200,
        "total_cost_usd": 0.00078,
        "total_steps": 3,
    },
    "steps": [
        {"step_id": 1, "timestamp": "2025-10-11T10:30:00Z", "source": "user", "message": "Q?"},
        {
            "step_id": 2,
            "timestamp": "2025-10-11T10:30:02+00:00",
            "source": "agent",
            "model_name": "gemini-2.5-flash",
            "reasoning_effort": "medium",
            "message": "I will search.",
            "reasoning_content": "two data points",
            "tool_calls": [
                {
                    "tool_call_id": "call_price_1",
                    "function_name": "financial_search",
                    "arguments": {"ticker": "GOOGL", "metric": "price"},
                },
                {
                    "tool_call_id": "call_sh",
                    "function_name": "bash",
                    "arguments": {"command": "ls -la"},
                    "extra": {"timeout": 5},
                },
            ],
            "observation": {
                "results": [
                    {"source_call_id": "call_price_1", "content": "185.35"},
                    {
                        "source_call_id": "call_sh",
                        "content": [{"type": "text", "text": "a.txt"}],
                        "extra": {"score": 0.9},
                    },
                ]
            },
            "metrics": {"prompt_tokens": 520, "completion_tokens": 80, "cached_tokens": 200},
            "llm_call_count": 1,
        },
        {
            "step_id": 3,
            "source": "agent",
            "reasoning_effort": 0.5,
            "message": [{"type": "text", "text": "It trades at $185.35."}],
            "metrics": {"completion_token_ids": [1, 2], "logprobs": [-0.1, -0.2], "cost_usd": 1},
        },
    ],
}


def changed(path: str, value: Any) -> dict[str, Any]:
    """``EXAMPLE`` with the field at ``path`` (dotted; ``-`` deletes) set to ``value``."""
    document = copy.deepcopy(EXAMPLE)
    *parents, last = path.split(".")
    holder: Any = document
    for part in parents:
        holder = holder[int(part)] if isinstance(holder, list) else holder[part]
    key: Any = int(last) if isinstance(holder, list) else last
    if value == "-":
        del holder[key]
    else:
        holder[key] = value
    return document


INVALID = {
    "no agent version": changed("agent.version", "-"),
    "an unknown field": changed("agent.temperature", 0.2),
    "an unknown version": changed("schema_version", "ATIF-v2.0"),
    "no steps": changed("steps", "-"),
    "a step id gap": changed("steps.2.step_id", 4),
    "a step id from 0": changed("steps.0.step_id", 0),
    "a source of no kind": changed("steps.0.source", "tool"),
    "no message": changed("steps.0.message", "-"),
    "tool calls on a user step": changed(
        "steps.0.tool_calls", [{"tool_call_id": "x", "function_name": "f", "arguments": {}}]
    ),
    "metrics on a user step": changed("steps.0.metrics", {"prompt_tokens": 1}),
    "arguments not an object": changed("steps.1.tool_calls.0.arguments", "GOOGL"),
    "a call without a name": changed("steps.1.tool_calls.0.function_name", "-"),
    "an observation of no call of its step": changed(
        "steps.1.observation.results.0.source_call_id", "call_elsewhere"
    ),
    "negative tokens": changed("steps.1.metrics.prompt_tokens", -1),
    "tokens as text": changed("steps.1.metrics.prompt_tokens", "520"),
    "a content part of no kind": changed("steps.2.message", [{"type": "video"}]),
}


def test_the_specifications_example_is_valid_for_both() -> None:
    assert independent.errors(EXAMPLE) == []
    assert atif.parse(EXAMPLE, "example").agent.name == "harbor-agent"


@pytest.mark.parametrize("document", INVALID.values(), ids=INVALID.keys())
def test_what_the_schema_refuses_the_models_refuse(document: dict[str, Any]) -> None:
    assert independent.errors(document) != []
    with pytest.raises(atif.Malformed, match=r"^example is not an ATIF trajectory: "):
        atif.parse(document, "example")


def test_an_earlier_version_without_a_session_reads() -> None:
    document = changed("schema_version", "ATIF-v1.4")
    del document["session_id"]
    assert independent.errors(document) == []
    assert atif.parse(document, "old").schema_version == "ATIF-v1.4"


def test_the_error_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(INVALID["arguments not an object"]))
    with pytest.raises(atif.Malformed) as info:
        atif.read(path)
    assert str(info.value) == (
        f"{path} is not an ATIF trajectory: steps.1.tool_calls.0.arguments: "
        "Input should be a valid dictionary"
    )
    path.write_text("{not json")
    with pytest.raises(atif.Malformed, match=r"is not an ATIF trajectory: not JSON \("):
        atif.read(path)


def test_tool_calls_read_as_the_tool_checks_need_them() -> None:
    document = copy.deepcopy(EXAMPLE)
    document["steps"][2]["tool_calls"] = [
        {"tool_call_id": "a", "function_name": "exec", "arguments": {"cmd": ["git", "push"]}},
        {"tool_call_id": "b", "function_name": "Write", "arguments": {"file_path": "x"}},
        {
            "tool_call_id": "c",
            "function_name": "deploy",
            "arguments": {"command": "make deploy"},
            "extra": {"kind": "shell"},
        },
    ]
    document["steps"].append(
        {
            "step_id": 4,
            "source": "agent",
            "message": "",
            "is_copied_context": True,
            "tool_calls": [{"tool_call_id": "d", "function_name": "bash", "arguments": {}}],
        }
    )
    calls = atif.tool_calls(atif.parse(document, "example"))
    assert calls == (
        ToolCall("financial_search", "other", '{"ticker":"GOOGL","metric":"price"}'),
        ToolCall("bash", "shell", "ls -la"),
        ToolCall("exec", "other", '{"cmd":["git","push"]}'),
        ToolCall("Write", "write", '{"file_path":"x"}'),
        ToolCall("deploy", "shell", "make deploy"),
    )


def test_a_command_given_as_words_reads_as_one_line() -> None:
    document = changed("steps.1.tool_calls.1.arguments", {"command": ["bash", "-lc", "git status"]})
    calls = atif.tool_calls(atif.parse(document, "example"))
    assert calls[1] == ToolCall("bash", "shell", "bash -lc git status")


def test_usage_is_the_final_metrics_else_the_steps() -> None:
    assert atif.usage(atif.parse(EXAMPLE, "x")) == Usage(1120, 124, 200)
    without = changed("final_metrics", "-")
    assert atif.usage(atif.parse(without, "x")) == Usage(520, 80, 200)
    assert atif.models(atif.parse(EXAMPLE, "x")) == ("gemini-2.5-flash",)


@pytest.mark.parametrize(
    ("call", "arguments"),
    [
        (ToolCall("Bash", "shell", "git push"), {"command": "git push"}),
        (ToolCall("Read", "read", '{"file_path":"a.py"}'), {"file_path": "a.py"}),
        (ToolCall("mystery", "other", "plain words"), {"input": "plain words"}),
        (ToolCall("list", "other", "[1, 2]"), {"input": "[1, 2]"}),
    ],
)
def test_a_house_tool_call_becomes_arguments(call: ToolCall, arguments: dict[str, Any]) -> None:
    assert atif.arguments(call) == arguments
