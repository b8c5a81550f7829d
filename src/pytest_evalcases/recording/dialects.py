"""The three model APIs' dialects, as the agent CLIs speak them (docs/replay.md,
"Reading a run", "What is normalised"): the Anthropic Messages API (``claude``,
:mod:`~pytest_evalcases.recording.anthropic`), the OpenAI Responses API (``codex``,
:mod:`~pytest_evalcases.recording.openai`) and the Gemini API (``gemini``,
:mod:`~pytest_evalcases.recording.gemini`). One parser for each, found by the request's
method and path: :func:`request` says what a request gave the model (its model, system
prompt, tools, messages and tool results), :func:`response` what the model answered
(text, tool calls, tokens, stop reason), streamed or not. Replay and the transcript
view read the wire through here; :meth:`~pytest_evalcases.recording.views.Request.reaches`
says whether a text reached the model, and where.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_evalcases.recording.anthropic import Anthropic
from pytest_evalcases.recording.gemini import Gemini
from pytest_evalcases.recording.openai import OpenAI
from pytest_evalcases.recording.views import UNKNOWN, Answer, Dialect, Parser, Request

#: The parser of each dialect.
PARSERS: dict[Dialect, Parser] = {
    "anthropic": Anthropic(),
    "openai": OpenAI(),
    "gemini": Gemini(),
}


def dialect_of(method: str, path: str) -> Dialect:
    """The dialect of a request, by its method and path; ``other`` for none known."""
    if method != "POST":
        return "other"
    route = path.partition("?")[0]
    if route.endswith("/messages"):
        return "anthropic"
    if route.endswith("/responses"):
        return "openai"
    if route.endswith(":streamGenerateContent") or route.endswith(":generateContent"):
        return "gemini"
    return "other"


def parse_body(text: str | None) -> Any:
    """A stored request body: its JSON, its text when it is not JSON, ``None`` when
    there is none."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def request(method: str, path: str, body: Any) -> Request:
    """What a request (its body parsed from JSON) gave the model; :data:`UNKNOWN`
    (dialect ``other``) for a request of no known dialect, or one whose body is not a
    JSON object."""
    dialect = dialect_of(method, path)
    if dialect == "other" or not isinstance(body, dict):
        return UNKNOWN
    return PARSERS[dialect].request(path, body)


def response(method: str, path: str, text: str) -> Answer:
    """What the response (its body as text) to a request said; an empty answer for a
    request of no known dialect."""
    dialect = dialect_of(method, path)
    return Answer() if dialect == "other" else PARSERS[dialect].response(text)
