"""The three model APIs' dialects (docs/replay.md, "Reading a run", "What replay saves"):
one parser each, found by a request's method and path, for what a request gave the model
and what a response said."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_evalcases.recording import dialects
from pytest_evalcases.recording.views import ToolResult

MESSAGES = "/v1/messages?beta=true"
RESPONSES = "/v1/responses"
GEMINI = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"


@pytest.mark.parametrize(
    ("method", "path", "dialect"),
    [
        ("POST", MESSAGES, "anthropic"),
        ("POST", RESPONSES, "openai"),
        ("POST", "/responses", "openai"),
        ("POST", GEMINI, "gemini"),
        ("POST", "/v1beta/models/flash:generateContent", "gemini"),
        ("HEAD", "/", "other"),
        ("GET", "/v1/messages", "other"),
        ("POST", "/v1/chat/completions", "other"),
    ],
)
def test_a_requests_dialect_is_its_method_and_path(method: str, path: str, dialect: str) -> None:
    assert dialects.dialect_of(method, path) == dialect


def test_turns_count_the_models_answers_in_each_dialect() -> None:
    anthropic = {"messages": [{"role": "user"}, {"role": "assistant"}, {"role": "user"}]}
    responses = {
        "input": [
            {"role": "developer"},
            {"role": "user"},
            {"type": "reasoning"},
            {"type": "function_call"},
            {"type": "function_call_output"},
            {"type": "message", "role": "assistant"},
            {"role": "user"},
        ]
    }
    gemini = {"contents": [{"role": "user"}, {"role": "model"}, {"role": "user"}]}
    turns = [
        dialects.request("POST", path, body).turn
        for path, body in ((MESSAGES, anthropic), (RESPONSES, responses), (GEMINI, gemini))
    ]
    assert turns == [2, 3, 2]
    assert dialects.request("POST", MESSAGES, {"messages": [{"role": "user"}]}).turn == 1
    # No known dialect, or a body that is no JSON object: no conversation.
    assert dialects.request("POST", "/v1/other", anthropic).dialect == "other"
    assert dialects.request("POST", MESSAGES, "not json").messages == ()


def test_tokens_are_counted_as_each_cli_counts_them() -> None:
    anthropic = (
        'event: message_start\ndata: {"type": "message_start", "message": {"usage": '
        '{"input_tokens": 100, "cache_read_input_tokens": 20, "output_tokens": 1}}}\n\n'
        'event: message_delta\ndata: {"type": "message_delta", "usage": {"output_tokens": 9}}\n\n'
    )
    responses = (
        'data: {"type": "response.completed", "response": {"usage": '
        '{"input_tokens": 50, "output_tokens": 5, "input_tokens_details": '
        '{"cached_tokens": 30}}}}\n\n'
    )
    gemini = (
        'data: {"usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 1}}\r\n\r\n'
        'data: {"usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 3, '
        '"thoughtsTokenCount": 40}}\r\n\r\n'
    )
    plain = '{"usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2}}'
    said = [
        dialects.response("POST", path, text)
        for path, text in ((MESSAGES, anthropic), (RESPONSES, responses), (GEMINI, gemini))
    ]
    # Claude Code counts no cache reads as input; Codex counts its cached input; Gemini
    # CLI counts no thoughts as output. The transcript shows each part apart.
    assert [answer.tokens for answer in said] == [109, 55, 10]
    assert [(a.usage.input, a.usage.output, a.usage.cache_read) for a in said] == [
        (100, 9, 20),
        (20, 5, 30),
        (7, 43, 0),
    ]
    assert dialects.response("POST", "/v1beta/models/m:generateContent", plain).tokens == 6
    assert dialects.response("POST", MESSAGES, "not json").tokens == 0
    assert dialects.response("HEAD", "/", plain).tokens == 0


def test_a_responses_answer_counts_its_tokens_however_it_ended() -> None:
    incomplete = (
        'data: {"type": "response.incomplete", "response": {"incomplete_details": '
        '{"reason": "max_output_tokens"}, "usage": {"input_tokens": 40, "output_tokens": 8}}}\n\n'
    )
    whole = (
        '{"object": "response", "model": "gpt-5", "usage": {"input_tokens": 3, "output_tokens": 4}}'
    )

    cut = dialects.response("POST", RESPONSES, incomplete)
    answered = dialects.response("POST", RESPONSES, whole)

    assert (cut.tokens, cut.errors) == (48, ("response.incomplete: max_output_tokens",))
    assert (answered.tokens, answered.model, answered.errors) == (7, "gpt-5", ())


def body(**given: Any) -> dict[str, Any]:
    return json.loads(json.dumps(given))


def test_a_request_says_what_reached_the_model_and_where() -> None:
    anthropic = body(
        model="claude-sonnet-4-5",
        system=[
            {"type": "text", "text": "x-anthropic-billing-header: cc"},
            {"type": "text", "text": "Follow CLAUDE.md: never push."},
        ],
        tools=[{"name": "Bash"}, {"name": "Edit"}],
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "fix the typo"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash"}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "README.md"}],
            },
        ],
    )
    responses = body(
        model="gpt-5",
        instructions="You are Codex.",
        input=[
            {"role": "developer", "content": [{"type": "input_text", "text": "AGENTS.md: x"}]},
            {"role": "user", "content": [{"type": "input_text", "text": "fix the typo"}]},
            {"type": "function_call_output", "call_id": "c1", "output": "README.md"},
        ],
        tools=[{"type": "function", "name": "shell"}],
    )
    gemini = body(
        systemInstruction={"parts": [{"text": "You are Gemini CLI."}]},
        tools=[{"functionDeclarations": [{"name": "run_shell_command"}]}],
        contents=[
            {"role": "user", "parts": [{"text": "fix the typo"}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"id": "g1", "response": {"output": "README.md"}}}],
            },
        ],
    )

    claude = dialects.request("POST", MESSAGES, anthropic)
    codex = dialects.request("POST", RESPONSES, responses)
    gem = dialects.request("POST", GEMINI, gemini)

    assert (claude.model, codex.model, gem.model) == (
        "claude-sonnet-4-5",
        "gpt-5",
        "gemini-2.5-pro",
    )
    assert claude.system == "Follow CLAUDE.md: never push."
    assert codex.system == "You are Codex.\n\nAGENTS.md: x"
    assert gem.system == "You are Gemini CLI."
    assert (claude.tools, codex.tools, gem.tools) == (
        ("Bash", "Edit"),
        ("shell",),
        ("run_shell_command",),
    )
    assert claude.results == (ToolResult("t1", "README.md", False),)
    assert codex.results == (ToolResult("c1", "README.md", False),)
    assert gem.results == (ToolResult("g1", "README.md", False),)
    for request in (claude, codex, gem):
        assert request.reaches("fix the typo") == "message"
        assert request.reaches("README.md") == "message"
        assert request.reaches("not sent") == ""
    assert claude.reaches("never push") == "system prompt"
    assert codex.reaches("AGENTS.md: x") == "system prompt"
    assert gem.reaches("Gemini CLI") == "system prompt"


# --- what a request check reads (docs/case-format.md, "What a request check reads") -------


def parts(path: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(part.name, part.text) for part in dialects.request("POST", path, body).parts()]


def test_an_anthropic_request_reads_as_its_system_prompt_tools_and_messages() -> None:
    body = {
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2"},
            {"type": "text", "text": "You are Claude Code."},
        ],
        "tools": [
            {"name": "Bash", "description": "Runs a command.\nIn the workspace."},
            {"name": "mcp__tickets__open", "input_schema": {}},
        ],
        "messages": [
            {"role": "user", "content": "Tidy up"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm"},
                    {"type": "text", "text": "Reading it."},
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "1\tx = 1"}],
                    }
                ],
            },
            {"role": "system", "content": "Contents of .claude/rules/api.md:\n\nValidate input."},
        ],
    }

    assert parts(MESSAGES, body) == [
        ("system prompt", "You are Claude Code."),
        ("tools", "Bash: Runs a command.\nIn the workspace.\nmcp__tickets__open"),
        ("message 1 (user)", "Tidy up"),
        ("message 2 (assistant)", 'Reading it.\ntool call Read {"file_path": "a"}'),
        ("message 3 (user)", "1\tx = 1"),
        ("message 4 (system)", "Contents of .claude/rules/api.md:\n\nValidate input."),
    ]


def test_a_responses_request_reads_with_its_developer_messages_in_the_system_prompt() -> None:
    body = {
        "instructions": "You are Codex.",
        "tools": [
            {"type": "function", "name": "shell", "description": "Runs a command."},
            {"type": "namespace", "tools": [{"name": "mcp__t__open", "description": "Opens."}]},
            {"type": "web_search"},
        ],
        "input": [
            {"type": "additional_tools", "role": "developer", "tools": [{"name": "exec"}]},
            {"role": "developer", "content": [{"type": "input_text", "text": "Sandbox: on."}]},
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "# AGENTS.md\nNo push."}],
            },
            {"type": "reasoning", "summary": []},
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"cmd": "ls"}',
                "call_id": "c1",
            },
            {"type": "function_call_output", "call_id": "c1", "output": "README.md"},
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "input": "*** Begin Patch",
                "call_id": "c2",
            },
        ],
    }

    assert parts(RESPONSES, body) == [
        ("system prompt", "You are Codex.\n\nSandbox: on."),
        ("tools", "shell: Runs a command.\nmcp__t__open: Opens.\nweb_search\nexec"),
        ("message 3 (user)", "# AGENTS.md\nNo push."),
        ("message 5 (function_call)", 'tool call shell {"cmd": "ls"}'),
        ("message 6 (function_call_output)", "README.md"),
        ("message 7 (custom_tool_call)", "tool call apply_patch *** Begin Patch"),
    ]


def test_a_gemini_request_reads_with_its_function_responses_as_their_output() -> None:
    body = {
        "systemInstruction": {"parts": [{"text": "You are Gemini CLI."}]},
        "tools": [{"functionDeclarations": [{"name": "read_file", "description": "Reads."}]}],
        "contents": [
            {"role": "user", "parts": [{"text": "GEMINI.md: no push"}, {"text": "Tidy up"}]},
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "read_file", "args": {"file_path": "a"}}}],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "read_file",
                            "response": {"output": "line 1\nline 2"},
                        }
                    }
                ],
            },
        ],
    }

    assert parts(GEMINI, body) == [
        ("system prompt", "You are Gemini CLI."),
        ("tools", "read_file: Reads."),
        ("message 1 (user)", "GEMINI.md: no push\nTidy up"),
        ("message 2 (model)", 'tool call read_file {"file_path": "a"}'),
        # The output as the tool gave it, never JSON-escaped: `^line 2$` finds it.
        ("message 3 (user)", "line 1\nline 2"),
    ]
