"""A stored run's ``trajectory.json`` (docs/trajectories.md): built from the agent's
result, valid ATIF-v1.7 by the tests' own schema, written beside ``run.json``; a
trajectory that cannot be made never costs the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_evalcases.agents.base import AgentResult, Denial, ToolCall, Usage
from pytest_evalcases.redact import Redactor
from pytest_evalcases.run import artifacts, trajectory
from pytest_evalcases.run.workspace import snapshot
from tests.helpers import atif as independent

ABOUT = trajectory.About(
    run="fix-bug/2",
    case="fix-bug",
    variant="",
    agent="claude",
    agent_version="2.1.197",
    prompts=("Fix the bug.",),
)
RESULT = AgentResult(
    text="Fixed it.",
    tool_calls=(
        ToolCall("Bash", "shell", "pytest -q"),
        ToolCall("Edit", "edit", '{"file_path":"a.py","old_string":"x","new_string":"y"}'),
    ),
    usage=Usage(input_tokens=10, output_tokens=20, cache_read_tokens=300, cache_write_tokens=4),
    cost_usd=0.25,
    models=("claude-sonnet-4-5",),
    denials=(Denial("Bash", "shell", "git push", "hook"),),
)


def valid(document: object) -> dict[str, object]:
    assert isinstance(document, dict)
    assert independent.errors(document) == []
    return document


def test_a_run_becomes_a_prompt_and_the_agents_step() -> None:
    document = valid(trajectory.build(ABOUT, RESULT, None).model_dump(exclude_none=True))
    assert document["agent"] == {
        "name": "claude",
        "version": "2.1.197",
        "model_name": "claude-sonnet-4-5",
    }
    assert document["session_id"] == "fix-bug/2"
    user, agent = document["steps"]  # type: ignore[misc]
    assert user == {"step_id": 1, "source": "user", "message": "Fix the bug."}
    assert agent["message"] == "Fixed it."
    assert agent["tool_calls"] == [
        {
            "tool_call_id": "call_1",
            "function_name": "Bash",
            "arguments": {"command": "pytest -q"},
            "extra": {"kind": "shell"},
        },
        {
            "tool_call_id": "call_2",
            "function_name": "Edit",
            "arguments": {"file_path": "a.py", "old_string": "x", "new_string": "y"},
            "extra": {"kind": "edit"},
        },
    ]
    # Anthropic's input tokens leave the cache's out; ATIF's prompt tokens count them.
    assert agent["metrics"] == {
        "prompt_tokens": 314,
        "completion_tokens": 20,
        "cached_tokens": 300,
        "cost_usd": 0.25,
        "extra": {"cache_creation_input_tokens": 4},
    }
    assert agent["extra"] == {"refused": [{"tool": "Bash", "input": "git push", "by": "hook"}]}
    assert document["final_metrics"] == {
        "total_prompt_tokens": 314,
        "total_completion_tokens": 20,
        "total_cached_tokens": 300,
        "total_cost_usd": 0.25,
        "total_steps": 2,
    }


def test_another_agents_input_tokens_already_count_the_cache() -> None:
    about = trajectory.About("r", "c", "", "codex", None, ("p",))
    made = trajectory.build(about, RESULT, None)
    assert made.agent.version == "unknown"
    assert made.steps[1].metrics is not None
    assert made.steps[1].metrics.prompt_tokens == 10


def test_a_conversation_is_each_prompt_and_its_answer() -> None:
    turns = (
        AgentResult(text="first", tool_calls=(ToolCall("Bash", "shell", "ls"),)),
        AgentResult(text="second", tool_calls=(ToolCall("Bash", "shell", "pwd"),)),
    )
    result = AgentResult(text="second", tool_calls=(), turns=turns, session="s-1")
    about = trajectory.About("r", "c", "v", "codex", "0.171", ("one", "two"))
    document = valid(trajectory.build(about, result, None).model_dump(exclude_none=True))
    steps = document["steps"]
    assert isinstance(steps, list)
    assert [(s["source"], s["message"]) for s in steps] == [
        ("user", "one"),
        ("agent", "first"),
        ("user", "two"),
        ("agent", "second"),
    ]
    assert [c["tool_call_id"] for s in steps[1::2] for c in s["tool_calls"]] == ["call_1", "call_2"]
    assert document["extra"] == {
        "producer": "pytest-evalcases",
        "case": "c",
        "variant": "v",
        "agent_session": "s-1",
    }


def test_a_run_without_a_transcript_says_so_and_an_errored_run_keeps_its_prompt() -> None:
    plain = trajectory.build(ABOUT, AgentResult(text="ok"), None)
    assert plain.steps[1].tool_calls is None
    assert plain.steps[1].extra == {"tool_calls_known": False}
    about = trajectory.About("r", "c", "", "claude", None, ("one", "two"))
    failed = valid(
        trajectory.build(about, None, ("timeout", "timed out")).model_dump(exclude_none=True)
    )
    assert [s["message"] for s in failed["steps"]] == ["one"]  # type: ignore[attr-defined]
    assert failed["extra"]["error"] == {"kind": "timeout", "message": "timed out"}  # type: ignore[index]


def store(tmp_path: Path, env: dict[str, str] | None = None) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    directory = tmp_path / "results.runs" / "fix-bug" / "2"
    artifacts.store(
        directory,
        workspace,
        snapshot(workspace),
        snapshot(workspace),
        {"run": "fix-bug/2", "case": "fix-bug", "variant": "", "agent": "claude"},
        RESULT,
        None,
        tool_inputs=True,
        redact=Redactor(env or {}),
        about=ABOUT,
    )
    return directory


def test_the_trajectory_is_stored_beside_run_json_redacted(tmp_path: Path) -> None:
    directory = store(tmp_path, {"MY_TOKEN": "pytest -q"})
    document = independent.load_valid(directory / "trajectory.json")
    stored = json.loads((directory / "run.json").read_text())
    assert "trajectory_error" not in stored
    # A secret of the environment is withheld here as in run.json.
    assert "pytest -q" not in (directory / "trajectory.json").read_text()
    assert document["steps"][1]["tool_calls"][0]["arguments"]["command"] != "pytest -q"
    assert not list(directory.glob(".tmp-*"))


def test_a_trajectory_that_cannot_be_made_costs_only_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store(tmp_path)

    def broken(*args: object) -> None:
        raise ValueError("no such step")

    monkeypatch.setattr(trajectory, "build", broken)
    with pytest.warns(artifacts.RecordingWarning, match=r"run fix-bug/2: no trajectory\.json: "):
        directory = store(tmp_path)
    stored = json.loads((directory / "run.json").read_text())
    assert stored["answer"] == "Fixed it."
    assert stored["trajectory_error"] == "ValueError: no such step"
    # Not the earlier run's trajectory either.
    assert not (directory / "trajectory.json").exists()
