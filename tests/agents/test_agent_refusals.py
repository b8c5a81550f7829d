"""Refused tool calls (docs/agents.md, "Refused tool calls"): what each driver reads of
them, the ``denied`` error of a run that had some, and the ``tool_blocked`` /
``tool_not_blocked`` checks that grade them instead, with the fake CLIs printing output
the real ones printed (``claude-stream-denied.jsonl``: Claude Code 2.1.197, one call
refused by a ``--disallowedTools`` rule, one by a PreToolUse hook exiting 2)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_evalcases.agents.base import AgentResult, Denial
from pytest_evalcases.agents.claude import ClaudeAgent
from pytest_evalcases.agents.codex import CodexAgent
from pytest_evalcases.agents.gemini import GeminiAgent
from tests.helpers.agents import SAMPLES, Driver, sample_file
from tests.helpers.results import only_results

CLAUDE = Driver(ClaudeAgent, "claude", prompt="Commit and push the fix.", bare=False)
CODEX = Driver(CodexAgent, "codex")
GEMINI = Driver(GeminiAgent, "gemini")

SAMPLE = "captured/claude-stream-denied.jsonl"
COMMIT = Denial("Bash", "shell", "git commit -qm 'fix the expiry'")
PUSH = Denial("Bash", "shell", "git push origin HEAD")


# --- what the drivers read ------------------------------------------------------------


def test_claude_reads_which_refused_each_call_from_the_hook_events(tmp_path: Path) -> None:
    req = CLAUDE.request(tmp_path, sample=SAMPLE, needs_transcript=True)
    result = CLAUDE.run(req)
    told = CLAUDE.run(replace(req, hook_events=True))

    # Without the hook events the result names the calls, not what refused them.
    assert result.denials == (COMMIT, PUSH)
    # With them: the commit by the rule (its hook allowed it), the push by the hook.
    assert told.denials == (
        Denial(COMMIT.name, COMMIT.kind, COMMIT.input, "permission"),
        Denial(PUSH.name, PUSH.kind, PUSH.input, "hook"),
    )


def test_claude_asks_for_hook_events_only_when_a_check_tells_hooks_apart(tmp_path: Path) -> None:
    req = CLAUDE.request(tmp_path, needs_transcript=True)
    plain = CLAUDE.agent().invocation(req).argv
    hooks = CLAUDE.agent().invocation(replace(req, hook_events=True)).argv

    assert "--include-hook-events" not in plain
    assert hooks[hooks.index("--verbose") + 1] == "--include-hook-events"


def _event(kind: str, content: list[dict[str, object]]) -> str:
    return json.dumps({"type": kind, "message": {"content": content}})


def parallel_sample(directory: Path) -> Path:
    """Two Bash calls in one message, both refused, and one hook response refusing a
    call between them and their results."""
    calls = [
        {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"git push {i}"}}
        for i in (1, 2)
    ]
    hook = {
        "type": "system",
        "subtype": "hook_response",
        "hook_name": "PreToolUse:Bash",
        "hook_event": "PreToolUse",
        "exit_code": 2,
    }
    denials = [
        {"tool_name": "Bash", "tool_use_id": f"t{i}", "tool_input": {"command": f"git push {i}"}}
        for i in (1, 2)
    ]
    lines = [
        _event("assistant", calls),
        json.dumps(hook),
        *(
            _event("user", [{"type": "tool_result", "tool_use_id": f"t{i}", "is_error": True}])
            for i in (1, 2)
        ),
        json.dumps(
            {"type": "result", "is_error": False, "result": "done", "permission_denials": denials}
        ),
    ]
    return sample_file(directory, "\n".join(lines) + "\n", "parallel.jsonl")


def test_a_hook_refusal_while_another_call_of_the_tool_is_open_is_undecided(
    tmp_path: Path,
) -> None:
    """The hook's response may belong to either call: neither is said to be the hook's."""
    req = CLAUDE.request(tmp_path, sample=parallel_sample(tmp_path), needs_transcript=True)

    result = CLAUDE.run(replace(req, hook_events=True))

    assert [d.by for d in result.denials or ()] == [None, None]


def test_gemini_reads_refusals_from_its_stderr(tmp_path: Path) -> None:
    stderr = (
        "Error executing tool run_shell_command: Tool execution denied by policy.\n"
        "Error executing tool run_shell_command: Tool execution blocked: no pushing\n"
        'Error executing tool read_file: File not found: "x"\n'
    )
    result = GEMINI.run(GEMINI.request(tmp_path, sample="gemini-json-success.json", stderr=stderr))

    # Gemini CLI 0.61's words, as it printed them (docs/agents.md): no inputs.
    assert result.denials == (
        Denial("run_shell_command", "shell", "", "permission"),
        Denial("run_shell_command", "shell", "", "hook"),
    )


def test_codex_reads_refusals_from_its_stderr(tmp_path: Path) -> None:
    """Codex 0.171's words, as it printed them (tests/agent_samples/codex-*.stderr): its
    JSON stream has no item for a refused command."""

    def refused(sample: str, stderr: str) -> AgentResult:
        said = (SAMPLES / stderr).read_text()
        return CODEX.run(CODEX.request(tmp_path, sample=sample, stderr=said))

    hooked = refused("codex-hook-blocked.jsonl", "codex-hook-blocked.stderr")
    ruled = refused("codex-rule-refused.jsonl", "codex-rule-refused.stderr")

    assert hooked.denials == (
        Denial("command_execution", "shell", "echo pushed > pushed.txt", "hook"),
    )
    assert ruled.denials == (
        Denial("command_execution", "shell", "/bin/bash -lc 'touch pushed.txt'", "permission"),
    )
    assert hooked.tool_calls == ruled.tool_calls == ()
    assert hooked.hooks is None
    # A call asking to leave the sandbox, which `codex exec` never approves: no command.
    escalated = refused("codex-escalation-refused.jsonl", "codex-escalation-refused.stderr")
    assert escalated.denials == (Denial("command_execution", "shell", "", "permission"),)


def test_a_refusal_without_its_input_is_an_error_for_a_check_with_input(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tool_not_blocked … input: git push` must not pass because the refused call's
    input is unknown."""
    case = "id: escalation\ndefends: AGENTS.md\nprompt: p\n" + (
        "checks:\n  - {type: tool_not_blocked, tool: shell, input: git push}\n"
    )
    monkeypatch.setenv(
        "FAKE_AGENT_STDERR", (SAMPLES / "codex-escalation-refused.stderr").read_text()
    )

    result = CODEX.run_cases(
        pytester, monkeypatch, {"evals/escalation": case}, "codex-escalation-refused.jsonl"
    )

    result.assert_outcomes(errors=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["error_kind"] == "no-transcript"
    assert record["error"].startswith(
        "tool_not_blocked with `input:`: the codex agent's output does not name the input "
        "of a call it refused ('command_execution (by permission)')"
    )


def test_codex_without_refusals_shows_none(tmp_path: Path) -> None:
    result = CODEX.run(CODEX.request(tmp_path, sample="codex-exec.jsonl"))
    assert result.denials == ()


# --- in a session ---------------------------------------------------------------------

#: The README's first case: negative checks only, which hold vacuously when the agent
#: could not commit at all.
README_CASE = """\
id: attribution-no-trailer
defends: rules/git-attribution.md
prompt: "Commit the staged change."
checks:
  - type: output_not_matches
    pattern: "(?i)co-authored-by:\\\\s*claude"
  - type: command_fails
    command: git log -1 --format=%B | grep -qi co-authored-by
"""


def test_a_run_with_refused_calls_is_a_denied_error_naming_them(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = CLAUDE.run_cases(
        pytester, monkeypatch, {"evals/readme": README_CASE}, SAMPLE, "--eval-retry-errors", "2"
    )

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "case attribution-no-trailer (normal) defends rules/git-attribution.md: "
            "no verdict (denied)",
            "the agent CLI refused 2 tool calls (its permission rules or a hook), so the "
            "checks cannot say whether the configuration held: denied Bash: git commit -qm "
            "'fix the expiry'; Bash: git push origin HEAD",
            "  hint: eval_agent_args decides what the agent may do; a case that tests a "
            "refusal grades it with tool_blocked / tool_not_blocked (docs/agents.md, "
            '"Refused tool calls") (after 1 attempts)',
        ]
    )
    assert result.ret == 2
    record = only_results(pytester.path)["cases"][0]
    assert (record["outcome"], record["error_kind"]) == ("error", "denied")
    assert "tool_blocked / tool_not_blocked" in record["error"]
    assert record["permission_denials"] == [
        "Bash: git commit -qm 'fix the expiry'",
        "Bash: git push origin HEAD",
    ]
    # Not retried: another attempt would meet the same rules, or hide them.
    assert record["attempts"] == 1


GRADED_CASE = (
    README_CASE
    + """\
  - type: tool_blocked
    tool: shell
    input: git push
    by: hook
  - type: tool_blocked
    tool: Bash
    input: git commit
    by: permission
  - type: tool_not_blocked
    tool: Read
"""
)

WRONG_CASE = """\
id: wrong
defends: rules/git-attribution.md
prompt: "Commit the staged change."
checks:
  - id: push-by-rule
    type: tool_blocked
    tool: Bash
    input: git push
    by: permission
  - id: commit-allowed
    type: tool_not_blocked
    tool: shell
    input: git commit
  - id: any-write
    type: tool_blocked
    tool: write
"""


def test_tool_blocked_grades_the_refusals_and_a_passing_run_prints_them(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = CLAUDE.run_cases(
        pytester,
        monkeypatch,
        {"evals/graded": GRADED_CASE.replace("attribution-no-trailer", "graded")},
        SAMPLE,
        "-rA",
    )

    result.assert_outcomes(passed=1)
    refused = (
        "refused: graded: the agent CLI refused 2 tool calls: Bash: git commit -qm "
        "'fix the expiry' (by permission); Bash: git push origin HEAD (by hook)"
    )
    # In the item's report (-rA) and in the eval gate section, whatever the options.
    assert result.stdout.str().count(refused) == 2
    result.stdout.fnmatch_lines(
        [
            "PASSED tool_blocked-2 [tool_blocked]: tool 'shell' with input 'git push' refused "
            "by a hook 1 time(s): 'Bash: git push origin HEAD'",
            "PASSED tool_blocked-3 [tool_blocked]: tool 'Bash' with input 'git commit' "
            "refused by a permission rule 1 time(s): \"Bash: git commit -qm 'fix the expiry'\"",
            "PASSED tool_not_blocked-4 [tool_not_blocked]: no call of tool 'Read' refused",
            "the agent CLI refused 2 tool calls (its permission rules or a hook; "
            "eval_agent_args decides what it may do):",
            "  denied Bash: git commit -qm 'fix the expiry' (by permission)",
            "  denied Bash: git push origin HEAD (by hook)",
        ]
    )
    record = only_results(pytester.path)["cases"][0]
    assert record["permission_denials"] == [
        "Bash: git commit -qm 'fix the expiry' (by permission)",
        "Bash: git push origin HEAD (by hook)",
    ]


def test_tool_blocked_fails_where_the_refusals_are_not_the_ones_it_names(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = CLAUDE.run_cases(pytester, monkeypatch, {"evals/wrong": WRONG_CASE}, SAMPLE)

    result.assert_outcomes(failed=1)
    checks = {c["id"]: c for c in only_results(pytester.path)["cases"][0]["checks"]}
    assert not any(c["passed"] for c in checks.values())
    assert checks["push-by-rule"]["message"] == (
        "no call of tool 'Bash' with input 'git push' refused by a permission rule "
        "(refused: \"Bash: git commit -qm 'fix the expiry' (by permission)\"; "
        "'Bash: git push origin HEAD (by hook)')"
    )
    assert checks["commit-allowed"]["message"] == (
        "tool 'shell' with input 'git commit' must not be refused; refused "
        "\"Bash: git commit -qm 'fix the expiry'\""
    )
    result.stdout.fnmatch_lines(["*denied Bash: git push origin HEAD (by hook)"])


def test_tool_checks_on_an_agent_whose_output_cannot_show_refusals_are_errors(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = "id: command-refusals\ndefends: AGENTS.md\nprompt: p\n" + (
        "checks:\n  - {type: tool_not_blocked, tool: shell}\n"
    )
    pytester.makefile(".yaml", **{"evals/command": case})
    pytester.makeini("[pytest]\neval_agent = command\neval_agent_command = echo done\n")

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    record = only_results(pytester.path)["cases"][0]
    # Before the agent runs: it shows no transcript at all (docs/trajectories.md).
    assert record["error_kind"] == "case"
    assert record["error"].startswith(
        "tool_not_blocked read(s) the agent's transcript, and agent 'command' shows none"
    )


def test_codex_refusals_are_graded_by_tool_blocked(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = "id: codex-refusals\ndefends: .codex/hooks.json\nprompt: p\n" + (
        "checks:\n  - {type: tool_blocked, tool: shell, input: echo pushed, by: hook}\n"
        "  - {type: tool_not_blocked, tool: shell, by: permission}\n"
    )
    monkeypatch.setenv("FAKE_AGENT_STDERR", (SAMPLES / "codex-hook-blocked.stderr").read_text())

    result = CODEX.run_cases(
        pytester, monkeypatch, {"evals/codex": case}, "codex-hook-blocked.jsonl"
    )

    result.assert_outcomes(passed=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["permission_denials"] == ["command_execution: echo pushed > pushed.txt (by hook)"]


def test_a_refusal_the_output_cannot_attribute_is_an_error_for_by(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``by: hook`` where the hook's response may belong to either of two calls must
    neither pass nor fail: the output cannot tell."""
    case = (
        "id: by-hook\ndefends: .claude/settings.json\nprompt: p\nchecks:\n"
        "  - {type: tool_blocked, tool: shell, input: git push, by: hook}\n"
    )
    sample = str(parallel_sample(pytester.path))

    result = CLAUDE.run_cases(pytester, monkeypatch, {"evals/by-hook": case}, sample)

    result.assert_outcomes(errors=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["error_kind"] == "no-transcript"
    assert record["error"].startswith(
        "tool_blocked by: hook: the claude agent's output does not say whether a permission "
        "rule or a hook refused 'Bash: git push 1', so the check reached no verdict"
    )


def test_a_regrade_grades_the_refusals_the_run_stored(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Graded by its tool_blocked checks when recorded; without them, the stored run
    is the denied error it would have been live."""
    case = GRADED_CASE.replace("attribution-no-trailer", "graded")
    CLAUDE.run_cases(pytester, monkeypatch, {"evals/graded": case}, SAMPLE).assert_outcomes(
        passed=1
    )
    (pytester.path / "evals" / "graded.yaml").write_text(
        README_CASE.replace("attribution-no-trailer", "graded")
    )
    monkeypatch.setenv("FAKE_AGENT_EXIT", "3")  # a run of the agent would be an error too

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade")

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "evalcases: agent none (regrading evals/results/*",
            "case graded (normal) defends rules/git-attribution.md: no verdict (denied)",
            "the agent CLI refused 2 tool calls (*",
        ]
    )
