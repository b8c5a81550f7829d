"""The OpenAI Responses API, as Codex speaks it: read (:class:`OpenAI`), and written by
the scripted model (:func:`stream`, :func:`error_body`)."""

from __future__ import annotations

import json
import re
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

_OPENAI_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
_OPENAI_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")

#: The roles of input items that are instructions: the system prompt.
_SYSTEM_ROLES = ("developer", "system")

#: Responses input items that the model produced.
_MODEL_ITEMS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "reasoning",
        "web_search_call",
        "computer_call",
    }
)


class OpenAI(Parser):
    """The OpenAI Responses API (``POST /v1/responses``)."""

    name = "openai"
    system_key = "instructions"
    messages_key = "input"

    def from_model(self, message: Any) -> bool:
        message = as_dict(message)
        return message.get("type") in _MODEL_ITEMS or message.get("role") == "assistant"

    def texts(self, message: Any) -> tuple[str, ...]:
        if isinstance(message, str):
            return (message,)
        message = as_dict(message)
        kind = message.get("type")
        if kind == "additional_tools" or message.get("role") in _SYSTEM_ROLES:
            # The tool list, which the request's tools show; the instructions, which
            # its system prompt holds.
            return ()
        output = message.get("output")
        said = [text_of(message["content"])] if message.get("content") else []
        if kind in _OPENAI_CALLS:
            said.append(called(*_call(message)))
        if output:
            said.append(output if isinstance(output, str) else text_of(output))
        return tuple(said)

    def system(self, body: Any) -> str:
        body = as_dict(body)
        texts = [str(body["instructions"])] if body.get("instructions") else []
        texts += [
            text_of(item.get("content"))
            for item in map(as_dict, as_list(body.get("input")))
            if item.get("role") in _SYSTEM_ROLES and item.get("content")
        ]
        return "\n\n".join(texts)

    def described_tools(self, body: Any) -> list[tuple[str, str]]:
        body = as_dict(body)
        # Codex lists its tools in the input (an `additional_tools` item) too.
        listed = as_list(body.get("tools")) + [
            tool
            for item in map(as_dict, as_list(body.get("input")))
            if item.get("type") == "additional_tools"
            for tool in as_list(item.get("tools"))
        ]
        found: list[tuple[str, str]] = []
        for tool in map(as_dict, listed):
            nested = as_list(tool.get("tools"))
            found += (
                [_described(as_dict(t), str(as_dict(t).get("name", ""))) for t in nested]
                if nested
                else [_described(tool, str(tool.get("name") or tool.get("type", "")))]
            )
        return found

    def _users(self, body: Any) -> list[dict[str, Any]]:
        return [
            item
            for item in map(as_dict, as_list(as_dict(body).get("input")))
            if item.get("role") == "user"
        ]

    def thread(self, body: Any) -> str:
        users = self._users(body)
        return text_of(users[0].get("content")) if users else ""

    def user_texts(self, body: Any) -> list[str]:
        return [text_of(u.get("content")) for u in self._users(body)]

    def results(self, body: Any) -> list[ToolResult]:
        out = []
        for item in map(as_dict, as_list(as_dict(body).get("input"))):
            if item.get("type") in _OPENAI_OUTPUTS:
                output = item.get("output")
                text = output if isinstance(output, str) else text_of(output)
                out.append(ToolResult(str(item.get("call_id", "")), text))
        return out

    def response(self, text: str) -> Answer:
        model = ""
        items: dict[int, dict[str, Any]] = {}
        deltas: dict[int, str] = {}
        usage: dict[str, Any] = {}
        errors: list[str] = []
        completed = False
        streamed = False
        for event in map(as_dict, events(text)):
            kind = str(event.get("type", ""))
            if kind.startswith("response."):
                streamed = True
            response = as_dict(event.get("response"))
            if event.get("object") == "response":
                # An answer that was not streamed.
                response, kind = event, "response.completed"
                for i, item in enumerate(as_list(event.get("output"))):
                    items[i] = as_dict(item)
            model = str(response.get("model") or model)
            if kind in ("response.output_item.added", "response.output_item.done"):
                index = as_int(event.get("output_index"))
                if kind.endswith("done") or index not in items:
                    items[index] = as_dict(event.get("item"))
            elif kind == "response.output_text.delta":
                index = as_int(event.get("output_index"))
                deltas[index] = deltas.get(index, "") + str(event.get("delta", ""))
            elif kind == "response.completed":
                completed = True
                usage = as_dict(response.get("usage"))
            elif kind in ("response.failed", "response.incomplete"):
                completed = True
                usage = as_dict(response.get("usage"))
                error = as_dict(response.get("error")) or as_dict(
                    response.get("incomplete_details")
                )
                errors.append(f"{kind}: {error.get('message') or error.get('reason') or error}")
            elif kind == "error":
                errors.append(f"error event: {event.get('message') or event.get('code') or event}")
        if streamed and not completed and not errors:
            errors.append("the stream ended before response.completed")
        texts, calls, thinking = [], [], 0
        for index in sorted(set(items) | set(deltas)):
            item = items.get(index, {"type": "message"})
            kind = str(item.get("type", ""))
            if kind == "message":
                said = "".join(
                    str(as_dict(c).get("text", ""))
                    for c in as_list(item.get("content"))
                    if as_dict(c).get("type") == "output_text"
                )
                texts.append(said or deltas.get(index, ""))
            elif kind in _OPENAI_CALLS:
                name, given = _call(item)
                calls.append(ToolCall(name, given, str(item.get("call_id") or item.get("id", ""))))
            elif kind == "reasoning":
                thinking += sum(len(text_of(s)) for s in [item.get("summary")])
        cached = as_int(as_dict(usage.get("input_tokens_details")).get("cached_tokens"))
        read, wrote = as_int(usage.get("input_tokens")), as_int(usage.get("output_tokens"))
        spent = Usage(read - cached, wrote, cached, known=bool(usage))
        # As Codex counts them: the cached input included.
        return Answer(
            model, tuple(texts), tuple(calls), thinking, spent, "", tuple(errors), read + wrote
        )


def _call(item: dict[str, Any]) -> tuple[str, Any]:
    """A call item's tool name and input (a function's arguments read as JSON)."""
    kind = str(item.get("type", ""))
    given: Any = item.get("input")
    if kind == "function_call":
        given = json_or_text(str(item.get("arguments", "")))
    elif kind != "custom_tool_call":
        given = item.get("action", item)
    return str(item.get("name") or kind), given


def _described(tool: dict[str, Any], name: str) -> tuple[str, str]:
    return name, str(tool.get("description") or "")


def stream(reply: Reply, call_id: str) -> bytes:
    """``reply`` as the Responses API streams it: one output item (a message, or a
    tool call ``call_id``). A shell command is a call of Codex's ``exec``, the
    JavaScript tool through which its model reaches ``exec_command``."""
    item: dict[str, Any]
    if reply.shell is not None:
        command = json.dumps(reply.shell)
        item = _exec(call_id, f"text(await tools.exec_command({{cmd: {command}}}));")
    elif reply.mcp is not None:
        # Codex 0.171 gives its model an MCP server's tools only through `exec`, as
        # JavaScript functions named mcp__SERVER__TOOL (a `-` made `_`); a direct call
        # of that name is refused as unsupported.
        server, tool = (re.sub(r"\W", "_", name) for name in reply.mcp)
        call = f"tools.mcp__{server}__{tool}({json.dumps(reply.tool_input)})"
        item = _exec(call_id, f"text(JSON.stringify(await {call}));")
    elif reply.tool is not None:
        item = {
            "type": "function_call",
            "id": f"fc_{call_id}",
            "call_id": call_id,
            "name": reply.tool,
            "arguments": json.dumps(reply.tool_input),
        }
    else:
        item = {
            "type": "message",
            "id": "msg_scripted",
            "role": "assistant",
            "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
        }
    usage = {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }
    return sse(
        [
            {"type": "response.created", "response": {"id": "resp_scripted"}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": "resp_scripted", "usage": usage}},
        ]
    )


def _exec(call_id: str, code: str) -> dict[str, Any]:
    """A call of Codex's ``exec`` tool running the JavaScript ``code``."""
    return {
        "type": "custom_tool_call",
        "id": f"ctc_{call_id}",
        "call_id": call_id,
        "name": "exec",
        "input": code,
    }


def error_body(status: int, message: str) -> dict[str, Any]:
    """The Responses API's error body."""
    return {"error": {"message": message, "type": "invalid_request_error", "code": None}}
