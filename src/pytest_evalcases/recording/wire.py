"""Reading a model API's wire format leniently: the JSON documents of a response,
streamed as server-sent events or not, values that are not of the expected type read as
empty, and the words of an API's error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def events(text: str) -> Iterator[Any]:
    """The JSON of each server-sent event's ``data:`` lines, or of the body when it is
    one JSON document (an answer that was not streamed)."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            whole = json.loads(stripped)
        except ValueError:
            pass
        else:
            yield from whole if isinstance(whole, list) else [whole]
            return
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(
            line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")
        )
        if not data or data == "[DONE]":
            continue
        try:
            yield json.loads(data)
        except ValueError:
            continue


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def json_or_text(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return text


def text_of(content: Any) -> str:
    """The text of a content that is a string or a list of text blocks."""
    if isinstance(content, str):
        return content
    parts = []
    for block in as_list(content):
        block = as_dict(block)
        if isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type"):
            parts.append(f"[{block['type']}]")
    return "\n".join(parts)


def error_message(text: str) -> str:
    """The ``message`` of an API's JSON error body (the Anthropic, OpenAI and Gemini
    APIs nest it as ``{"error": {"message": …}}``, Gemini's in a list); ``""`` when the
    body says none."""
    try:
        return _error_message(json.loads(text))
    except ValueError:
        return ""


def _error_message(doc: Any) -> str:
    if isinstance(doc, list) and doc:
        return _error_message(doc[0])
    if not isinstance(doc, dict):
        return ""
    error = doc.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    message = doc.get("message")
    return message if isinstance(message, str) else ""


def sse(events: list[dict[str, Any]]) -> bytes:
    """Server-sent events, each named by its JSON's ``type`` (how the Anthropic and
    OpenAI APIs stream)."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
