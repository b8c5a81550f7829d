"""The scripted model (recording/script.py and each dialect's writer): what it answers,
read back by the same parsers that read a live API's answers, and served by the real
proxy on 127.0.0.1 without an upstream (docs/config-contract.md, "The scripted model")."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from pytest_evalcases.kinds import ModelDialect
from pytest_evalcases.recording import dialects
from pytest_evalcases.recording.channel import Channel
from pytest_evalcases.recording.format import Message
from pytest_evalcases.recording.proxy import Proxy
from pytest_evalcases.recording.script import Script, Turn, tool_results

#: A request path of each dialect, as the CLIs send it.
PATHS: dict[ModelDialect, str] = {
    "anthropic": "/v1/messages",
    "openai": "/responses",
    "gemini": "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
}

SCRIPT = (
    Turn(shell="touch made.txt"),
    Turn(tool="Read", input={"file_path": "src/api/orders.py"}),
    Turn(text="done"),
)


def request_with(dialect: ModelDialect, results: int) -> dict[str, Any]:
    """A request body of ``dialect`` carrying ``results`` tool results."""
    if dialect == "anthropic":
        blocks = [{"type": "tool_result", "tool_use_id": f"t{i}"} for i in range(results)]
        return {"model": "claude-x", "messages": [{"role": "user", "content": blocks}]}
    if dialect == "openai":
        return {"input": [{"type": "function_call_output", "call_id": "c"}] * results}
    parts = [{"functionResponse": {"name": "x", "response": {}}}] * results
    return {"contents": [{"role": "user", "parts": parts}]}


def answered(script: Script, results: int) -> Any:
    body = json.dumps(request_with(script.dialect, results)).encode()
    written = script.respond("POST", PATHS[script.dialect], body)
    assert written.status == 200
    return dialects.response("POST", PATHS[script.dialect], written.body.decode())


@pytest.mark.parametrize("dialect", ["anthropic", "openai", "gemini"])
def test_request_i_is_answered_with_turn_i_then_the_last_text(dialect: ModelDialect) -> None:
    script = Script(dialect, SCRIPT)

    shell, tool, text, after = (answered(script, n) for n in (0, 1, 2, 5))

    assert len(shell.calls) == 1
    assert "touch made.txt" in json.dumps(shell.calls[0].input)
    assert (tool.calls[0].name, tool.calls[0].input) == ("Read", SCRIPT[1].input)
    assert (text.texts, text.calls) == (("done",), ())
    assert after.texts == ("done",)
    # A scripted answer cost nothing: its usage says none.
    assert shell.usage.input == shell.usage.output == 0


@pytest.mark.parametrize(
    ("dialect", "name"),
    [("anthropic", "Bash"), ("openai", "exec"), ("gemini", "run_shell_command")],
)
def test_a_shell_turn_is_the_clis_own_shell_tool(dialect: ModelDialect, name: str) -> None:
    assert answered(Script(dialect, SCRIPT), 0).calls[0].name == name


def test_a_script_without_text_answers_empty_after_its_last_turn() -> None:
    script = Script("anthropic", (Turn(shell="true"),))
    assert script.turn(3) == Turn(text="")


def test_tool_results_are_counted_in_every_dialect() -> None:
    for dialect in ("anthropic", "openai", "gemini"):
        assert tool_results(json.dumps(request_with(dialect, 3))) == 3  # type: ignore[arg-type]


def test_the_clis_side_requests_get_answers_that_let_them_go_on() -> None:
    script = Script("gemini", SCRIPT)
    helper = {
        "generationConfig": {
            "responseJsonSchema": {
                "properties": {
                    "next_speaker": {"type": "string", "enum": ["model", "user"]},
                    "reasoning": {"type": "string"},
                }
            }
        }
    }
    written = script.respond("POST", PATHS["gemini"], json.dumps(helper).encode())
    said = json.loads(json.loads(written.body)["candidates"][0]["content"]["parts"][0]["text"])
    assert said == {"next_speaker": "user", "reasoning": ""}
    counted = script.respond("POST", "/v1/messages/count_tokens", b"{}")
    assert json.loads(counted.body)["input_tokens"] == 10
    assert script.respond("GET", "/v1/models", b"").status == 200


def test_the_proxy_answers_a_scripted_channel_itself_and_records_it() -> None:
    proxy = Proxy()
    try:
        # An upstream nothing listens on: a request that went there would fail.
        channel = proxy.open("http://127.0.0.1:9", script=Script("anthropic", SCRIPT))
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=20)
        body = json.dumps(request_with("anthropic", 2))
        connection.request("POST", f"/r/{channel.token}/v1/messages", body)
        response = connection.getresponse()
        text = response.read().decode()
        connection.close()
    finally:
        proxy.close()
    assert response.status == 200
    assert dialects.response("POST", "/v1/messages", text).texts == ("done",)
    (exchange,) = channel.recorded()
    assert (exchange.path, exchange.status, exchange.source) == ("/v1/messages", 200, "scripted")


#: A conversation's script: a command and an answer for each of two prompts.
CONVERSATION = (
    Turn(shell="echo one > one.txt"),
    Turn(text="turn1 done"),
    Turn(shell="echo two > two.txt"),
    Turn(text="turn2 done"),
)


def played(channel: Channel, results: int) -> Any:
    body = json.dumps(request_with("anthropic", results)).encode()
    written = channel.play("POST", PATHS["anthropic"], body)
    return dialects.response("POST", PATHS["anthropic"], written.body.decode())


def test_the_script_runs_on_across_a_conversation() -> None:
    channel = Channel("t", "http://127.0.0.1:9", "url", script=Script("anthropic", CONVERSATION))

    channel.begin_turn(1)
    first = [played(channel, n) for n in (0, 1)]
    channel.begin_turn(2)
    # A follow-up's requests carry the first prompt's tool result too (Claude Code's do).
    second = [played(channel, n) for n in (1, 2, 2)]

    assert "one.txt" in json.dumps(first[0].calls[0].input)
    assert first[1].texts == ("turn1 done",)
    assert "two.txt" in json.dumps(second[0].calls[0].input)
    assert [r.texts for r in second[1:]] == [("turn2 done",), ("turn2 done",)]


def test_a_follow_up_whose_requests_carry_no_earlier_results_goes_on_all_the_same() -> None:
    # Gemini CLI and Codex resend the history too; a CLI that did not would send 0.
    channel = Channel("t", "http://127.0.0.1:9", "url", script=Script("openai", CONVERSATION))
    channel.begin_turn(1)
    for n in (0, 1):
        channel.play("POST", PATHS["openai"], json.dumps(request_with("openai", n)).encode())
    channel.begin_turn(2)

    body = json.dumps(request_with("openai", 0)).encode()
    shell = dialects.response(
        "POST", PATHS["openai"], channel.play("POST", PATHS["openai"], body).body.decode()
    )

    assert "two.txt" in json.dumps(shell.calls[0].input)


def test_a_channel_tags_each_request_with_its_turn() -> None:
    channel = Channel("t", "http://127.0.0.1:9", "url")
    channel.begin_turn(1)
    with channel.request("POST", "/v1/messages", Message((), b"{}")):
        pass
    channel.begin_turn(2)
    with channel.request("POST", "/v1/messages", Message((), b"{}")):
        pass

    assert [e.turn for e in channel.recorded()] == [1, 2]
