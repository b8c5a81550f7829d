"""The Anthropic Messages API, as Claude Code speaks it: read (:class:`Anthropic`), and
written by the scripted model (:func:`stream`, :func:`error_body`)."""

from __future__ import annotations

import json
from typing import Any

from pytest_evalcases.recording.views import (
    Answer,
    Parser,
    Reply,
    ToolCall,
    ToolResult,
    Usage,
    called,
)
from pytest_evalcases.recording.wire import (
    as_dict,
    as_int,
    as_list,
    events,
    json_or_text,
    sse,
    text_of,
)


class Anthropic(Parser):
    """The Anthropic Messages API (``POST /v1/messages``)."""

    name = "anthropic"
    system_key = "system"
    messages_key = "messages"

    def given_messages(self, body: Any) -> list[Any]:
        return as_list(as_dict(body).get("messages"))

    def texts(self, message: Any) -> tuple[str, ...]:
        content = as_dict(message).get("content")
        if isinstance(content, str):
            return (content,)
        said = []
        for block in map(as_dict, as_list(content)):
            kind = block.get("type")
            if kind == "text":
                said.append(str(block.get("text", "")))
            elif kind == "tool_result":
                said.append(text_of(block.get("content")))
            elif kind in ("tool_use", "server_tool_use"):
                said.append(called(str(block.get("name", "")), block.get("input", {})))
        return tuple(said)

    def helper(self, body: Any) -> bool:
        body = as_dict(body)
        return as_int(body.get("max_tokens")) == 1 or bool(
            as_dict(body.get("output_config")).get("format")
        )

    def kind(self, body: Any) -> str:
        body = as_dict(body)
        if as_int(body.get("max_tokens")) == 1:
            return "quota check"
        schema = as_dict(as_dict(as_dict(body.get("output_config")).get("format")).get("schema"))
        if schema:
            return "structured answer: " + ", ".join(as_dict(schema.get("properties")))
        return "other conversation"

    def thread(self, body: Any) -> str:
        messages = as_list(as_dict(body).get("messages"))
        return text_of(as_dict(messages[0]).get("content")) if messages else ""

    def system(self, body: Any) -> str:
        system = as_dict(body).get("system")
        texts = (
            [system]
            if isinstance(system, str)
            else [str(as_dict(b).get("text", "")) for b in as_list(system)]
        )
        # Claude Code's first system block is a billing header, not instructions.
        return "\n\n".join(t for t in texts if t and not t.startswith("x-anthropic-billing-header"))

    def described_tools(self, body: Any) -> list[tuple[str, str]]:
        return [
            (str(tool.get("name", "")), str(tool.get("description") or ""))
            for tool in map(as_dict, as_list(as_dict(body).get("tools")))
        ]

    def user_texts(self, body: Any) -> list[str]:
        for message in reversed(as_list(as_dict(body).get("messages"))):
            message = as_dict(message)
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                return [content]
            texts = [
                str(as_dict(b).get("text", ""))
                for b in as_list(content)
                if as_dict(b).get("type") == "text"
            ]
            if texts:
                return texts
        return []

    def results(self, body: Any) -> list[ToolResult]:
        return [
            ToolResult(
                str(b.get("tool_use_id", "")), text_of(b.get("content")), bool(b.get("is_error"))
            )
            for m in as_list(as_dict(body).get("messages"))
            for b in map(as_dict, as_list(as_dict(m).get("content")))
            if b.get("type") == "tool_result"
        ]

    def response(self, text: str) -> Answer:
        model, stop = "", ""
        blocks: dict[int, dict[str, Any]] = {}
        usage: dict[str, int] = {}
        errors: list[str] = []
        stopped = False
        streamed = False
        for event in map(as_dict, events(text)):
            kind = event.get("type")
            if kind == "message":
                # An answer that was not streamed.
                model = str(event.get("model", ""))
                stop = str(event.get("stop_reason") or "")
                for i, block in enumerate(as_list(event.get("content"))):
                    blocks[i] = {**as_dict(block), "json": ""}
                usage.update({k: as_int(v) for k, v in as_dict(event.get("usage")).items()})
                stopped = True
            elif kind == "message_start":
                streamed = True
                message = as_dict(event.get("message"))
                model = str(message.get("model", ""))
                usage.update({k: as_int(v) for k, v in as_dict(message.get("usage")).items()})
            elif kind == "content_block_start":
                block = dict(as_dict(event.get("content_block")))
                block["json"] = ""
                blocks[as_int(event.get("index"))] = block
            elif kind == "content_block_delta":
                block = blocks.setdefault(as_int(event.get("index")), {"type": "text", "json": ""})
                delta = as_dict(event.get("delta"))
                if delta.get("type") == "text_delta":
                    block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
                elif delta.get("type") == "input_json_delta":
                    block["json"] += str(delta.get("partial_json", ""))
                elif delta.get("type") == "thinking_delta":
                    block["thinking"] = str(block.get("thinking", "")) + str(
                        delta.get("thinking", "")
                    )
            elif kind == "message_delta":
                stop = str(as_dict(event.get("delta")).get("stop_reason") or stop)
                # The delta's counts are the message's so far: they replace the start's.
                usage.update({k: as_int(v) for k, v in as_dict(event.get("usage")).items()})
            elif kind == "message_stop":
                stopped = True
            elif kind == "error":
                error = as_dict(event.get("error"))
                errors.append(f"error event: {error.get('type', '')}: {error.get('message', '')}")
        if streamed and not stopped and not errors:
            errors.append("the stream ended before message_stop")
        texts, calls, thinking = [], [], 0
        for _, block in sorted(blocks.items()):
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind in ("tool_use", "server_tool_use"):
                given = json_or_text(block["json"]) if block["json"] else block.get("input", {})
                calls.append(ToolCall(str(block.get("name", "")), given, str(block.get("id", ""))))
            elif kind in ("thinking", "redacted_thinking"):
                thinking += len(str(block.get("thinking", block.get("data", ""))))
        spent = Usage(
            usage.get("input_tokens", 0),
            usage.get("output_tokens", 0),
            usage.get("cache_read_input_tokens", 0),
            usage.get("cache_creation_input_tokens", 0),
            known=bool(usage),
        )
        # As Claude Code counts them: the cache's reads and writes apart.
        tokens = spent.input + spent.output
        return Answer(
            model, tuple(texts), tuple(calls), thinking, spent, stop, tuple(errors), tokens
        )


#: The error type the Messages API names for a status, as its SDK reads it.
_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def stream(reply: Reply, model: str, call_id: str) -> bytes:
    """``reply`` as the Messages API streams it: one content block (text, or a tool
    call ``call_id``; a shell command is a call of Claude Code's ``Bash``)."""
    usage = {
        "input_tokens": reply.input_tokens,
        "cache_read_input_tokens": reply.cache_read_tokens,
        "output_tokens": 1,
    }
    message: dict[str, Any] = {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model or "claude-scripted",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    block: dict[str, Any]
    if reply.calls_tool:
        if reply.mcp is not None:
            # Claude Code's name of an MCP tool (tried with 2.1.197).
            name, given = f"mcp__{reply.mcp[0]}__{reply.mcp[1]}", reply.tool_input
        elif reply.tool is None:
            name, given = "Bash", {"command": reply.shell, "description": "run"}
        else:
            name, given = reply.tool, reply.tool_input
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(given)}
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": reply.text}
    return sse(
        [
            {"type": "message_start", "message": message},
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "tool_use" if reply.calls_tool else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": reply.output_tokens},
            },
            {"type": "message_stop"},
        ]
    )


def error_body(status: int, message: str) -> dict[str, Any]:
    """The Messages API's error body for ``status``."""
    return {
        "type": "error",
        "error": {"type": _ERRORS.get(status, "api_error"), "message": message},
    }
