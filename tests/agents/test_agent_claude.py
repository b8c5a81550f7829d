"""The ``claude`` driver against a fake ``claude`` that prints recorded CLI output."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases import process
from pytest_evalcases.agents import make_agent
from pytest_evalcases.agents.base import (
    AgentSettings,
    RunRequest,
    ToolCall,
    Usage,
)
from pytest_evalcases.agents.claude import PERMISSIONS, ClaudeAgent
from pytest_evalcases.kinds import Spent
from tests.helpers.agents import SAMPLES, Driver, recorded_calls, sample_file

MODEL = "claude-sonnet-4-5-20250929"


DRIVER = Driver(ClaudeAgent, "claude", prompt="Commit the staged change.", bare=False)
agent, request, run, run_error = DRIVER.agent, DRIVER.request, DRIVER.run, DRIVER.error


def test_registered_under_its_name() -> None:
    assert isinstance(make_agent(AgentSettings(name="claude")), ClaudeAgent)


# --- command line ---------------------------------------------------------------------


def argv(req: RunRequest, **settings: Any) -> list[str]:
    return list(agent(**settings).invocation(req).argv)


def test_default_command_line(tmp_path: Path) -> None:
    # Without permission arguments of the user's, an eval run may edit and run commands.
    assert argv(request(tmp_path, prompt="fix it")) == [
        "claude",
        *("-p", "fix it", "--output-format", "json"),
        *("--permission-mode", "acceptEdits", "--allowedTools", "Bash"),
        *STRICT,
    ]


#: What every command line ends with: no MCP server but the run's own (docs/mcp.md).
STRICT = ["--strict-mcp-config"]
#: The driver's default permission arguments, as they end the command line.
DEFAULTS = [*(arg for default in PERMISSIONS for arg in default.args), *STRICT]
MODE = ["--permission-mode", "acceptEdits"]
TOOLS = ["--allowedTools", "Bash"]


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        # The README's arguments: their own mode keeps the default tools (Bash).
        (("--model", "claude-sonnet-4-5", "--permission-mode", "acceptEdits"), TOOLS),
        (("--permission-mode", "plan"), TOOLS),
        (("--permission-mode=default",), TOOLS),
        (("--dangerously-skip-permissions",), TOOLS),
        # Their own tools replace the default tools, and keep the default mode.
        (("--allowedTools", "Read"), MODE),
        (("--allowed-tools=Edit",), MODE),
        # A refusal of theirs adds to both.
        (("--disallowedTools", "Bash(git commit:*)"), MODE + TOOLS),
        (("--disallowed-tools=WebFetch",), MODE + TOOLS),
        (("--permission-mode", "plan", "--allowedTools", "Read"), []),
    ],
)
def test_permission_arguments_of_the_users_add_to_the_defaults_and_replace_the_same(
    tmp_path: Path, given: tuple[str, ...], kept: list[str]
) -> None:
    got = argv(request(tmp_path, prompt="fix it"), args=given)
    assert got == ["claude", "-p", "fix it", "--output-format", "json", *given, *kept, *STRICT]


def test_bare_model_and_extra_args_in_that_order(tmp_path: Path) -> None:
    got = argv(
        request(tmp_path, prompt="fix it", bare=True),
        model="opus",
        args=("--max-turns", "5"),
    )
    # A bare run loads the workspace's instructions explicitly (docs/agents.md).
    assert got == [
        "claude",
        *("-p", "fix it", "--output-format", "json", "--bare", "--add-dir", str(tmp_path)),
        *("--model", "opus", "--max-turns", "5"),
        *DEFAULTS,
    ]


@pytest.mark.parametrize(("needs", "setting"), [(True, False), (False, True)])
def test_transcript_switches_to_stream_json(tmp_path: Path, needs: bool, setting: bool) -> None:
    got = argv(request(tmp_path, prompt="p", needs_transcript=needs), transcript=setting)
    assert got == ["claude", "-p", "p", "--output-format", "stream-json", "--verbose", *DEFAULTS]


def test_prompt_starting_with_a_dash_goes_to_stdin(tmp_path: Path) -> None:
    seen = DRIVER.recorded_run(
        tmp_path, sample="claude-json-success.json", prompt="--help is not an option here"
    )
    assert seen["argv"] == ["-p", "--output-format", "json", *DEFAULTS]
    assert seen["stdin"] == "--help is not an option here"
    assert seen["cwd"] == str(tmp_path)


# --- successful runs ------------------------------------------------------------------


def test_json_success(tmp_path: Path) -> None:
    result = run(request(tmp_path, sample="claude-json-success.json"))
    assert result.text == (
        "Committed the staged change as `fix(auth): correct token expiry off-by-one`."
    )
    assert result.usage == Usage(
        input_tokens=14, output_tokens=412, cache_read_tokens=18840, cache_write_tokens=2210
    )
    assert result.cost_usd == pytest.approx(0.04182)
    assert result.models == (MODEL,)
    assert result.duration_ms == 15230
    assert result.num_turns == 6
    assert result.exit_code == 0
    # One JSON object has no transcript: tool checks must not pass on it by accident.
    assert result.tool_calls is None


def test_verbose_array_reads_the_last_result(tmp_path: Path) -> None:
    result = run(request(tmp_path, sample="claude-json-verbose-array.json"))
    assert result.text == "Done."
    assert result.cost_usd == pytest.approx(0.0012)
    assert result.models == (MODEL,)
    assert result.usage.input_tokens == 9
    assert result.tool_calls == ()


def test_stream_json_tool_calls(tmp_path: Path) -> None:
    result = run(request(tmp_path, sample="claude-stream.jsonl", needs_transcript=True))
    assert result.text == "There is one TODO, in src/app.py line 3: handle retries."
    assert result.tool_calls == (
        ToolCall(name="Bash", kind="shell", input="grep -rn TODO src/"),
        ToolCall(name="Read", kind="read", input='{"file_path":"/tmp/ws/tooling-rg-0/src/app.py"}'),
    )
    assert result.usage.input_tokens == 86
    assert result.usage.output_tokens == 90
    assert result.cost_usd == pytest.approx(0.0093)
    assert result.num_turns == 3
    assert result.models == (MODEL,)


def test_model_falls_back_to_the_init_event(tmp_path: Path) -> None:
    lines = (SAMPLES / "claude-stream.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    del last["modelUsage"]
    sample = tmp_path / "no-model-usage.jsonl"
    sample.write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n")
    assert run(request(tmp_path, sample=sample)).models == (MODEL,)


def test_repeated_tool_use_block_counts_once(tmp_path: Path) -> None:
    lines = (SAMPLES / "claude-stream.jsonl").read_text().splitlines()
    sample = tmp_path / "repeated.jsonl"
    sample.write_text("\n".join([lines[0], lines[2], lines[2], *lines[3:]]) + "\n")
    calls = run(request(tmp_path, sample=sample)).tool_calls
    assert calls is not None
    assert [c.name for c in calls] == ["Bash", "Read"]


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("Write", "write"),
        ("Edit", "edit"),
        ("MultiEdit", "edit"),
        ("NotebookEdit", "edit"),
        ("Grep", "search"),
        ("Glob", "search"),
        ("WebFetch", "web"),
        ("WebSearch", "web"),
        ("Task", "other"),
        ("mcp__github__create_issue", "other"),
    ],
)
def test_tool_kinds(tmp_path: Path, name: str, kind: str) -> None:
    event = {
        "type": "assistant",
        "message": {"content": [{"type": "tool_use", "id": "t1", "name": name, "input": {"x": 1}}]},
    }
    result = {"type": "result", "is_error": False, "result": "ok"}
    stdout = f"{json.dumps(event)}\n{json.dumps(result)}\n"
    parsed = agent().parse(
        process.ProcessResult(returncode=0, stdout=stdout, stderr="", duration=0.1),
        request(tmp_path),
    )
    assert parsed.tool_calls == (ToolCall(name=name, kind=kind, input='{"x":1}'),)


def test_result_survives_a_cut_in_the_middle_of_the_stream(tmp_path: Path) -> None:
    lines = (SAMPLES / "claude-stream.jsonl").read_text().splitlines()
    # What process.run leaves of a stream longer than its cap: head, marker, tail.
    stdout = "\n".join(
        [*lines[:2], lines[2][:50], "[... 123 bytes cut by pytest-evalcases ...]", *lines[-2:]]
    )
    cut = process.ProcessResult(
        returncode=0, stdout=stdout, stderr="", duration=1.0, stdout_truncated=True
    )
    result = agent().parse(cut, request(tmp_path))
    assert result.text == "There is one TODO, in src/app.py line 3: handle retries."
    assert result.truncated


# --- errors: no verdict ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "kind", "words"),
    [
        ("claude-not-logged-in.jsonl", "authentication", "Not logged in · Please run /login"),
        ("claude-invalid-key.json", "authentication", "Invalid API key · Fix external API key"),
        ("claude-credit-too-low.json", "billing", "Credit balance is too low"),
        (
            "claude-rate-limited.json",
            "rate-limit",
            "You've hit your limit · resets 1pm (Europe/Lisbon)",
        ),
        ("claude-max-turns.json", "max-turns", "Reached maximum number of turns (8)"),
    ],
)
def test_error_samples(tmp_path: Path, sample: str, kind: str, words: str) -> None:
    error = run_error(request(tmp_path, sample=sample, exit_code=1))
    assert error.kind == kind
    assert words in str(error)
    assert str(error).startswith("claude ")


def test_a_run_stopped_at_its_turn_limit_says_what_it_spent(tmp_path: Path) -> None:
    error = run_error(request(tmp_path, sample="claude-max-turns.json", exit_code=1))
    assert error.spent == Spent(tokens_in=340, tokens_out=2210, cost_usd=0.1175)


def test_is_error_decides_even_with_exit_status_0(tmp_path: Path) -> None:
    # The sample's subtype says "success"; only is_error tells the truth.
    error = run_error(request(tmp_path, sample="claude-invalid-key.json", exit_code=0))
    assert error.kind == "authentication"
    assert "API status 401" in str(error)


@pytest.mark.parametrize(
    ("final", "kind", "message"),
    [
        pytest.param(
            {"type": "result", "is_error": True, "api_error_status": 429, "result": "Slow"},
            "rate-limit",
            "Slow",
            id="status-classifies-an-error-whose-words-do-not",
        ),
        pytest.param(
            {
                "type": "result",
                "subtype": "error_max_budget_usd",
                "is_error": True,
                "errors": ["Reached maximum budget ($0.50)"],
            },
            "budget",
            "Reached maximum budget ($0.50)",
            id="budget-subtype",
        ),
        pytest.param(
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "errors": ["Tool permission stream closed"],
            },
            "agent",
            "Tool permission stream closed",
            id="other-failures-are-agent-errors",
        ),
    ],
)
def test_error_kind_of_a_failed_result(
    tmp_path: Path, final: dict[str, Any], kind: str, message: str
) -> None:
    sample = sample_file(tmp_path, json.dumps(final))
    error = run_error(request(tmp_path, sample=sample, exit_code=1))
    assert error.kind == kind
    assert message in str(error)


def test_bare_auth_failure_points_at_the_api_key(tmp_path: Path) -> None:
    req = request(tmp_path, sample="claude-not-logged-in.jsonl", exit_code=1, bare=True)
    env = {k: v for k, v in req.env.items() if k != "ANTHROPIC_API_KEY"}
    error = run_error(
        RunRequest(prompt="p", workspace=tmp_path, bare=True, timeout=30, env=env),
    )
    assert "ANTHROPIC_API_KEY" in str(error)
    with_key = request(
        tmp_path, sample="claude-not-logged-in.jsonl", exit_code=1, ANTHROPIC_API_KEY="sk-x"
    )
    assert "hint" not in str(run_error(with_key))


def test_stream_cut_after_a_synthetic_error(tmp_path: Path) -> None:
    first_line = (SAMPLES / "claude-not-logged-in.jsonl").read_text().splitlines()[0]
    sample = tmp_path / "cut.jsonl"
    sample.write_text(first_line + "\n")
    error = run_error(request(tmp_path, sample=sample, exit_code=1))
    assert error.kind == "authentication"
    assert "Not logged in" in str(error)


def test_unparseable_output_with_failure_is_a_crash_quoting_stderr(tmp_path: Path) -> None:
    error = run_error(request(tmp_path, exit_code=3, stderr="TypeError: cannot read 'x'\n"))
    assert error.kind == "crash"
    assert "status 3" in str(error)
    assert "TypeError: cannot read 'x'" in str(error)


def test_unparseable_output_with_success_is_a_parse_error(tmp_path: Path) -> None:
    sample = tmp_path / "plain.txt"
    sample.write_text("Committed it. (plain text, not JSON)\n")
    error = run_error(request(tmp_path, sample=sample))
    assert error.kind == "parse"
    assert "plain text, not JSON" in str(error)


REFUSAL = "--dangerously-skip-permissions cannot be used with root/sudo privileges"


def test_root_refusal_says_to_set_is_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    req = request(tmp_path, exit_code=1, stderr=REFUSAL)
    env = {k: v for k, v in req.env.items() if k != "IS_SANDBOX"}
    refused = RunRequest(prompt="p", workspace=tmp_path, bare=False, timeout=30, env=env)
    error = run_error(refused, args=("--dangerously-skip-permissions",))
    assert "IS_SANDBOX=1" in str(error)
    assert REFUSAL in str(error)
    assert error.kind == "config"


def test_no_sandbox_hint_when_it_cannot_be_the_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    sandboxed = request(tmp_path, exit_code=1, stderr=REFUSAL, IS_SANDBOX="1")
    error = run_error(sandboxed, args=("--dangerously-skip-permissions",))
    assert "IS_SANDBOX" not in str(error)
    assert error.kind == "crash"
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    env = {k: v for k, v in sandboxed.env.items() if k != "IS_SANDBOX"}
    as_user = RunRequest(prompt="p", workspace=tmp_path, bare=False, timeout=30, env=env)
    assert "IS_SANDBOX" not in str(run_error(as_user, args=("--dangerously-skip-permissions",)))


def test_timeout(tmp_path: Path) -> None:
    req = request(tmp_path, sample="claude-json-success.json", timeout=1, FAKE_AGENT_SLEEP="60")
    started = time.monotonic()
    error = run_error(req)
    assert error.kind == "timeout"
    assert "timed out after 1s" in str(error)
    assert time.monotonic() - started < 20


def test_missing_binary(tmp_path: Path) -> None:
    error = run_error(request(tmp_path, PATH=str(tmp_path)))
    assert error.kind == "missing"
    assert "'claude' not found" in str(error)


# --- through pytest: FAIL versus ERROR, tool checks -----------------------------------

COMMIT_CASE = """\
id: commit-message
defends: CLAUDE.md
prompt: "Commit the staged change."
checks:
  - type: output_not_matches
    pattern: "fix\\\\(auth\\\\)"
    description: no conventional-commit scope
"""

TOOL_CASES = {
    # Each holds for the stream sample: Bash `grep -rn TODO src/`, then Read.
    "evals/tools-hold": """\
id: tools-hold
defends: CLAUDE.md
prompt: "List the TODOs."
checks:
  - type: tool_called
    tool: Bash
    input: "grep -rn TODO"
  - type: tool_called
    tool: read
  - type: tool_not_called
    tool: shell
    input: "\\\\brg\\\\b"
  - type: tool_not_called
    tool: Write
""",
    "evals/uses-grep": """\
id: uses-grep
defends: CLAUDE.md
prompt: "List the TODOs."
checks:
  - type: tool_not_called
    tool: shell
    input: "grep -r"
    description: use rg, not grep -r
""",
    "evals/never-fetched": """\
id: never-fetched
defends: CLAUDE.md
prompt: "List the TODOs."
checks:
  - type: tool_called
    tool: web
""",
}


def test_check_that_does_not_hold_is_a_failure(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = DRIVER.run_cases(
        pytester, monkeypatch, {"evals/commit-message": COMMIT_CASE}, "claude-json-success.json"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*FAILED*output_not_matches*fix(auth)*"])
    result.stdout.fnmatch_lines(
        ["tokens 14 in / 412 out · cost $0.0418 · model claude-sonnet-4-5-20250929"]
    )
    assert result.ret == 1


def test_credential_problem_is_an_error_with_the_cli_message(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = DRIVER.run_cases(
        pytester,
        monkeypatch,
        {"evals/commit-message": COMMIT_CASE},
        "claude-invalid-key.json",
        exit_code=1,
    )
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "Invalid API key · Fix external API key" in out
    assert "no verdict (authentication)" in out
    assert result.ret == 2


def test_tool_checks_on_the_stream_transcript(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    record = pytester.path / "record.json"
    monkeypatch.setenv("FAKE_AGENT_RECORD", str(record))
    result = DRIVER.run_cases(pytester, monkeypatch, TOOL_CASES, "claude-stream.jsonl", "-rA")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines_random(
        [
            "PASSED*tools-hold*",
            "FAILED*uses-grep*",
            "FAILED*never-fetched*",
            "*tool 'shell' with input 'grep -r' must not be called; call Bash*grep -rn TODO src/*",
            "*no call of tool 'web' (tools called: Bash, Read)*",
        ]
    )
    # A case with tool checks asks Claude Code for its transcript.
    runs = [call["argv"] for call in recorded_calls(record)]
    assert len(runs) == 3
    for argv in runs:
        assert argv[argv.index("--output-format") + 1] == "stream-json"
        assert "--verbose" in argv


ANSWERS_CASE = """\
id: answers
defends: CLAUDE.md
prompt: "Commit the staged change."
checks:
  - type: output_matches
    pattern: "\\\\S"
    description: says something
"""


@pytest.mark.parametrize(
    ("options", "sample", "output_format"),
    [
        ([], "claude-json-success.json", ["--output-format", "json"]),
        (
            ["--eval-transcript"],
            "claude-stream.jsonl",
            ["--output-format", "stream-json", "--verbose"],
        ),
    ],
    ids=["default", "eval-transcript"],
)
def test_eval_transcript_asks_for_the_stream_without_tool_checks(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    options: list[str],
    sample: str,
    output_format: list[str],
) -> None:
    record = pytester.path / "record.json"
    monkeypatch.setenv("FAKE_AGENT_RECORD", str(record))

    result = DRIVER.run_cases(
        pytester, monkeypatch, {"evals/answers": ANSWERS_CASE}, sample, *options
    )

    result.assert_outcomes(passed=1)
    calls = recorded_calls(record)
    runs = [call["argv"] for call in calls]
    workspace = calls[0]["cwd"]
    assert runs == [
        [
            *("-p", "Commit the staged change.", *output_format),
            *("--bare", "--add-dir", workspace, *DEFAULTS),
        ]
    ]


# --- the recording proxy (docs/replay.md) ---------------------------------------------


@pytest.mark.parametrize(
    ("env", "upstream"),
    [
        ({}, "https://api.anthropic.com"),
        ({"ANTHROPIC_BASE_URL": "https://gateway.example"}, "https://gateway.example"),
        ({"CLAUDE_CODE_USE_BEDROCK": "1"}, None),
    ],
)
def test_the_model_api_is_the_base_url_the_environment_names(
    env: dict[str, str], upstream: str | None
) -> None:
    api = ClaudeAgent(AgentSettings(name="claude")).model_api(env)
    assert (api.upstream if api is not None else None) == upstream
    if api is not None:
        assert api.variable == "ANTHROPIC_BASE_URL"


@pytest.mark.parametrize(("follow_up", "flag"), [(False, "--session-id"), (True, "--resume")])
def test_a_conversation_names_its_session_up_front_and_resumes_it(
    tmp_path: Path, follow_up: bool, flag: str
) -> None:
    turn = dataclasses.replace(
        request(tmp_path), session="11111111-2222-4333-8444-555555555555", follow_up=follow_up
    )

    argv = agent().invocation(turn).argv

    assert argv[argv.index(flag) + 1] == "11111111-2222-4333-8444-555555555555"
    # Every flag of the first turn again: a resumed session keeps none of them.
    assert "--allowedTools" in argv
    assert "--session-id" not in agent().invocation(request(tmp_path)).argv
