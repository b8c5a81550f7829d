"""The trajectories of runs of the real ``claude``, ``codex`` and ``gemini`` CLIs
against the scripted model servers (docs/trajectories.md): each stored run's
``trajectory.json`` is valid ATIF-v1.7 by the tests' own schema, and shows the prompt,
the shell call the model asked for, the answer and the tokens."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.agents.test_real_clis import (  # noqa: F401 (fixtures)
    CASE,
    CLAUDE_INI,
    GEMINI_INI,
    claude_env,
    codex_ini,
    gemini_server,
)
from tests.helpers import atif as independent
from tests.helpers.model_server import ModelServer
from tests.helpers.results import only_results, results_files

pytestmark = pytest.mark.real_cli


def run(pytester: pytest.Pytester, ini: str, case: str = CASE) -> dict[str, Any]:
    pytester.makefile(".ini", tox=ini)
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "acts.yaml").write_text(case)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    [results] = results_files(pytester.path)
    [path] = sorted(results.with_suffix(".runs").glob("**/trajectory.json"))
    return independent.load_valid(path)


def the_run(document: dict[str, Any], pytester: pytest.Pytester, agent: str) -> dict[str, Any]:
    """The shape every CLI's trajectory has: the prompt, then the agent's step with its
    shell call and answer; the agent step, for what differs."""
    record = only_results(pytester.path)["cases"][0]
    assert document["agent"]["name"] == agent
    assert document["agent"]["version"] != "unknown"
    user, step = document["steps"]
    assert user == {"step_id": 1, "source": "user", "message": "Write made.txt"}
    assert step["message"].startswith("done:")
    shell = [c for c in step["tool_calls"] if c["extra"]["kind"] == "shell"]
    assert len(shell) == 1, step["tool_calls"]
    assert document["final_metrics"]["total_completion_tokens"] == record["tokens_out"]
    assert document["final_metrics"]["total_steps"] == 2
    assert json.dumps(document).count("echo made-by-the-agent") >= 1
    return step


def test_claudes_trajectory(pytester: pytest.Pytester, claude_env: ModelServer) -> None:  # noqa: F811
    step = the_run(run(pytester, CLAUDE_INI), pytester, "claude")
    [call] = step["tool_calls"]
    assert call["function_name"] == "Bash"
    assert call["arguments"]["command"] == "echo made-by-the-agent > made.txt"


def test_codexs_trajectory(
    pytester: pytest.Pytester,
    codex_ini: tuple[ModelServer, str],  # noqa: F811
) -> None:
    _, ini = codex_ini
    step = the_run(run(pytester, ini), pytester, "codex")
    assert "echo made-by-the-agent" in step["tool_calls"][0]["arguments"]["command"]


def test_geminis_trajectory(pytester: pytest.Pytester, gemini_server: ModelServer) -> None:  # noqa: F811
    # Its plain JSON names calls without inputs; a tool check asks for its stream.
    step = the_run(run(pytester, GEMINI_INI), pytester, "gemini")
    assert step["tool_calls"][0]["function_name"] == "run_shell_command"
