"""Scripted model servers for tests: the Anthropic Messages API, the OpenAI Responses API and
the Gemini API, as the real agent CLIs stream them, on 127.0.0.1 and a free port.

A test says what the model answers with a function of the request (:class:`Request` ->
:class:`Reply`); the server speaks the dialect of the CLI pointed at it and records every
request. The real CLI then runs its own agent loop against it: tool calls executed in the
workspace, its real output format, its real error handling.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Dialect = Literal["anthropic", "openai", "gemini"]
MARKER = re.compile(r"MARK-[A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Request:
    """One request a CLI sent, as the server saw it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def text(self) -> str:
        """The whole body as JSON text, to look for what reached the model."""
        return json.dumps(self.body)

    @property
    def markers(self) -> list[str]:
        """The distinct ``MARK-…`` tokens in the request, sorted."""
        return sorted(set(MARKER.findall(self.text)))

    @property
    def tool_results(self) -> int:
        """How many tool results the conversation carries (the agent loop's turn)."""
        return (
            self.text.count('"tool_result"')
            + self.text.count('"function_call_output"')
            + (self.text.count('"custom_tool_call_output"') + self.text.count('"functionResponse"'))
        )


@dataclass(frozen=True)
class Reply:
    """What the model answers: text, a shell command to run, or an HTTP error."""

    text: str = ""
    shell: str | None = None
    status: int = 200
    error: str = ""
    input_tokens: int = 100
    output_tokens: int = 10
    #: Anthropic's ``cache_read_input_tokens``, besides ``input_tokens``.
    cache_read_tokens: int = 0
    #: A call of this tool with ``tool_input`` (Anthropic and Gemini dialects), e.g.
    #: Claude Code's ``Skill`` with ``{"skill": NAME}``.
    tool: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)

    @property
    def calls_tool(self) -> bool:
        return self.shell is not None or self.tool is not None


Script = Callable[[Request], Reply]


def turns(*replies: Reply) -> Script:
    """Reply ``i`` to the request that carries ``i`` tool results; the last one after."""

    def script(request: Request) -> Reply:
        return replies[min(request.tool_results, len(replies) - 1)]

    return script


@dataclass
class ModelServer:
    """A running scripted server; ``url`` is its base URL for the CLI."""

    dialect: Dialect
    script: Script
    requests: list[Request] = field(default_factory=list)
    url: str = ""

    def conversation(self) -> list[Request]:
        """The agent-loop requests, leaving out the CLIs' helper calls (JSON-schema answers)."""
        return [r for r in self.requests if not _is_helper(r)]


def _is_helper(request: Request) -> bool:
    config = request.body.get("generationConfig") or {}
    return bool(config.get("responseJsonSchema") or config.get("responseSchema"))


@contextmanager
def model_server(dialect: Dialect, script: Script) -> Iterator[ModelServer]:
    """Serve ``script`` in ``dialect`` on 127.0.0.1 until the block ends."""
    server = ModelServer(dialect, script)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            self._send(200, b"{}", "application/json")

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            request = Request(self.path, dict(self.headers), body if isinstance(body, dict) else {})
            with lock:
                server.requests.append(request)
            if ":countTokens" in self.path or "count_tokens" in self.path:
                self._send(200, json.dumps({"input_tokens": 10, "totalTokens": 10}).encode())
                return
            if _is_helper(request):
                self._send(200, json.dumps(_gemini_chunk([_schema_answer(body)])).encode())
                return
            reply = server.script(request)
            if reply.status != 200:
                self._send(reply.status, json.dumps(_error(dialect, reply)).encode())
                return
            payload, ctype = _answer(dialect, request, reply)
            self._send(200, payload, ctype)

        def _send(self, status: int, data: bytes, ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _answer(dialect: Dialect, request: Request, reply: Reply) -> tuple[bytes, str]:
    if dialect == "anthropic":
        return _sse(_anthropic_events(request, reply)), "text/event-stream"
    if dialect == "openai":
        return _sse(_openai_events(reply)), "text/event-stream"
    chunk = _gemini_chunk(_gemini_parts(reply), reply)
    if "streamGenerateContent" in request.path:
        return f"data: {json.dumps(chunk)}\r\n\r\n".encode(), "text/event-stream"
    return json.dumps(chunk).encode(), "application/json"


def _sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _anthropic_events(request: Request, reply: Reply) -> list[dict[str, Any]]:
    model = str(request.body.get("model") or "claude-scripted")
    usage = {
        "input_tokens": reply.input_tokens,
        "cache_read_input_tokens": reply.cache_read_tokens,
        "output_tokens": 1,
    }
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_scripted",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        }
    ]
    if reply.tool is not None:
        block = {"type": "tool_use", "id": f"toolu_{request.tool_results}", "name": reply.tool}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.tool_input)}
        events.append(
            {"type": "content_block_start", "index": 0, "content_block": {**block, "input": {}}}
        )
    elif reply.shell is not None:
        block = {"type": "tool_use", "id": f"toolu_{request.tool_results}", "name": "Bash"}
        delta = {
            "type": "input_json_delta",
            "partial_json": json.dumps({"command": reply.shell, "description": "run"}),
        }
        events.append(
            {"type": "content_block_start", "index": 0, "content_block": {**block, "input": {}}}
        )
    else:
        delta = {"type": "text_delta", "text": reply.text}
        events.append(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        )
    events += [
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
    return events


def _openai_events(reply: Reply) -> list[dict[str, Any]]:
    if reply.shell is not None:
        item: dict[str, Any] = {
            "type": "custom_tool_call",
            "id": "ctc_scripted",
            "call_id": "call_scripted",
            "name": "exec",
            # Codex's model reaches the shell through `exec`, a JavaScript tool whose
            # nested tools include exec_command.
            "input": f"text(await tools.exec_command({{cmd: {json.dumps(reply.shell)}}}));",
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
    return [
        {"type": "response.created", "response": {"id": "resp_scripted"}},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": "resp_scripted", "usage": usage}},
    ]


def _gemini_parts(reply: Reply) -> list[dict[str, Any]]:
    if reply.tool is not None:
        return [{"functionCall": {"name": reply.tool, "args": reply.tool_input}}]
    if reply.shell is not None:
        return [{"functionCall": {"name": "run_shell_command", "args": {"command": reply.shell}}}]
    return [{"text": reply.text}]


def _gemini_chunk(parts: list[dict[str, Any]], reply: Reply | None = None) -> dict[str, Any]:
    reply = reply or Reply()
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": reply.input_tokens,
            "candidatesTokenCount": reply.output_tokens,
            "totalTokenCount": reply.input_tokens + reply.output_tokens,
        },
        "modelVersion": "gemini-scripted",
    }


def _schema_answer(body: dict[str, Any]) -> dict[str, Any]:
    """A JSON answer that matches a helper call's ``responseJsonSchema``: each property
    its enum's first value, else an empty value of its type."""
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    empty: dict[str, Any] = {"string": "", "number": 0, "integer": 0, "boolean": False, "array": []}
    answer = {
        name: (
            prop["enum"][0] if prop.get("enum") else empty.get(str(prop.get("type")).lower(), {})
        )
        for name, prop in (schema.get("properties") or {}).items()
    }
    if "next_speaker" in answer:
        answer["next_speaker"] = "user"
    return {"text": json.dumps(answer)}


#: The error body each API sends for a status, as its SDKs parse it.
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def _error(dialect: Dialect, reply: Reply) -> dict[str, Any]:
    message = reply.error or f"scripted error {reply.status}"
    if dialect == "anthropic":
        kind = _ANTHROPIC_ERRORS.get(reply.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if dialect == "openai":
        return {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    return {"error": {"code": reply.status, "message": message, "status": "UNAVAILABLE"}}
