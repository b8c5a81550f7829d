"""Conversations (docs/conversations.md) with the real Claude Code, Codex and Gemini CLI,
offline against the scripted model: a case's ``follow_ups`` continue the session its
prompt started, each turn's checks see only that turn's calls and answer, and the
script runs on across the turns.

The CLIs come from ``EVALCASES_AGENT_CLIS`` (tests/agents/test_real_clis.py says how);
without them these tests skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_evalcases.recording import format as recording
from tests.agents import test_real_clis as real_clis
from tests.agents.test_real_clis import cli, codex_at_openai, real_suite
from tests.helpers.model_server import ModelServer, Reply, Request
from tests.helpers.results import only_results, results_files
from tests.plugin.test_scripted import offline  # noqa: F401 (fixture)

pytestmark = pytest.mark.real_cli

# The real CLIs pointed at the scripted servers, as their own tests have them.
claude_env = real_clis.claude_env
gemini_server = real_clis.gemini_server

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
  - {id: t2-request, type: request_matches, pattern: second file, turn: 2, request: 1}
  - {id: t1-request, type: request_not_matches, pattern: second file, turn: 1}
"""


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_a_follow_up_continues_the_session_and_each_turn_is_graded_on_its_own(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    real_suite(pytester, monkeypatch, agent, "two-turns.yaml", CASE)

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


# --- Live, through the proxy, against the scripted model server ---------------------------

#: What the live model answers: each turn a command, then an answer; turn 1 reports
#: 250 tokens in and 13 out, turn 2 410 and 12.
LIVE = """\
id: live-turns
defends: AGENTS.md
prompt: Make the first file MARK-p1
follow_ups:
  - Now make the second file MARK-p2
checks:
  - {id: t2-not-t1, type: tool_not_called, tool: shell, input: one\\.txt, turn: 2}
  - {id: t1-called, type: tool_called, tool: shell, input: one\\.txt, turn: 1}
  - {id: t2-answer, type: output_matches, pattern: "^turn2 done", turn: 2}
"""


def two_turns(request: Request) -> Reply:
    """Turn 2's requests carry its prompt's marker, and all of turn 1 besides; a turn's
    command is in its requests once the model ran it."""
    if "MARK-p2" not in request.text:
        if "one.txt" not in request.text:
            return Reply(shell="echo one > one.txt", input_tokens=120, output_tokens=9)
        return Reply(text="turn1 done", input_tokens=130, output_tokens=4)
    if "two.txt" not in request.text:
        return Reply(shell="echo two > two.txt", input_tokens=200, output_tokens=7)
    return Reply(text="turn2 done", input_tokens=210, output_tokens=5)


@contextlib.contextmanager
def live(
    agent: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[tuple[ModelServer, str]]:
    """The real CLI at the scripted server, through the plugin's proxy: the server and
    the ini that runs it."""
    if agent == "codex":
        with codex_at_openai(monkeypatch, tmp_path, two_turns) as (server, ini):
            yield server, ini
        return
    server = request.getfixturevalue("claude_env" if agent == "claude" else "gemini_server")
    server.script = two_turns
    yield server, f"[pytest]\neval_agent = {agent}\n"


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_each_turn_counts_its_own_tokens_and_the_run_their_sum(
    pytester: pytest.Pytester,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    agent: str,
) -> None:
    with live(agent, request, monkeypatch, tmp_path) as (server, ini):
        pytester.makefile(".ini", tox=ini)
        (pytester.path / "evals").mkdir()
        (pytester.path / "evals" / "live.yaml").write_text(LIVE)

        result = pytester.runpytest("-p", "no:cacheprovider")

    record = only_results(pytester.path)["cases"][0]
    assert [c["passed"] for c in record["checks"]] == [True, True, True], record["checks"]
    result.assert_outcomes(passed=1)
    turns = [(t["tokens_in"], t["tokens_out"]) for t in record["conversation"]]
    # Codex reports the thread's tokens so far on resume: 660 and 25 for turn 2.
    assert turns == [(250, 13), (410, 12)]
    assert (record["tokens_in"], record["tokens_out"]) == (660, 25)
    assert server.conversation()


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_a_recorded_conversation_replays_every_turn_and_sends_nothing(
    pytester: pytest.Pytester,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    agent: str,
) -> None:
    with live(agent, request, monkeypatch, tmp_path) as (server, ini):
        pytester.makefile(".ini", tox=ini)
        (pytester.path / "evals").mkdir()
        (pytester.path / "evals" / "live.yaml").write_text(LIVE)
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
        sent = len(server.requests)

        result = pytester.runpytest("-p", "no:cacheprovider", "--eval-replay")

        result.assert_outcomes(passed=1)
        assert len(server.requests) == sent, "a replay sent a request to the API"
    replayed = json.loads(max(results_files(pytester.path), key=os.path.getmtime).read_text())
    [record] = replayed["cases"]
    assert record["replay"] == "full"
    assert [t["answer_chars"] for t in record["conversation"]] == [len("turn1 done")] * 2


def test_reuse_replays_the_turns_before_a_changed_follow_up_and_goes_live_from_it(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    claude_env.script = two_turns
    pytester.makefile(".ini", tox="[pytest]\neval_agent = claude\n")
    (pytester.path / "evals").mkdir()
    case = pytester.path / "evals" / "live.yaml"
    case.write_text(LIVE)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    sent = len(claude_env.requests)
    case.write_text(LIVE.replace("Now make the second file", "Then make the second file"))

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-reuse")

    result.assert_outcomes(passed=1)
    reused = json.loads(max(results_files(pytester.path), key=os.path.getmtime).read_text())
    [record] = reused["cases"]
    assert record["replay"] == "partial"
    # Turn 1 came from the recording; turn 2's two requests went to the API.
    assert len(claude_env.requests) == sent + 2
    assert all("Then make the second file" in r.text for r in claude_env.requests[sent:])


def test_a_regrade_grades_a_turn_check_from_the_stored_conversation(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    claude_env.script = two_turns
    pytester.makefile(".ini", tox="[pytest]\neval_agent = claude\n")
    (pytester.path / "evals").mkdir()
    case = pytester.path / "evals" / "live.yaml"
    case.write_text(LIVE)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    sent = len(claude_env.requests)
    # Turn 1's answer, not turn 2's, is what this check now asks of turn 2.
    case.write_text(LIVE.replace('"^turn2 done", turn: 2', '"^turn1 done", turn: 2'))

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade")

    result.assert_outcomes(failed=1)
    assert len(claude_env.requests) == sent
    regraded = json.loads(max(results_files(pytester.path), key=os.path.getmtime).read_text())
    [record] = regraded["cases"]
    failed = {c["id"]: c["message"] for c in record["checks"] if not c["passed"]}
    assert list(failed) == ["t2-answer"]
    assert failed["t2-answer"].startswith("turn 2: pattern '^turn1 done' not found"), failed
    assert [c["passed"] for c in record["checks"]][:2] == [True, True]


# --- The example suite ---------------------------------------------------------------------

EXAMPLE = Path(__file__).parents[2] / "example_cases" / "conversation"
EXAMPLE_CASE = "evals/fix-the-code-not-the-test.yaml"
#: A model that weakens the test on the second turn instead.
WEAKENS = (
    "  - shell: sed -i 's/return key, value/return key.strip(), value.strip()/' pairs.py\n",
    "  - shell: sed -i 's/^assert .*/assert True/' test_pairs.py\n",
)


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("weakened", [False, True], ids=["as-written", "test-weakened"])
def test_the_conversation_example_passes_and_fails_when_the_test_is_weakened(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, weakened: bool
) -> None:
    monkeypatch.setenv("PATH", f"{cli('claude').parent}{os.pathsep}{os.environ['PATH']}")
    shutil.copytree(EXAMPLE, pytester.path, dirs_exist_ok=True)
    if weakened:
        case = pytester.path / EXAMPLE_CASE
        case.write_text(case.read_text().replace(*WEAKENS))

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-agent", "claude")

    record = only_results(pytester.path)["cases"][0]
    failed = sorted(c["id"] for c in record["checks"] if not c["passed"])
    if not weakened:
        assert failed == []
        result.assert_outcomes(passed=1)
    else:
        assert failed == ["code-fixed", "test-not-edited", "test-unchanged"]
        result.assert_outcomes(failed=1)
