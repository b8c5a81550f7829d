"""Trajectories in ATIF (docs/trajectories.md): every stored run has one beside its
``run.json``; the ``command`` agent that writes its own to ``$EVALCASES_TRAJECTORY``
has its tool and skill checks graded from it; a file that is not ATIF is an error; a
case whose checks read a transcript the agent cannot give is an error before it runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import atif as independent
from tests.helpers.agents import SAMPLES, use_fake
from tests.helpers.results import only_results, results_files

#: An in-house agent: it writes the trajectory given in $TRAJECTORY_STEERING (a file
#: beside the cases) to $EVALCASES_TRAJECTORY, and a marker that it ran.
AGENT = r"""
import os, pathlib, sys
root = pathlib.Path(sys.argv[1])
(root / "ran").write_text(sys.argv[2])
steering = root / "trajectory.steer"
target = os.environ.get("EVALCASES_TRAJECTORY")
if target and steering.exists():
    pathlib.Path(target).write_text(steering.read_text())
print("done: " + sys.argv[2])
"""


def trajectory(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """An ATIF-v1.6 trajectory of one agent step making ``calls``."""
    return {
        "schema_version": "ATIF-v1.6",
        "session_id": "in-house-1",
        "agent": {"name": "in-house", "version": "0.3", "model_name": "our-model"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "p"},
            {
                "step_id": 2,
                "source": "agent",
                "message": "done",
                "tool_calls": [
                    {"tool_call_id": f"c{i}", "function_name": name, "arguments": arguments}
                    for i, (name, arguments) in enumerate(calls)
                ],
                "metrics": {"prompt_tokens": 100, "completion_tokens": 7},
            },
        ],
    }


def suite(pytester: pytest.Pytester, checks: str, *, ini: str = "") -> None:
    (pytester.path / "agent.py").write_text(AGENT)
    (pytester.path / "evals").mkdir(exist_ok=True)
    (pytester.path / "evals" / "fix.yaml").write_text(
        f"id: fix\ndefends: AGENTS.md\nprompt: fix it\nchecks:\n{checks}"
    )
    pytester.makeini(
        "[pytest]\neval_agent = command\neval_sandbox_rw = .\n"
        "eval_agent_command = {python} {rootdir}/agent.py {rootdir} {prompt}\n" + ini
    )


def steer(pytester: pytest.Pytester, document: object) -> None:
    text = document if isinstance(document, str) else json.dumps(document)
    (pytester.path / "trajectory.steer").write_text(text)


def stored_trajectory(root: Path) -> dict[str, Any]:
    [results] = results_files(root)
    [path] = sorted(results.with_suffix(".runs").glob("**/trajectory.json"))
    assert (path.parent / "run.json").is_file()
    return independent.load_valid(path)


def test_every_stored_run_has_a_trajectory(pytester: pytest.Pytester) -> None:
    suite(pytester, "  - {type: output_matches, pattern: done}\n")

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    document = stored_trajectory(pytester.path)
    assert document["agent"]["name"] == "command"
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("user", "fix it"),
        ("agent", "done: fix it\n"),
    ]
    assert document["extra"]["case"] == "fix"


def test_a_fake_claudes_tool_calls_and_tokens_are_in_its_trajectory(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makefile(
        ".yaml",
        **{
            "evals/tools": "id: tools\ndefends: CLAUDE.md\nprompt: p\n"
            "checks: [{type: tool_called, tool: Bash}]\n"
        },
    )
    pytester.makeini(f"[pytest]\neval_agent = claude\neval_sandbox_ro = {SAMPLES}\n")
    use_fake(monkeypatch, "claude-stream.jsonl")

    pytester.runpytest("-p", "no:cacheprovider")

    document = stored_trajectory(pytester.path)
    [run] = results_files(pytester.path)[0].with_suffix(".runs").glob("**/run.json")
    stored = json.loads(run.read_text())
    assert stored["tool_calls"], "the sample has tool calls"
    assert document["steps"][1]["tool_calls"] == [
        {
            "tool_call_id": f"call_{number}",
            "function_name": call["name"],
            "arguments": json.loads(call["input"])
            if call["input"].startswith("{")
            else {"command": call["input"]},
            "extra": {"kind": call["kind"]},
        }
        for number, call in enumerate(stored["tool_calls"], start=1)
    ]
    record = only_results(pytester.path)["cases"][0]
    assert document["final_metrics"]["total_completion_tokens"] == record["tokens_out"]
    assert document["agent"]["model_name"] == stored["models"][0]


@pytest.mark.parametrize(
    ("checks", "outcome"),
    [
        ("  - {type: tool_called, tool: shell, input: 'git status'}\n", "passed"),
        ("  - {type: tool_not_called, tool: Bash, input: 'git push'}\n", "failed"),
        ("  - {type: skill_used, skill: release-notes}\n", "passed"),
        ("  - {type: skill_not_used, skill: release-notes}\n", "failed"),
    ],
)
def test_an_in_house_agents_trajectory_grades_its_tool_and_skill_checks(
    pytester: pytest.Pytester, checks: str, outcome: str
) -> None:
    suite(pytester, checks, ini="eval_agent_trajectory = true\n")
    steer(
        pytester,
        trajectory(
            ("Bash", {"command": "git status"}),
            ("Skill", {"skill": "release-notes"}),
            ("Bash", {"command": "git push origin HEAD"}),
        ),
    )

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(**{outcome: 1})
    record = only_results(pytester.path)["cases"][0]
    assert record["tokens_in"] == 100
    # The plugin's own trajectory of the run carries the calls the agent's showed.
    document = stored_trajectory(pytester.path)
    assert [c["function_name"] for c in document["steps"][1]["tool_calls"]] == [
        "Bash",
        "Skill",
        "Bash",
    ]


def test_the_placeholder_declares_it_too(pytester: pytest.Pytester) -> None:
    suite(pytester, "  - {type: tool_called, tool: shell, input: 'git status'}\n")
    pytester.makeini(
        "[pytest]\neval_agent = command\neval_sandbox_rw = .\neval_agent_command = "
        "{python} {rootdir}/agent.py {rootdir} {prompt} --trajectory={trajectory}\n"
    )
    steer(pytester, trajectory(("bash", {"command": "git status"})))

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("{oops", "is not an ATIF trajectory: not JSON ("),
        (
            trajectory(("Bash", {"command": "x"}))
            | {"steps": [{"step_id": 2, "source": "user", "message": "p"}]},
            "is not an ATIF trajectory: step 1 has step_id 2: ids count from 1",
        ),
        (
            {**trajectory(), "agent": {"name": "in-house"}},
            "is not an ATIF trajectory: agent.version: Field required",
        ),
    ],
    ids=["not-json", "step-ids", "no-version"],
)
def test_a_trajectory_that_is_not_atif_is_an_error(
    pytester: pytest.Pytester, written: object, said: str
) -> None:
    suite(pytester, "  - {type: tool_not_called, tool: Bash}\n", ini="eval_agent_trajectory = 1\n")
    steer(pytester, written)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["error_kind"] == "parse"
    assert record["error"].startswith("agent command: ")
    assert ".trajectory/trajectory.json " + said in record["error"]


def test_a_case_needing_a_transcript_the_agent_cannot_give_errors_before_it_runs(
    pytester: pytest.Pytester,
) -> None:
    suite(
        pytester,
        "  - {type: tool_not_called, tool: Bash, input: 'git push'}\n"
        "  - {type: skill_used, skill: x}\n",
    )

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    assert not (pytester.path / "ran").exists()
    record = only_results(pytester.path)["cases"][0]
    assert record["error_kind"] == "case"
    assert record["error"] == (
        "tool_not_called, skill_used read(s) the agent's transcript, and agent 'command' "
        "shows none, so the agent was not run (claude, codex, gemini, or an "
        "eval_agent_command that writes its trajectory in ATIF to $EVALCASES_TRAJECTORY "
        "and says so with eval_agent_trajectory = true: docs/trajectories.md)"
    )


def test_a_declared_agent_that_wrote_none_gave_no_transcript(pytester: pytest.Pytester) -> None:
    suite(
        pytester, "  - {type: tool_not_called, tool: Bash}\n", ini="eval_agent_trajectory = true\n"
    )

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    assert (pytester.path / "ran").exists()
    assert only_results(pytester.path)["cases"][0]["error_kind"] == "no-transcript"


#: An in-house agent that continues its session: each prompt writes a trajectory of one
#: shell call naming the prompt.
CONVERSING = r"""
import json, os, pathlib, sys
prompt, session = sys.argv[1], sys.argv[2]
print("EVALCASES_SESSION=s-1" if not session else "again")
command = {"command": "echo " + prompt}
calls = [{"tool_call_id": "c1", "function_name": "bash", "arguments": command}]
pathlib.Path(os.environ["EVALCASES_TRAJECTORY"]).write_text(json.dumps({
    "schema_version": "ATIF-v1.7",
    "agent": {"name": "in-house", "version": "1"},
    "steps": [{"step_id": 1, "source": "agent", "message": prompt, "tool_calls": calls}],
}))
print("answered " + prompt)
"""


def test_each_prompt_of_a_conversation_is_graded_from_its_own_trajectory(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "agent.py").write_text(CONVERSING)
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "talk.yaml").write_text(
        "id: talk\ndefends: AGENTS.md\nprompt: first\nfollow_ups: [second]\nchecks:\n"
        "  - {type: tool_called, tool: shell, input: 'echo first', turn: 1}\n"
        "  - {type: tool_not_called, tool: shell, input: 'echo first', turn: 2}\n"
        "  - {type: tool_called, tool: shell, input: 'echo second', turn: 2}\n"
    )
    pytester.makeini(
        "[pytest]\neval_agent = command\neval_sandbox_rw = .\neval_agent_trajectory = true\n"
        "eval_agent_command = {python} {rootdir}/agent.py {prompt} {session}\n"
    )

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    document = stored_trajectory(pytester.path)
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("user", "first"),
        ("agent", "answered first\n"),
        ("user", "second"),
        ("agent", "again\nanswered second\n"),
    ]
    assert [s["tool_calls"][0]["arguments"] for s in document["steps"][1::2]] == [
        {"command": "echo first"},
        {"command": "echo second"},
    ]
