"""The ``command`` agent and its trajectory (docs/trajectories.md, "In-house agents"):
how it declares one, where it is told to write it, and what the driver reads of it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_evalcases.agents.base import AgentSettings, RunRequest, ToolCall, adapt, run_agent
from pytest_evalcases.agents.command import CommandAgent
from pytest_evalcases.errors import AgentError

#: Writes the JSON of argv[1] (a file) to $EVALCASES_TRAJECTORY when it exists; says where.
WRITER = (
    "import os, pathlib, sys; t = os.environ.get('EVALCASES_TRAJECTORY', ''); "
    "src = pathlib.Path(sys.argv[1]); "
    "t and src.exists() and pathlib.Path(t).write_text(src.read_text()); "
    "print('wrote to', t, sys.argv[2])"
)


@pytest.mark.parametrize(
    ("command", "ini", "declared"),
    [
        ("agent {prompt}", False, False),
        ("agent {prompt}", True, True),
        ("agent --trajectory={trajectory} {prompt}", False, True),
        ("env EVALCASES_TRAJECTORY=out.json agent {prompt}", False, True),
    ],
)
def test_how_a_command_declares_its_trajectory(command: str, ini: bool, declared: bool) -> None:
    agent = CommandAgent(AgentSettings("command", command=command, trajectory=ini))
    assert agent.trajectory is declared
    assert agent.transcript is declared


def test_the_other_agents_show_a_transcript_and_read_no_trajectory() -> None:
    class Old:
        name = "old"

        def invocation(self, request: RunRequest) -> object:
            raise NotImplementedError

        def parse(self, result: object, request: RunRequest) -> object:
            raise NotImplementedError

    adapted = adapt(Old(), AgentSettings("old"))  # type: ignore[arg-type]
    assert adapted.transcript is True
    assert adapted.trajectory is False


def request(tmp_path: Path, written: object | None) -> RunRequest:
    source = tmp_path / "source.json"
    if written is not None:
        source.write_text(written if isinstance(written, str) else json.dumps(written))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return RunRequest(
        prompt=str(source),
        workspace=workspace,
        bare=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin"},
        trajectory=tmp_path / "place" / "trajectory.json",
    )


def agent() -> CommandAgent:
    command = f"{sys.executable} -c {json.dumps(WRITER)} {{prompt}} {{trajectory}}"
    return CommandAgent(AgentSettings("command", command=command, trajectory=True))


def test_the_trajectory_it_writes_gives_the_runs_tool_calls_and_is_removed(
    tmp_path: Path,
) -> None:
    (tmp_path / "place").mkdir()
    written = {
        "schema_version": "ATIF-v1.5",
        "session_id": "s",
        "agent": {"name": "ours", "version": "2", "model_name": "m-1"},
        "steps": [
            {
                "step_id": 1,
                "source": "agent",
                "message": "",
                "tool_calls": [
                    {"tool_call_id": "a", "function_name": "shell", "arguments": {"cmd": "ls"}}
                ],
                "metrics": {"prompt_tokens": 9, "completion_tokens": 2},
            }
        ],
        "final_metrics": {"total_cost_usd": 0.5},
    }
    req = request(tmp_path, written)

    result = run_agent(agent(), req)

    where = str(req.trajectory)
    # Told in the variable and in `{trajectory}` alike.
    assert result.text == f"wrote to {where} {where}\n"
    assert result.tool_calls == (ToolCall("shell", "shell", "ls"),)
    assert (result.usage.input_tokens, result.usage.output_tokens) == (9, 2)
    assert result.cost_usd == 0.5
    assert result.models == ("m-1",)
    assert req.trajectory is not None
    assert not req.trajectory.exists()


def test_no_file_no_transcript(tmp_path: Path) -> None:
    (tmp_path / "place").mkdir()
    result = run_agent(agent(), request(tmp_path, None))
    assert result.tool_calls is None


def test_a_file_that_is_not_atif_is_an_error_of_kind_parse(tmp_path: Path) -> None:
    (tmp_path / "place").mkdir()
    req = request(tmp_path, {"schema_version": "ATIF-v1.7", "agent": {}, "steps": []})
    with pytest.raises(AgentError) as info:
        run_agent(agent(), req)
    assert info.value.kind == "parse"
    assert str(info.value).startswith(
        f"agent command: {req.trajectory} is not an ATIF trajectory: agent.name: Field required"
    )
