"""The scripted model: a case's ``script:`` played as the model, in the dialect of the
CLI under test (docs/config-contract.md, "The scripted model").

A run with a script goes through the recording proxy like any other
(:mod:`pytest_evalcases.recording.proxy`), but its channel answers every request itself:
model request *i* with turn *i*, where *i* is the number of tool results the request
carries (the CLI's agent loop sends the whole conversation each time); after the last
turn, with the last ``text``. Across a conversation (``follow_ups``) the script runs on:
a prompt's requests carry the earlier prompts' tool results too, so its request is
answered with the turns played so far plus the tool results it carries beyond its
prompt's first request's (:class:`Playing`). Nothing is forwarded: the run needs no
credential and costs nothing. The answers are written by the dialect modules, beside their parsers.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_evalcases.kinds import ModelDialect
from pytest_evalcases.recording import anthropic, gemini, openai
from pytest_evalcases.recording.views import Reply
from pytest_evalcases.recording.wire import as_dict

#: A tool result in a request, in any of the three dialects: how far the agent loop got.
TOOL_RESULT = re.compile(
    r"\"(tool_result|function_call_output|custom_tool_call_output|functionResponse)\""
)


def tool_results(text: str) -> int:
    """How many tool results a request's body (its JSON text) carries."""
    return len(TOOL_RESULT.findall(text))


@dataclass(frozen=True)
class Turn:
    """One turn of a script: a shell command, a call of a tool by the CLI's own name
    with its input, a call of an MCP server's tool, or the text of an answer."""

    shell: str | None = None
    tool: str | None = None
    input: Mapping[str, Any] = field(default_factory=dict)
    text: str | None = None
    #: A call of an MCP server's tool, ``(SERVER, TOOL)``, with ``input``.
    mcp: tuple[str, str] | None = None

    def reply(self) -> Reply:
        if self.shell is not None:
            return Reply(shell=self.shell)
        if self.mcp is not None:
            return Reply(mcp=self.mcp, tool_input=dict(self.input))
        if self.tool is not None:
            return Reply(tool=self.tool, tool_input=dict(self.input))
        return Reply(text=self.text or "")


@dataclass(frozen=True)
class Script:
    """A case's turns, as the model plays them for a CLI speaking ``dialect``."""

    dialect: ModelDialect
    turns: tuple[Turn, ...]

    def turn(self, results: int) -> Turn:
        """The turn that answers a request carrying ``results`` tool results: turn
        ``results``; after the last, the last ``text`` (an empty answer without one)."""
        if results < len(self.turns):
            return self.turns[results]
        return next((t for t in reversed(self.turns) if t.text is not None), Turn(text=""))

    def respond(
        self, method: str, path: str, body: bytes, at: Callable[[int], int] = int
    ) -> Written:
        """The answer to one request of the run: turn ``at(tool results)``."""
        return respond(self.dialect, method, path, body, lambda n, _: self.turn(at(n)).reply())


class Playing:
    """Where a script is in a run's conversation: the turns the earlier prompts were
    answered with, and the tool results the current prompt's first request carried.
    Thread-safe: the proxy answers from threads of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: Turns of the script the earlier prompts were answered with.
        self._played = 0
        #: Turns the current prompt was answered with so far.
        self._current = 0
        #: Tool results the current prompt's requests carried from earlier prompts:
        #: those of its first request; ``None`` before a follow-up's first request,
        #: 0 for the first prompt, whose requests carry only their own.
        self._first: int | None = 0

    def next_prompt(self) -> None:
        """A follow-up prompt begins: the script goes on after the turns played."""
        with self._lock:
            self._played += self._current
            self._current = 0
            self._first = None

    def index(self, results: int) -> int:
        """The script's turn that answers a request carrying ``results`` tool results."""
        with self._lock:
            if self._first is None:
                self._first = results
            step = max(results - self._first, 0)
            self._current = max(self._current, step + 1)
            return self._played + step


@dataclass(frozen=True)
class Written:
    """A scripted response: its status, content type and body."""

    status: int
    content_type: str
    body: bytes


_JSON = "application/json"
_EVENTS = "text/event-stream"


def respond(
    dialect: ModelDialect,
    method: str,
    path: str,
    raw: bytes,
    reply_for: Callable[[int, dict[str, Any]], Reply],
) -> Written:
    """The answer, in ``dialect``, to a request: ``reply_for(tool results, body)`` for a
    turn of the agent loop; for what the CLIs send beside it, what lets them go on (a
    listing, a token count, a helper call's answer in its JSON schema)."""
    if method != "POST":
        return Written(200, _JSON, b"{}")
    try:
        body = as_dict(json.loads(raw or b"{}"))
    except ValueError:
        body = {}
    if ":countTokens" in path or "count_tokens" in path:
        return Written(200, _JSON, json.dumps({"input_tokens": 10, "totalTokens": 10}).encode())
    if dialect == "gemini" and gemini.is_helper(body):
        return Written(200, _JSON, gemini.helper_answer(body))
    results = tool_results(raw.decode("utf-8", "replace"))
    reply = reply_for(results, body)
    if reply.status != 200:
        message = reply.error or f"scripted error {reply.status}"
        writer = {"anthropic": anthropic, "openai": openai, "gemini": gemini}[dialect]
        return Written(
            reply.status, _JSON, json.dumps(writer.error_body(reply.status, message)).encode()
        )
    if dialect == "anthropic":
        model = str(body.get("model") or "")
        return Written(200, _EVENTS, anthropic.stream(reply, model, f"toolu_{results}"))
    if dialect == "openai":
        return Written(200, _EVENTS, openai.stream(reply, f"call_{results}"))
    streamed = "streamGenerateContent" in path
    return Written(200, _EVENTS if streamed else _JSON, gemini.answer(reply, streamed))
