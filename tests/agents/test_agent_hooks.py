"""The hooks each agent CLI shows it ran, read from the real outputs kept in
tests/agent_samples/ (docs/config-contract.md, "Hooks and refusals: what each CLI
shows"), and the ``hook_fired`` / ``hook_not_fired`` checks graded from them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_evalcases.agents.base import HookRun
from pytest_evalcases.agents.claude import ClaudeAgent
from pytest_evalcases.agents.codex import CodexAgent
from pytest_evalcases.agents.gemini import GeminiAgent
from tests.helpers.agents import SAMPLES, Driver
from tests.helpers.results import only_results

CLAUDE = Driver(ClaudeAgent, "claude", bare=False)
CODEX = Driver(CodexAgent, "codex")
GEMINI = Driver(GeminiAgent, "gemini")

#: The blocking hook of the samples, as the experiments configured it.
BLOCKING = "echo fired >> /tmp/case/marker.txt; echo 'no push' >&2; exit 2"


def stderr_of(name: str) -> str:
    return (SAMPLES / name).read_text()


# --- what each driver reads ------------------------------------------------------------


def test_claude_reads_the_hooks_from_its_hook_events(tmp_path: Path) -> None:
    """Claude Code 2.1.197 names a hook by its event and tool, not by its command; a
    refusal's tool result quotes the command."""
    req = CLAUDE.request(tmp_path, sample="claude-stream-hook-blocked.jsonl", needs_transcript=True)
    told = CLAUDE.run(replace(req, hook_events=True))

    assert told.hooks == (
        HookRun("UserPromptSubmit", None, "UserPromptSubmit"),
        HookRun("PreToolUse", BLOCKING, "PreToolUse:Bash", blocked=True),
        HookRun("Stop", None, "Stop"),
    )
    # Not asked for the hook events: it cannot say.
    assert CLAUDE.run(req).hooks is None

    fired = CLAUDE.run(
        replace(
            CLAUDE.request(tmp_path, sample="claude-stream-hooks-fired.jsonl"), hook_events=True
        )
    )
    assert [(run.event, run.name, run.blocked) for run in fired.hooks or ()] == [
        ("UserPromptSubmit", "UserPromptSubmit", False),
        ("PreToolUse", "PreToolUse:Bash", False),
        ("PostToolUse", "PostToolUse:Bash", False),
        ("Stop", "Stop", False),
    ]


def test_claude_asks_for_the_stream_and_hook_events_for_a_hook_check(tmp_path: Path) -> None:
    argv = CLAUDE.agent().invocation(replace(CLAUDE.request(tmp_path), hook_events=True)).argv
    # The case's needs_transcript holds for a hook check; the plugin asks for both.
    assert "--include-hook-events" not in argv
    both = replace(CLAUDE.request(tmp_path, needs_transcript=True), hook_events=True)
    assert "--include-hook-events" in CLAUDE.agent().invocation(both).argv


def test_gemini_reads_the_hooks_from_its_debug_lines(tmp_path: Path) -> None:
    """Gemini CLI 0.61 prints no hook events in -o stream-json; --debug names each hook's
    command on stderr."""
    req = GEMINI.request(
        tmp_path,
        sample="gemini-stream-hook-blocked.jsonl",
        stderr=stderr_of("gemini-stream-hook-blocked.stderr"),
    )
    argv = GEMINI.agent().invocation(replace(req, hook_events=True)).argv
    assert "--debug" in argv
    assert argv[argv.index("--output-format") + 1] == "stream-json"

    blocked = GEMINI.run(replace(req, hook_events=True))
    assert blocked.hooks == (
        HookRun("BeforeAgent", "echo beforeagent >> /tmp/case/marker.txt"),
        HookRun("BeforeTool", BLOCKING, blocked=True),
        HookRun("AfterAgent", "echo afteragent >> /tmp/case/marker.txt"),
    )
    assert GEMINI.run(req).hooks is None

    fired = GEMINI.run(
        replace(
            GEMINI.request(
                tmp_path,
                sample="gemini-stream-hooks-fired.jsonl",
                stderr=stderr_of("gemini-stream-hooks-fired.stderr"),
            ),
            hook_events=True,
        )
    )
    assert [(run.event, run.blocked) for run in fired.hooks or ()] == [
        ("BeforeAgent", False),
        ("BeforeTool", False),
        ("AfterTool", False),
        ("AfterAgent", False),
    ]


def test_codex_cannot_show_the_hooks_it_ran(tmp_path: Path) -> None:
    req = CODEX.request(
        tmp_path, sample="codex-hook-blocked.jsonl", stderr=stderr_of("codex-hook-blocked.stderr")
    )
    assert CODEX.run(replace(req, hook_events=True)).hooks is None


# --- the checks, in a session ----------------------------------------------------------

HOOK_CASE = """\
id: no-push
defends: .claude/settings.json
prompt: p
checks:
{checks}
"""


def case(*checks: str) -> dict[str, str]:
    return {"evals/no-push": HOOK_CASE.format(checks="".join(f"  - {c}\n" for c in checks))}


def checks_of(pytester: pytest.Pytester) -> dict[str, dict[str, object]]:
    return {c["id"]: c for c in only_results(pytester.path)["cases"][0]["checks"]}


def test_hook_fired_and_hook_not_fired_grade_the_hooks_that_ran(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = CLAUDE.run_cases(
        pytester,
        monkeypatch,
        case(
            "{id: pre, type: hook_fired, event: PreToolUse}",
            "{id: blocking, type: hook_fired, event: PreToolUse, hook: 'no push'}",
            "{id: stop, type: hook_fired, event: Stop}",
            "{id: no-session-start, type: hook_not_fired, event: SessionStart}",
            "{id: blocked, type: tool_blocked, tool: shell, by: hook}",
        ),
        "claude-stream-hook-blocked.jsonl",
    )

    result.assert_outcomes(passed=1)
    checks = checks_of(pytester)
    assert checks["blocking"]["message"] == (
        f"PreToolUse hook 'no push' ran 1 time(s), 1 of them refusing: \"PreToolUse: {BLOCKING}\""
    )


def test_hook_fired_fails_naming_the_event_when_no_such_hook_ran(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same run graded against a hook that is not configured: red, never an error."""
    result = CLAUDE.run_cases(
        pytester,
        monkeypatch,
        case(
            "{id: session, type: hook_fired, event: SessionStart}",
            "{id: not-pre, type: hook_not_fired, event: PreToolUse}",
        ),
        "claude-stream-hooks-fired.jsonl",
    )

    result.assert_outcomes(failed=1)
    checks = checks_of(pytester)
    assert checks["session"]["message"] == (
        "no SessionStart hook ran (hooks that ran, by event: PostToolUse, PreToolUse, "
        "Stop, UserPromptSubmit)"
    )
    assert checks["not-pre"]["message"] == ("PreToolUse hook must not run; ran 'PreToolUse:Bash'")


def test_a_hook_command_the_output_does_not_name_is_an_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code names a hook that did not refuse by its event and tool only: a check
    of its command reaches no verdict, rather than failing (or passing) blind."""
    result = CLAUDE.run_cases(
        pytester,
        monkeypatch,
        case("{type: hook_not_fired, event: PreToolUse, hook: audit\\.sh}"),
        "claude-stream-hooks-fired.jsonl",
    )

    result.assert_outcomes(errors=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["error_kind"] == "no-transcript"
    assert record["error"].startswith(
        "hook_not_fired PreToolUse hook 'audit\\.sh': the claude agent ran 1 PreToolUse "
        "hook(s) and its output does not name their commands"
    )


def test_hook_checks_on_codex_are_errors_naming_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = CODEX.run_cases(
        pytester, monkeypatch, case("{type: hook_not_fired, event: PreToolUse}"), "codex-exec.jsonl"
    )

    result.assert_outcomes(errors=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["error_kind"] == "no-transcript"
    assert record["error"].startswith(
        "hook_not_fired PreToolUse: the codex agent's output cannot show the hooks it ran, "
        "so the check reached no verdict"
    )


def test_gemini_hook_checks_read_its_debug_lines(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_STDERR", stderr_of("gemini-stream-hook-blocked.stderr"))
    result = GEMINI.run_cases(
        pytester,
        monkeypatch,
        case(
            "{type: hook_fired, event: BeforeTool, hook: 'no push'}",
            "{type: hook_not_fired, event: AfterTool}",
            "{type: tool_blocked, tool: shell, input: 'echo pushed', by: hook}",
        ),
        "gemini-stream-hook-blocked.jsonl",
    )

    result.assert_outcomes(passed=1)
