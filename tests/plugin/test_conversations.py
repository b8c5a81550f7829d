"""Conversations with the ``command`` agent (docs/conversations.md): a follow-up is a
new invocation of ``eval_agent_command`` with ``{session}`` the id the first run
printed as ``EVALCASES_SESSION=<id>``; a command line without ``{session}``, or a first
run that named none, cannot continue; a turn that errors ends the conversation; the
case's timeout covers every turn."""

from __future__ import annotations

import json

import pytest

from tests.helpers.results import only_results

#: Answers with what it was given; the first run names its session, a follow-up says
#: which one it continues (argument and variable) and ends the conversation at "fail".
AGENT = """\
import os, sys, time
prompt, session = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
with open("turns.log", "a") as log:
    log.write(prompt + "\\n")
if prompt == "fail":
    sys.exit("no such thing")
if prompt == "wait":
    time.sleep(60)
if not session and not os.environ.get("NAME_NONE"):
    print("EVALCASES_SESSION=s-4711")
print(f"answer to {prompt!r} in {session or '-'} {os.environ.get('EVALCASES_SESSION', '-')}")
"""

CASE = """\
id: talk
defends: AGENTS.md
prompt: first
follow_ups: [{follow_ups}]
{timeout}checks:
  - {{id: first, type: output_matches, pattern: "^answer to 'first' in - -$", turn: 1}}
  - {{id: second, type: output_matches, pattern: "^answer to 'second' in s-4711 s-4711$", turn: 2}}
  - {{id: last, type: output_matches, pattern: "^answer to 'second'"}}
  - {{id: no-session-line, type: output_not_matches, pattern: EVALCASES_SESSION, turn: 1}}
  - {{id: one-workspace, type: file_matches, path: turns.log, pattern: '\\Afirst\\nsecond\\n\\Z'}}
"""


def suite(pytester: pytest.Pytester, command: str, follow_ups: str, timeout: str = "") -> None:
    pytester.makefile(".ini", tox=f"[pytest]\neval_agent_command = {command}\n")
    (pytester.path / "agent.py").write_text(AGENT)
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "talk.yaml").write_text(
        CASE.format(follow_ups=follow_ups, timeout=timeout)
    )


def record(pytester: pytest.Pytester) -> dict[str, object]:
    [found] = only_results(pytester.path)["cases"]
    assert isinstance(found, dict)
    return found


def turns_run(pytester: pytest.Pytester) -> list[str]:
    workspace = record(pytester)["workspace"]
    assert isinstance(workspace, str)
    with open(f"{workspace}/turns.log") as log:
        return log.read().split()


COMMAND = "{python} {rootdir}/agent.py {prompt} {session}"


def test_a_follow_up_runs_the_command_again_with_the_session_the_first_run_named(
    pytester: pytest.Pytester,
) -> None:
    suite(pytester, COMMAND, "second")

    result = pytester.runpytest("-p", "no:cacheprovider")

    found = record(pytester)
    checks = found["checks"]
    assert isinstance(checks, list)
    assert [c["passed"] for c in checks] == [True] * 5, json.dumps(checks)
    result.assert_outcomes(passed=1)
    conversation = found["conversation"]
    assert isinstance(conversation, list)
    assert [t["answer_chars"] for t in conversation] == [
        len("answer to 'first' in - -\n"),
        len("answer to 'second' in s-4711 s-4711\n"),
    ]


def test_a_command_line_without_session_cannot_continue_and_nothing_runs(
    pytester: pytest.Pytester,
) -> None:
    suite(pytester, "{python} {rootdir}/agent.py {prompt}", "second")

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    found = record(pytester)
    assert found["error_kind"] == "case"
    assert "agent 'command' cannot continue a session, which `follow_ups:` needs" in str(
        found["error"]
    )
    assert not (pytester.path / "turns.log").exists()


def test_a_first_run_that_names_no_session_ends_the_conversation(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAME_NONE", "1")
    suite(pytester, COMMAND, "second")

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    found = record(pytester)
    assert found["error_kind"] == "case"
    assert str(found["error"]).startswith(
        "agent 'command': turn 2 of 2 cannot continue the session: its first run named none"
    )
    assert turns_run(pytester) == ["first"]


def test_a_turn_that_fails_ends_the_conversation_with_its_error(
    pytester: pytest.Pytester,
) -> None:
    suite(pytester, COMMAND, "fail, second")

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    found = record(pytester)
    assert found["error_kind"] == "crash"
    assert str(found["error"]).startswith(
        "turn 2 of 3: agent command exited with status 1: no such thing"
    )
    assert turns_run(pytester) == ["first", "fail"]


def test_the_cases_timeout_covers_the_whole_conversation_and_names_the_turn(
    pytester: pytest.Pytester,
) -> None:
    suite(pytester, COMMAND, "wait, second", timeout="timeout: 3\n")

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    found = record(pytester)
    assert found["error_kind"] == "timeout"
    assert str(found["error"]).startswith("turn 2 of 3: agent 'command' timed out after")
    assert turns_run(pytester) == ["first", "wait"]


def test_each_repetition_runs_the_whole_conversation_in_a_workspace_of_its_own(
    pytester: pytest.Pytester,
) -> None:
    suite(pytester, COMMAND, "second")

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-repeat", "2")

    result.assert_outcomes(passed=2)
    runs = only_results(pytester.path)["cases"]
    assert [r["repetition"] for r in runs] == [0, 1]
    for run in runs:
        assert all(c["passed"] for c in run["checks"]), run["checks"]
        assert len(run["conversation"]) == 2


def test_every_variant_runs_the_whole_conversation(pytester: pytest.Pytester) -> None:
    suite(pytester, COMMAND, "second")

    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-variant", "a=args:--a", "--eval-variant", "b=args:--b"
    )

    result.assert_outcomes(passed=2)
    found = only_results(pytester.path)["cases"]
    assert sorted(r["variant"] for r in found) == ["a", "b"]
    assert [len(r["conversation"]) for r in found] == [2, 2]
