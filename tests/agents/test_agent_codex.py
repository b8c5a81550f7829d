"""The ``codex`` driver against a fake ``codex`` that prints recorded CLI output."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.agents import make_agent
from pytest_evalcases.agents.base import (
    AgentSettings,
    RunRequest,
    ToolCall,
    Usage,
)
from pytest_evalcases.agents.codex import PERMISSIONS, CodexAgent
from pytest_evalcases.errors import AgentError
from tests.helpers.agents import SAMPLES, Driver, sample_file
from tests.helpers.timeouts import timeout_once

EXEC = (SAMPLES / "codex-exec.jsonl").read_text().splitlines()
RECONNECTING = '{"type":"error","message":"Reconnecting... 1/5"}'
LS = ToolCall(name="command_execution", kind="shell", input="bash -lc 'ls db/changelog'")


#: The driver's default permission arguments, as they end the command line.
DEFAULTS = [arg for default in PERMISSIONS for arg in default.args]

DRIVER = Driver(CodexAgent, "codex", prompt="Make users.email NOT NULL.")
agent, request, run, run_error = DRIVER.agent, DRIVER.request, DRIVER.run, DRIVER.error


def stream(tmp_path: Path, *lines: str) -> Path:
    """A sample file made of ``lines``."""
    return sample_file(tmp_path, "\n".join(lines) + "\n", "stream.jsonl")


def test_registered_under_its_name() -> None:
    assert isinstance(make_agent(AgentSettings(name="codex")), CodexAgent)


# --- command line ---------------------------------------------------------------------


def test_default_command_line(tmp_path: Path) -> None:
    got = agent().invocation(request(tmp_path, prompt="fix it"))
    # Without a sandbox argument of the user's, an eval run may write in its workspace.
    assert got.argv == (
        *("codex", "exec", "--json", "--skip-git-repo-check"),
        *("-s", "workspace-write", "fix it"),
    )
    assert got.stdin is None


@pytest.mark.parametrize(
    "given", [("-s", "read-only"), ("--sandbox=read-only",), ("-c", "sandbox_mode=read-only")]
)
def test_a_sandbox_of_the_users_replaces_the_default(
    tmp_path: Path, given: tuple[str, ...]
) -> None:
    got = agent(args=given).invocation(request(tmp_path, prompt="fix it"))
    assert got.argv == ("codex", "exec", "--json", "--skip-git-repo-check", *given, "fix it")


@pytest.mark.parametrize(
    "given", [("-c", 'approval_policy="on-request"'), ("--ignore-rules",), ("--approve-for-me",)]
)
def test_other_arguments_of_the_users_add_to_the_default_sandbox(
    tmp_path: Path, given: tuple[str, ...]
) -> None:
    got = agent(args=given).invocation(request(tmp_path, prompt="fix it"))
    assert got.argv == (
        *("codex", "exec", "--json", "--skip-git-repo-check", *given),
        *("-s", "workspace-write", "fix it"),
    )


def test_model_and_extra_args_come_before_the_prompt(tmp_path: Path) -> None:
    got = agent(model="gpt-5-codex", args=("-s", "workspace-write")).invocation(
        request(tmp_path, prompt="fix it")
    )
    assert got.argv == (
        *("codex", "exec", "--json", "--skip-git-repo-check"),
        *("-m", "gpt-5-codex", "-s", "workspace-write", "fix it"),
    )


def test_bare_adds_nothing(tmp_path: Path) -> None:
    bare = agent().invocation(request(tmp_path, prompt="p"))
    not_bare = agent().invocation(
        RunRequest(prompt="p", workspace=tmp_path, bare=False, timeout=1, env={})
    )
    assert bare == not_bare


def test_prompt_starting_with_a_dash_goes_to_stdin(tmp_path: Path) -> None:
    seen = DRIVER.recorded_run(tmp_path, sample="codex-exec.jsonl", prompt="-v is a prompt")
    assert seen["argv"] == ["exec", "--json", "--skip-git-repo-check", *DEFAULTS, "-"]
    assert seen["stdin"] == "-v is a prompt"


# --- successful runs ------------------------------------------------------------------


def test_exec_sample(tmp_path: Path) -> None:
    result = run(request(tmp_path, sample="codex-exec.jsonl"))
    assert result.text == (
        "Added changeset 003-email-not-null.xml as a forward fix; 002 is left untouched."
    )
    assert result.usage == Usage(input_tokens=24763, cache_read_tokens=24448, output_tokens=622)
    # The command appears in item.started and item.completed: it is one call.
    assert result.tool_calls == (
        LS,
        ToolCall(
            name="file_change",
            kind="edit",
            input='[{"path":"db/changelog/003-email-not-null.xml","kind":"add"}]',
        ),
    )
    assert result.cost_usd is None
    assert result.models == ()
    assert result.exit_code == 0


@pytest.mark.parametrize(
    ("settings", "models"),
    [
        ({"model": "gpt-5-codex"}, ("gpt-5-codex",)),
        ({"args": ("-m", "o3")}, ("o3",)),
        ({"args": ("--model=o4-mini",)}, ("o4-mini",)),
    ],
)
def test_model_comes_from_the_settings(
    tmp_path: Path, settings: dict[str, Any], models: tuple[str, ...]
) -> None:
    assert run(request(tmp_path, sample="codex-exec.jsonl"), **settings).models == models


def test_started_command_without_completion_counts_once(tmp_path: Path) -> None:
    # The command was announced but its completion never printed (the run went on).
    lines = [line for line in EXEC if '"item.completed","item":{"id":"item_1"' not in line]
    result = run(request(tmp_path, sample=stream(tmp_path, *lines)))
    assert result.tool_calls is not None
    assert result.tool_calls[0] == LS
    assert len(result.tool_calls) == 2


def test_last_agent_message_is_the_answer(tmp_path: Path) -> None:
    early = (
        '{"type":"item.completed","item":{"id":"item_9","type":"agent_message","text":"Looking."}}'
    )
    result = run(request(tmp_path, sample=stream(tmp_path, *EXEC[:3], early, *EXEC[3:])))
    assert result.text.startswith("Added changeset")


def test_reconnecting_alone_is_not_fatal(tmp_path: Path) -> None:
    sample = stream(tmp_path, *EXEC[:3], RECONNECTING, *EXEC[3:])
    assert run(request(tmp_path, sample=sample)).text.startswith("Added changeset")


def test_other_tool_items(tmp_path: Path) -> None:
    items = [
        {"id": "a", "type": "web_search", "query": "liquibase addNotNullConstraint"},
        {
            "id": "b",
            "type": "mcp_tool_call",
            "server": "jira",
            "tool": "get_issue",
            "arguments": {"key": "DB-1"},
        },
        {"id": "c", "type": "command_execution", "command": ["bash", "-lc", "ls -la"]},
    ]
    events = [json.dumps({"type": "item.completed", "item": item}) for item in items]
    result = run(request(tmp_path, sample=stream(tmp_path, *events, EXEC[-1])))
    assert result.tool_calls == (
        ToolCall(name="web_search", kind="web", input="liquibase addNotNullConstraint"),
        ToolCall(name="jira.get_issue", kind="other", input='{"key":"DB-1"}'),
        ToolCall(name="command_execution", kind="shell", input="bash -lc 'ls -la'"),
    )
    assert result.text == ""


# --- errors: no verdict ---------------------------------------------------------------


def test_turn_failed_sample(tmp_path: Path) -> None:
    error = run_error(request(tmp_path, sample="codex-turn-failed.jsonl", exit_code=1))
    assert error.kind == "authentication"
    assert "unexpected status 401 Unauthorized: Missing bearer or basic authentication" in str(
        error
    )


def test_turn_failed_rate_limit(tmp_path: Path) -> None:
    failed = json.dumps(
        {"type": "turn.failed", "error": {"message": "exceeded retry limit, last status: 429"}}
    )
    error = run_error(request(tmp_path, sample=stream(tmp_path, *EXEC[1:3], failed), exit_code=1))
    assert error.kind == "rate-limit"
    assert "exceeded retry limit, last status: 429" in str(error)


def test_error_without_turn_completed_is_fatal(tmp_path: Path) -> None:
    fatal = '{"type":"error","message":"stream disconnected before completion"}'
    sample = stream(tmp_path, *EXEC[1:3], RECONNECTING, fatal)
    error = run_error(request(tmp_path, sample=sample, exit_code=1))
    assert error.kind == "agent"
    assert "stream disconnected before completion" in str(error)
    assert "Reconnecting" not in str(error)


def test_only_reconnecting_then_the_end(tmp_path: Path) -> None:
    last = '{"type":"error","message":"Reconnecting... 5/5"}'
    error = run_error(request(tmp_path, sample=stream(tmp_path, *EXEC[1:3], RECONNECTING, last)))
    assert "Reconnecting... 5/5" in str(error)
    assert "without turn.completed" in str(error)


def test_crash_without_events_quotes_stderr(tmp_path: Path) -> None:
    error = run_error(request(tmp_path, exit_code=1, stderr="Error: config.toml: invalid key\n"))
    assert error.kind == "crash"
    assert "Error: config.toml: invalid key" in str(error)


def test_stream_without_completion_and_exit_0_is_a_parse_error(tmp_path: Path) -> None:
    error = run_error(request(tmp_path, sample=stream(tmp_path, *EXEC[:4])))
    assert error.kind == "parse"
    assert "turn.completed" in str(error)


# --- through pytest: tool checks on the Codex stream ----------------------------------

TOOL_CASES = {
    # The sample runs `bash -lc 'ls db/changelog'` and adds 003-email-not-null.xml.
    "evals/codex-tools-hold": """\
id: codex-tools-hold
defends: AGENTS.md
prompt: "Make users.email NOT NULL."
checks:
  - type: tool_called
    tool: shell
    input: "ls db/changelog"
  - type: tool_called
    tool: command_execution
  - type: tool_called
    tool: edit
    input: "003-email-not-null"
  - type: tool_not_called
    tool: shell
    input: "rm -rf|git push"
""",
    "evals/codex-no-ls": """\
id: codex-no-ls
defends: AGENTS.md
prompt: "Make users.email NOT NULL."
checks:
  - type: tool_not_called
    tool: command_execution
    input: "\\\\bls\\\\b"
""",
    "evals/codex-must-read": """\
id: codex-must-read
defends: AGENTS.md
prompt: "Make users.email NOT NULL."
checks:
  - type: tool_called
    tool: shell
    input: "cat db/changelog/002"
""",
}


def test_tool_checks_on_the_codex_stream(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = DRIVER.run_cases(pytester, monkeypatch, TOOL_CASES, "codex-exec.jsonl", "-rA")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines_random(
        [
            "PASSED*codex-tools-hold*",
            "FAILED*codex-no-ls*",
            "FAILED*codex-must-read*",
            "*must not be called; call command_execution: *bash -lc 'ls db/changelog'*",
            "*no call of tool 'shell' with input 'cat db/changelog/002'*",
        ]
    )


def test_turn_failed_is_an_error_through_pytest(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = DRIVER.run_cases(
        pytester,
        monkeypatch,
        {"evals/codex-no-ls": TOOL_CASES["evals/codex-no-ls"]},
        "codex-turn-failed.jsonl",
        exit_code=1,
    )
    result.assert_outcomes(errors=1)
    assert "Missing bearer or basic authentication in header" in result.stdout.str()
    assert result.ret == 2


#: What codex-cli 0.171.0 printed here, run with no network to reach: it never exits.
NO_NETWORK = [
    {"type": "thread.started", "thread_id": "01a22fd8-8dd2-7302-b0a9-631080dd9a77"},
    {"type": "turn.started"},
    {
        "type": "error",
        "message": "Reconnecting... 5/5 (stream disconnected before completion: failed to "
        "lookup address information: Name does not resolve)",
    },
    {
        "type": "error",
        "message": "Reconnecting... waiting for network (Connection failed: error sending request)",
    },
    {
        "type": "item.completed",
        "item": {
            "id": "item_0",
            "type": "error",
            "message": "Falling back from WebSockets to HTTPS transport. stream disconnected "
            "before completion: failed to lookup address information: Name does not resolve",
        },
    },
]


@pytest.mark.skipif(sys.platform != "linux", reason="reads the CLI's output in /proc")
def test_a_timeout_says_what_the_cli_said_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = tmp_path / "no-network.jsonl"
    sample.write_text("".join(json.dumps(event) + "\n" for event in NO_NETWORK))
    # The timeout counts once the CLI has printed it all (its output file, in /proc).
    size = len(sample.read_bytes())
    timeout_once(monkeypatch, lambda pid: Path(f"/proc/{pid}/fd/1").stat().st_size >= size)
    error = run_error(request(tmp_path, sample=str(sample), timeout=1, FAKE_AGENT_HANG="60"))
    assert error.kind == "timeout"
    # The message of the last event, nested in its item as Codex has it.
    assert str(error).endswith(
        "last output: Falling back from WebSockets to HTTPS transport. stream disconnected "
        "before completion: failed to lookup address information: Name does not resolve"
    )


# --- the recording proxy (docs/replay.md) ---------------------------------------------


def test_a_recorded_run_is_pointed_at_the_proxy_after_the_users_arguments(
    tmp_path: Path,
) -> None:
    given = ("-c", 'openai_base_url="https://llm.example/v1"')
    req = dataclasses.replace(request(tmp_path, prompt="fix it"), base_url="http://127.0.0.1:9/r/t")
    got = agent(args=given).invocation(req)
    assert got.argv[-3:] == ("-c", 'openai_base_url="http://127.0.0.1:9/r/t"', "fix it")


def test_a_scripted_run_gets_a_provider_keyed_by_the_stand_in_not_the_built_in_one(
    tmp_path: Path,
) -> None:
    # The built-in provider sends the key of an auth.json in CODEX_HOME (the operator's,
    # with eval_agent_home = inherit), whatever OPENAI_API_KEY says: tried with 0.171.
    req = dataclasses.replace(
        request(tmp_path, prompt="fix it"), base_url="http://127.0.0.1:9/r/t", scripted=True
    )
    argv = agent().invocation(req).argv
    assert argv[-5:-1] == (
        "-c",
        'model_provider="evalcases-scripted"',
        "-c",
        'model_providers.evalcases-scripted={name="scripted",base_url="http://127.0.0.1:9/r/t",'
        'env_key="OPENAI_API_KEY",wire_api="responses",request_max_retries=0,'
        "stream_max_retries=0}",
    )
    assert not any("openai_base_url" in arg for arg in argv)


@pytest.mark.parametrize(
    ("args", "env", "upstream"),
    [
        ((), {"OPENAI_API_KEY": "k"}, "https://api.openai.com/v1"),
        (("-c", "openai_base_url='https://llm.example/v1'"), {}, "https://llm.example/v1"),
        (("-c", "model_provider=scripted"), {"OPENAI_API_KEY": "k"}, None),
        (("--oss",), {}, None),
    ],
)
def test_the_model_api_is_openais_unless_another_provider_is_chosen(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], upstream: str | None
) -> None:
    api = CodexAgent(AgentSettings(name="codex", args=args)).model_api(
        {"HOME": str(tmp_path), **env}
    )
    assert (api.upstream if api is not None else None) == upstream


def test_a_chatgpt_login_is_not_proxied(tmp_path: Path) -> None:
    (tmp_path / "codex").mkdir()
    (tmp_path / "codex" / "auth.json").write_text('{"tokens": {"access_token": "x"}}')
    agent_ = CodexAgent(AgentSettings(name="codex"))
    assert agent_.model_api({"CODEX_HOME": str(tmp_path / "codex")}) is None
    assert agent_.model_api({"CODEX_HOME": str(tmp_path / "codex"), "OPENAI_API_KEY": "k"})


# --- follow-ups (docs/conversations.md) -------------------------------------------------


def test_a_follow_up_resumes_the_thread_with_its_sandbox_as_configuration(
    tmp_path: Path,
) -> None:
    follow_up = dataclasses.replace(
        request(tmp_path, prompt="now the test"), session="0199a213", follow_up=True
    )

    got = agent(args=("--sandbox=read-only", "-C", "/elsewhere")).invocation(follow_up)

    # `exec resume` has neither -s nor -C: the sandbox is a setting, the cwd the process's.
    assert got.argv == (
        *("codex", "exec", "resume", "--json", "--skip-git-repo-check"),
        *("-c", 'sandbox_mode="read-only"', "0199a213", "now the test"),
    )
    first = dataclasses.replace(follow_up, follow_up=False)
    assert "resume" not in agent().invocation(first).argv


def test_a_follow_up_counts_its_own_tokens_not_the_threads(tmp_path: Path) -> None:
    first = run(request(tmp_path, sample="codex-exec.jsonl"))
    assert first.session == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    follow_up = dataclasses.replace(
        request(tmp_path, sample="codex-exec.jsonl"),
        session=first.session,
        follow_up=True,
        earlier=Usage(input_tokens=1000, output_tokens=100, cache_read_tokens=500),
    )

    again = run(follow_up)

    assert first.usage.input_tokens is not None
    assert first.usage.output_tokens is not None
    assert again.usage == Usage(
        input_tokens=max(first.usage.input_tokens - 1000, 0),
        output_tokens=max(first.usage.output_tokens - 100, 0),
        cache_read_tokens=max((first.usage.cache_read_tokens or 0) - 500, 0),
    )


def test_a_follow_up_with_an_option_resume_lacks_is_a_config_error(tmp_path: Path) -> None:
    follow_up = dataclasses.replace(request(tmp_path), session="0199a213", follow_up=True)

    with pytest.raises(AgentError) as info:
        agent(args=("--profile", "work")).invocation(follow_up)

    assert info.value.kind == "config"
    assert "`codex exec resume` (0.171) has no --profile" in str(info.value)
    # --color is only how the text would look: --json has none.
    got = agent(args=("--color", "never")).invocation(follow_up).argv
    assert "--color" not in got
    assert "never" not in got
