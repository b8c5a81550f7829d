"""``evalcases show`` on a run of the real ``claude`` CLI, recorded through the plugin
against the scripted Messages API (docs/replay.md, "Reading a run")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.agents.test_real_clis import CLAUDE_INI, claude_env, write_case  # noqa: F401
from tests.helpers.model_server import ModelServer
from tests.helpers.results import results_files

pytestmark = pytest.mark.real_cli


def test_show_prints_a_claude_run_with_its_tool_call_result_and_answer(
    pytester: pytest.Pytester,
    claude_env: ModelServer,  # noqa: F811
) -> None:
    write_case(pytester, CLAUDE_INI)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    [results] = results_files(pytester.path)

    done = subprocess.run(
        [str(Path(sys.executable).parent / "evalcases"), "show", str(results), "acts"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("acts · agent claude · passed\n")
    assert "\nprompt\n  Write made.txt\n" in out
    # The model's tool call with its input, and what the CLI sent back as its result.
    assert (
        "  tool call Bash (toolu_0)\n"
        "    command: echo made-by-the-agent > made.txt\n"
        "    description: run\n"
        "  result\n"
        "    (Bash completed with no output)\n"
    ) in out
    assert "\nanswer\n  done: no markers\n" in out
    assert "  conversation: 220 in, 13 out over 2 turns\n" in out
    assert "as the agent reported: 220 in, 13 out · cost $" in out
