"""Scripted model servers for tests: the Anthropic Messages API, the OpenAI Responses API and
the Gemini API, as the real agent CLIs stream them, on 127.0.0.1 and a free port. The
answers are the product's scripted model's (:mod:`pytest_evalcases.recording.script`);
here a test scripts them with any function of the request.

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
from typing import Any

from pytest_evalcases.kinds import ModelDialect
from pytest_evalcases.recording import views
from pytest_evalcases.recording.gemini import is_helper
from pytest_evalcases.recording.script import respond, tool_results

Dialect = ModelDialect
__all__ = [
    "MARKER",
    "Dialect",
    "ModelServer",
    "Reply",
    "Request",
    "Script",
    "model_server",
    "turns",
]
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
        return tool_results(self.text)


@dataclass(frozen=True)
class Reply(views.Reply):
    """What the model answers (the product's scripted reply), reporting some usage by
    default, as a live model's answer does."""

    input_tokens: int = 100
    output_tokens: int = 10


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
    return is_helper(request.body)


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
            written = respond(dialect, "POST", self.path, raw, lambda *_: server.script(request))
            self._send(written.status, written.body, written.content_type)

        def _send(self, status: int, data: bytes, ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    # A short poll: shutdown() waits for it, at the end of every test.
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
