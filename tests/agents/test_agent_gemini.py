"""The ``gemini`` driver against a fake ``gemini`` that prints recorded CLI output."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_evalcases.agents import make_agent
from pytest_evalcases.agents.base import (
    AgentSettings,
    Denial,
    ToolCall,
    Usage,
)
from pytest_evalcases.agents.gemini import PERMISSIONS, GeminiAgent
from tests.helpers.agents import SAMPLES, Driver, sample_file

SUCCESS = json.loads((SAMPLES / "gemini-json-success.json").read_text())


#: The driver's default permission arguments, as they end the command line.
DEFAULTS = [arg for default in PERMISSIONS for arg in default.args]

DRIVER = Driver(GeminiAgent, "gemini", prompt="Split parse_config into smaller functions.")
agent, request, run, run_error = DRIVER.agent, DRIVER.request, DRIVER.run, DRIVER.error


def test_registered_under_its_name() -> None:
    assert isinstance(make_agent(AgentSettings(name="gemini")), GeminiAgent)


# --- command line ---------------------------------------------------------------------


def test_default_command_line(tmp_path: Path) -> None:
    got = agent().invocation(request(tmp_path, prompt="fix it"))
    # Without an approval argument of the user's, every tool call is approved.
    assert got.argv == (
        *("gemini", "-p", "fix it", "--output-format", "json"),
        *("--approval-mode", "yolo"),
    )


def test_every_run_trusts_its_workspace_in_its_own_environment(tmp_path: Path) -> None:
    # The plugin's fresh copy of the configuration under test (tests/agents/
    # test_real_failfast.py runs the real CLI without the user trusting anything).
    got = agent().invocation(request(tmp_path, prompt="p"))
    assert got.env == (("GEMINI_CLI_TRUST_WORKSPACE", "true"),)


def test_model_and_extra_args(tmp_path: Path) -> None:
    got = agent(model="gemini-2.5-pro", args=("--yolo",)).invocation(request(tmp_path, prompt="p"))
    assert got.argv == (
        *("gemini", "-p", "p", "--output-format", "json"),
        *("-m", "gemini-2.5-pro", "--yolo"),
    )


def test_a_policy_of_the_users_adds_to_the_default_approval_mode(tmp_path: Path) -> None:
    got = agent(args=("--policy", "deny.toml")).invocation(request(tmp_path, prompt="p"))
    assert got.argv == (
        *("gemini", "-p", "p", "--output-format", "json"),
        *("--policy", "deny.toml", "--approval-mode", "yolo"),
    )


def test_prompt_starting_with_a_dash_stays_a_value(tmp_path: Path) -> None:
    seen = DRIVER.recorded_run(
        tmp_path, sample="gemini-json-success.json", prompt="- list the TODOs"
    )
    assert seen["argv"] == ["--prompt=- list the TODOs", "--output-format", "json", *DEFAULTS]


# --- successful runs ------------------------------------------------------------------


def test_success_sample(tmp_path: Path) -> None:
    result = run(request(tmp_path, sample="gemini-json-success.json"))
    assert result.text == (
        "I refactored `parse_config` into three functions and kept the public signature."
    )
    assert result.usage == Usage(input_tokens=18230, output_tokens=1204, cache_read_tokens=0)
    assert result.models == ("gemini-2.5-pro",)
    assert result.cost_usd is None
    # Counts only: two read_file calls and one replace, inputs unknown.
    assert result.tool_calls == (
        ToolCall(name="read_file", kind="read", input=""),
        ToolCall(name="read_file", kind="read", input=""),
        ToolCall(name="replace", kind="edit", input=""),
    )
    # Its transcript (-o stream-json) has them.
    assert GeminiAgent.tool_inputs is True


def test_pretty_printed_output_after_a_log_line(tmp_path: Path) -> None:
    sample = sample_file(tmp_path, "Loaded cached credentials.\n" + json.dumps(SUCCESS, indent=2))
    assert run(request(tmp_path, sample=sample)).text.startswith("I refactored")


def test_tokens_are_summed_over_models(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(SUCCESS))
    doc["stats"]["models"]["gemini-2.5-flash"] = {
        "tokens": {"prompt": 100, "candidates": 7, "cached": 40}
    }
    result = run(request(tmp_path, sample=sample_file(tmp_path, json.dumps(doc))))
    assert result.usage == Usage(input_tokens=18330, output_tokens=1211, cache_read_tokens=40)
    assert result.models == ("gemini-2.5-pro", "gemini-2.5-flash")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("run_shell_command", "shell"),
        ("read_many_files", "read"),
        ("write_file", "write"),
        ("edit", "edit"),
        ("glob", "search"),
        ("search_file_content", "search"),
        ("grep", "search"),
        ("web_fetch", "web"),
        ("google_web_search", "web"),
        ("save_memory", "other"),
    ],
)
def test_tool_kinds(tmp_path: Path, name: str, kind: str) -> None:
    doc = {"response": "ok", "stats": {"tools": {"byName": {name: {"count": 1}}}}}
    result = run(request(tmp_path, sample=sample_file(tmp_path, json.dumps(doc))))
    assert result.tool_calls == (ToolCall(name=name, kind=kind, input=""),)


def test_no_stats_means_no_transcript(tmp_path: Path) -> None:
    result = run(request(tmp_path, sample=sample_file(tmp_path, '{"response": "ok"}')))
    assert result.text == "ok"
    assert result.tool_calls is None


# --- errors: no verdict ---------------------------------------------------------------


def test_auth_error_sample(tmp_path: Path) -> None:
    error = run_error(request(tmp_path, sample="gemini-json-auth-error.json", exit_code=41))
    assert error.kind == "authentication"
    assert "Could not load the default credentials. Please set GEMINI_API_KEY." in str(error)
    assert "FatalAuthenticationError" in str(error)


def test_auth_error_json_on_stderr(tmp_path: Path) -> None:
    # What Gemini CLI 0.61.0 printed when run here without credentials: nothing on
    # stdout, the error object on stderr, exit status 41.
    said = json.dumps(
        {
            "session_id": "a84b089b-2546-4d64-baf6-a39b8c060abf",
            "error": {
                "type": "Error",
                "message": "Please set an Auth method in your ~/.gemini/settings.json or "
                "specify one of the following environment variables before running: "
                "GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA",
                "code": 41,
            },
        },
        indent=2,
    )
    error = run_error(request(tmp_path, exit_code=41, stderr=said + "\n"))
    assert error.kind == "authentication"
    assert str(error).startswith("gemini could not authenticate: Please set an Auth method")
    assert "(Error, exit status 41)" in str(error)
    assert "session_id" not in str(error)


@pytest.mark.parametrize(
    ("status", "kind"),
    [(41, "authentication"), (42, "input"), (52, "config"), (53, "max-turns")],
)
def test_documented_exit_statuses_without_json(tmp_path: Path, status: int, kind: str) -> None:
    error = run_error(request(tmp_path, exit_code=status, stderr=f"Fatal: reason {status}\n"))
    assert error.kind == kind
    assert f"Fatal: reason {status}" in str(error)


def test_error_object_is_classified_by_its_words(tmp_path: Path) -> None:
    doc = {"error": {"type": "ApiError", "message": "[429] Quota exceeded for quota metric"}}
    error = run_error(request(tmp_path, sample=sample_file(tmp_path, json.dumps(doc)), exit_code=1))
    assert error.kind == "rate-limit"
    assert "[429] Quota exceeded for quota metric" in str(error)


def test_untrusted_workspace_says_how_to_trust_it(tmp_path: Path) -> None:
    doc = {
        "error": {
            "type": "FatalUntrustedWorkspaceError",
            "message": "Gemini CLI is not running in a trusted directory.",
        }
    }
    error = run_error(request(tmp_path, sample=sample_file(tmp_path, json.dumps(doc)), exit_code=1))
    assert error.kind == "config"
    assert "not running in a trusted directory" in str(error)
    assert "sets GEMINI_CLI_TRUST_WORKSPACE=true" in str(error)
    assert "--skip-trust" in str(error)


def test_crash_and_parse_errors(tmp_path: Path) -> None:
    crash = run_error(request(tmp_path, exit_code=1, stderr="SyntaxError: Unexpected token\n"))
    assert crash.kind == "crash"
    assert "SyntaxError: Unexpected token" in str(crash)
    parse = run_error(request(tmp_path, sample=sample_file(tmp_path, "Hello from gemini\n")))
    assert parse.kind == "parse"
    assert "Hello from gemini" in str(parse)


# --- through pytest: names and inputs, from -o stream-json ----------------------------

GEMINI_CASES = {
    "evals/gemini-runs": """\
id: gemini-runs
defends: GEMINI.md
prompt: "Write pushed.txt."
checks:
  - type: tool_called
    tool: shell
    input: "pushed\\\\.txt"
  - type: tool_not_called
    tool: shell
    input: "grep -r"
""",
    "evals/gemini-writes": """\
id: gemini-writes
defends: GEMINI.md
prompt: "Write pushed.txt."
checks:
  - type: tool_called
    tool: write_file
""",
    "evals/gemini-input": """\
id: gemini-input
defends: GEMINI.md
prompt: "Write pushed.txt."
checks:
  - type: tool_not_called
    tool: run_shell_command
    input: "^echo pushed"
""",
}


def test_tool_checks_through_pytest(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A case with a tool check asks for -o stream-json, whose calls carry their
    arguments: `input:` is graded (it was an error with -o json, which has counts only)."""
    result = DRIVER.run_cases(
        pytester, monkeypatch, GEMINI_CASES, "gemini-stream-hooks-fired.jsonl", "-rA"
    )
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines_random(
        [
            "PASSED*gemini-runs*",
            "FAILED*gemini-writes*",
            "FAILED*gemini-input*",
            "*must not be called; call run_shell_command: 'echo pushed > pushed.txt'*",
        ]
    )


def test_a_transcript_asks_for_stream_json(tmp_path: Path) -> None:
    plain = DRIVER.agent().invocation(DRIVER.request(tmp_path)).argv
    assert plain[plain.index("--output-format") + 1] == "json"
    streamed = DRIVER.agent().invocation(DRIVER.request(tmp_path, needs_transcript=True)).argv
    assert streamed[streamed.index("--output-format") + 1] == "stream-json"
    assert "--debug" not in streamed


def test_a_json_result_where_a_transcript_was_asked_for_has_none(tmp_path: Path) -> None:
    """Counts without inputs would let `tool_not_called … input:` pass: no transcript."""
    result = run(request(tmp_path, sample="gemini-json-success.json", needs_transcript=True))
    assert result.tool_calls is None


def test_the_stream_gives_answer_usage_calls_and_refusals(tmp_path: Path) -> None:
    fired = run(request(tmp_path, sample="gemini-stream-hooks-fired.jsonl", needs_transcript=True))
    assert fired.text == "done"
    assert fired.usage == Usage(input_tokens=300, output_tokens=30, cache_read_tokens=0)
    assert fired.models == ("gemini-scripted",)
    assert fired.tool_calls == (ToolCall("run_shell_command", "shell", "echo pushed > pushed.txt"),)
    assert fired.denials == ()
    # Not asked to show hooks (no --debug): none shown.
    assert fired.hooks is None

    denied = run(request(tmp_path, sample="gemini-stream-policy-denied.jsonl"))
    blocked = run(request(tmp_path, sample="gemini-stream-hook-blocked.jsonl"))
    assert denied.denials == (
        Denial("run_shell_command", "shell", "echo pushed > pushed.txt", "permission"),
    )
    assert blocked.denials == (
        Denial("run_shell_command", "shell", "echo pushed > pushed.txt", "hook"),
    )


def test_a_stream_error_is_an_error_of_its_kind(tmp_path: Path) -> None:
    """What Gemini CLI 0.61 streams when the API answers 500 (exit status 244)."""
    said = (
        '{"type":"init","session_id":"s","model":"auto"}\n'
        '{"type":"result","status":"error","error":{"type":"unknown","message":'
        '"[API Error: {\\"error\\":{\\"code\\":500,\\"message\\":\\"scripted boom\\"}}]"},'
        '"stats":{"total_tokens":110,"input_tokens":100,"output_tokens":10,"models":{}}}\n'
    )
    error = run_error(request(tmp_path, sample=sample_file(tmp_path, said), exit_code=244))
    assert error.kind == "server"
    assert "scripted boom" in str(error)


# --- the recording proxy (docs/replay.md) ---------------------------------------------


@pytest.mark.parametrize(
    ("env", "upstream"),
    [
        ({}, "https://generativelanguage.googleapis.com"),
        ({"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1"}, "http://127.0.0.1:1"),
        ({"GOOGLE_GENAI_USE_VERTEXAI": "true"}, None),
    ],
)
def test_the_model_api_is_the_base_url_the_environment_names(
    env: dict[str, str], upstream: str | None
) -> None:
    api = GeminiAgent(AgentSettings(name="gemini")).model_api(env)
    assert (api.upstream if api is not None else None) == upstream
    if api is not None:
        assert api.variable == "GOOGLE_GEMINI_BASE_URL"


@pytest.mark.parametrize(("follow_up", "flag"), [(False, "--session-id"), (True, "--resume")])
def test_a_conversation_names_its_session_up_front_and_resumes_it(
    tmp_path: Path, follow_up: bool, flag: str
) -> None:
    turn = dataclasses.replace(
        request(tmp_path), session="22222222-3333-4444-8555-666666666666", follow_up=follow_up
    )

    argv = agent().invocation(turn).argv

    assert argv[argv.index(flag) + 1] == "22222222-3333-4444-8555-666666666666"
    assert "--session-id" not in agent().invocation(request(tmp_path)).argv
