"""Conversations (docs/conversations.md) with the real Claude Code, Codex and Gemini CLI,
offline against the scripted model: a case's ``follow_ups`` continue the session its
prompt started, each turn's checks see only that turn's calls and answer, and the
script runs on across the turns.

The CLIs come from ``EVALCASES_AGENT_CLIS`` (tests/agents/test_real_clis.py says how);
without them these tests skip.
"""

from __future__ import annotations

import os

import pytest

from pytest_evalcases.recording import format as recording
from tests.agents.test_real_clis import cli
from tests.helpers.results import only_results
from tests.plugin.test_scripted import offline  # noqa: F401 (fixture)

pytestmark = [pytest.mark.real_cli, pytest.mark.usefixtures("offline")]

#: Two turns, each running its own command and answering; the checks of turn 2 must not
#: see turn 1's command, and those of turn 1 must.
CASE = """\
id: two-turns
defends: AGENTS.md
prompt: Make the first file
follow_ups:
  - Now make the second file
script:
  - shell: echo one > one.txt
  - text: turn1 done MARK-t1
  - shell: echo two > two.txt
  - text: turn2 done MARK-t2
checks:
  - {id: first-file, type: file_exists, path: one.txt}
  - {id: second-file, type: file_exists, path: two.txt}
  - {id: t1-called, type: tool_called, tool: shell, input: one\\.txt, turn: 1}
  - {id: t2-called, type: tool_called, tool: shell, input: two\\.txt, turn: 2}
  - {id: t2-not-t1, type: tool_not_called, tool: shell, input: one\\.txt, turn: 2}
  - {id: t1-not-t2, type: tool_not_called, tool: shell, input: two\\.txt, turn: 1}
  - {id: t1-answer, type: output_matches, pattern: "^turn1 done MARK-t1$", turn: 1}
  - {id: t2-answer, type: output_matches, pattern: "^turn2 done MARK-t2$", turn: 2}
  - {id: last-answer, type: output_matches, pattern: "^turn2 done"}
  - {id: every-turn, type: tool_called, tool: shell, input: one\\.txt}
"""


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_a_follow_up_continues_the_session_and_each_turn_is_graded_on_its_own(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    program = cli(agent)
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    pytester.makefile(".ini", tox=f"[pytest]\neval_agent = {agent}\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "two-turns.yaml").write_text(CASE)

    result = pytester.runpytest("-p", "no:cacheprovider")

    record = only_results(pytester.path)["cases"][0]
    failed = {c["id"]: c["message"] for c in record["checks"] if not c["passed"]}
    assert not failed, failed
    result.assert_outcomes(passed=1)
    assert [(t["calls"], t["answer_chars"]) for t in record["conversation"]] == [
        (1, len("turn1 done MARK-t1")),
        (1, len("turn2 done MARK-t2")),
    ]
    # The script ran on across the turns; every request of turn 2 came after turn 1's.
    found = recording.exchange_file(pytester.path / "evals" / "results" / record["recording"])
    assert found is not None
    posted = [e for e in recording.read(found).exchanges if e.method == "POST"]
    assert {e.source for e in posted} == {"scripted"}
    tagged = [e.turn for e in posted]
    assert tagged == sorted(tagged)
    assert set(tagged) == {1, 2}
