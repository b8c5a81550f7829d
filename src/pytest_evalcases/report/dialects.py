"""The three model APIs' dialects, as the agent CLIs speak them (docs/replay.md,
"Reading a run"): the Anthropic Messages API (``claude``), the OpenAI Responses API
(``codex``) and the Gemini API (``gemini``). A :class:`Reader` says, of a stored request
body, what its system prompt, tools, user text and tool results are, and of a stored
response body (streamed or not), what the model answered: text, tool calls, tokens.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

Dialect = Literal["anthropic", "openai", "gemini", "other"]


def dialect_of(method: str, path: str, body: Any) -> Dialect:
    """The dialect of a request, by its method and path; ``other`` for none known."""
    if method != "POST" or not isinstance(body, dict):
        return "other"
    route = path.partition("?")[0]
    if route.endswith("/messages"):
        return "anthropic"
    if route.endswith("/responses"):
        return "openai"
    if route.endswith(":streamGenerateContent") or route.endswith(":generateContent"):
        return "gemini"
    return "other"


@dataclass(frozen=True)
class Usage:
    """Tokens of one response, or a sum of them."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    #: Whether any response said its usage (a sum of none is not "0 tokens").
    known: bool = False

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.known or other.known,
        )


@dataclass(frozen=True)
class ToolCall:
    """A tool the model called, with its input and (found in the next request) its
    result; ``result`` is ``None`` when no later request carried one."""

    name: str
    input: Any
    id: str = ""
    result: str | None = None
    failed: bool = False


@dataclass(frozen=True)
class Answer:
    """What one response said."""

    model: str = ""
    texts: tuple[str, ...] = ()
    calls: tuple[ToolCall, ...] = ()
    thinking: int = 0
    usage: Usage = field(default_factory=Usage)
    stop: str = ""
    errors: tuple[str, ...] = ()


#: A tool result a request carries: the call's id, the result's text, whether it failed.
Result = tuple[str, str, bool]


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


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return text


def _block_text(content: Any) -> str:
    """The text of a content that is a string or a list of text blocks."""
    if isinstance(content, str):
        return content
    parts = []
    for block in _list(content):
        block = _dict(block)
        if isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type"):
            parts.append(f"[{block['type']}]")
    return "\n".join(parts)


class Reader:
    """How one dialect says things; each method takes a request body or a response
    body as stored (already parsed from JSON where it was JSON)."""

    def helper(self, body: Any) -> bool:
        """Whether the request is a CLI's side question (a quota check, a JSON-schema
        answer): never a turn of the conversation."""
        return False

    def kind(self, body: Any) -> str:
        """What a request that is not the conversation was, in a few words."""
        return "other conversation"

    def thread(self, body: Any) -> str:
        """What the conversation a request belongs to opens with: its first user text."""
        texts = self.user_texts(body)
        return texts[0] if texts else ""

    def model(self, path: str, body: Any) -> str:
        """The model a request asked for."""
        return str(_dict(body).get("model") or "")

    def system(self, body: Any) -> str:
        """The request's system prompt (its instructions)."""
        raise NotImplementedError

    def tools(self, body: Any) -> tuple[str, ...]:
        """The names of the tools the request offered the model."""
        raise NotImplementedError

    def user_texts(self, body: Any) -> list[str]:
        """The texts of the last user message, in order."""
        raise NotImplementedError

    def results(self, body: Any) -> list[Result]:
        """Every tool result the request carries, in order."""
        raise NotImplementedError

    def response(self, text: str) -> Answer:
        """What a response body (streamed or not) said."""
        raise NotImplementedError


class _Anthropic(Reader):
    def helper(self, body: Any) -> bool:
        body = _dict(body)
        return _int(body.get("max_tokens")) == 1 or bool(
            _dict(body.get("output_config")).get("format")
        )

    def kind(self, body: Any) -> str:
        body = _dict(body)
        if _int(body.get("max_tokens")) == 1:
            return "quota check"
        schema = _dict(_dict(_dict(body.get("output_config")).get("format")).get("schema"))
        if schema:
            return "structured answer: " + ", ".join(_dict(schema.get("properties")))
        return "other conversation"

    def thread(self, body: Any) -> str:
        messages = _list(_dict(body).get("messages"))
        return _block_text(_dict(messages[0]).get("content")) if messages else ""

    def system(self, body: Any) -> str:
        system = _dict(body).get("system")
        texts = (
            [system]
            if isinstance(system, str)
            else [str(_dict(b).get("text", "")) for b in _list(system)]
        )
        # Claude Code's first system block is a billing header, not instructions.
        return "\n\n".join(t for t in texts if t and not t.startswith("x-anthropic-billing-header"))

    def tools(self, body: Any) -> tuple[str, ...]:
        return tuple(str(_dict(t).get("name", "")) for t in _list(_dict(body).get("tools")))

    def user_texts(self, body: Any) -> list[str]:
        for message in reversed(_list(_dict(body).get("messages"))):
            message = _dict(message)
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                return [content]
            texts = [
                str(_dict(b).get("text", ""))
                for b in _list(content)
                if _dict(b).get("type") == "text"
            ]
            if texts:
                return texts
        return []

    def results(self, body: Any) -> list[Result]:
        return [
            (str(b.get("tool_use_id", "")), _block_text(b.get("content")), bool(b.get("is_error")))
            for m in _list(_dict(body).get("messages"))
            for b in map(_dict, _list(_dict(m).get("content")))
            if b.get("type") == "tool_result"
        ]

    def response(self, text: str) -> Answer:
        model, stop = "", ""
        blocks: dict[int, dict[str, Any]] = {}
        usage: dict[str, int] = {}
        errors: list[str] = []
        stopped = False
        streamed = False
        for event in map(_dict, events(text)):
            kind = event.get("type")
            if kind == "message":
                # An answer that was not streamed.
                model = str(event.get("model", ""))
                stop = str(event.get("stop_reason") or "")
                for i, block in enumerate(_list(event.get("content"))):
                    blocks[i] = {**_dict(block), "json": ""}
                usage.update({k: _int(v) for k, v in _dict(event.get("usage")).items()})
                stopped = True
            elif kind == "message_start":
                streamed = True
                message = _dict(event.get("message"))
                model = str(message.get("model", ""))
                usage.update({k: _int(v) for k, v in _dict(message.get("usage")).items()})
            elif kind == "content_block_start":
                block = dict(_dict(event.get("content_block")))
                block["json"] = ""
                blocks[_int(event.get("index"))] = block
            elif kind == "content_block_delta":
                block = blocks.setdefault(_int(event.get("index")), {"type": "text", "json": ""})
                delta = _dict(event.get("delta"))
                if delta.get("type") == "text_delta":
                    block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
                elif delta.get("type") == "input_json_delta":
                    block["json"] += str(delta.get("partial_json", ""))
                elif delta.get("type") == "thinking_delta":
                    block["thinking"] = str(block.get("thinking", "")) + str(
                        delta.get("thinking", "")
                    )
            elif kind == "message_delta":
                stop = str(_dict(event.get("delta")).get("stop_reason") or stop)
                # The delta's counts are the message's so far: they replace the start's.
                usage.update({k: _int(v) for k, v in _dict(event.get("usage")).items()})
            elif kind == "message_stop":
                stopped = True
            elif kind == "error":
                error = _dict(event.get("error"))
                errors.append(f"error event: {error.get('type', '')}: {error.get('message', '')}")
        if streamed and not stopped and not errors:
            errors.append("the stream ended before message_stop")
        texts, calls, thinking = [], [], 0
        for _, block in sorted(blocks.items()):
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind in ("tool_use", "server_tool_use"):
                given = _json_or_text(block["json"]) if block["json"] else block.get("input", {})
                calls.append(ToolCall(str(block.get("name", "")), given, str(block.get("id", ""))))
            elif kind in ("thinking", "redacted_thinking"):
                thinking += len(str(block.get("thinking", block.get("data", ""))))
        return Answer(
            model=model,
            texts=tuple(texts),
            calls=tuple(calls),
            thinking=thinking,
            usage=Usage(
                usage.get("input_tokens", 0),
                usage.get("output_tokens", 0),
                usage.get("cache_read_input_tokens", 0),
                usage.get("cache_creation_input_tokens", 0),
                known=bool(usage),
            ),
            stop=stop,
            errors=tuple(errors),
        )


_OPENAI_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
_OPENAI_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


class _OpenAI(Reader):
    def system(self, body: Any) -> str:
        body = _dict(body)
        texts = [str(body["instructions"])] if body.get("instructions") else []
        texts += [
            _block_text(item.get("content"))
            for item in map(_dict, _list(body.get("input")))
            if item.get("role") in ("developer", "system") and item.get("content")
        ]
        return "\n\n".join(texts)

    def tools(self, body: Any) -> tuple[str, ...]:
        body = _dict(body)
        # Codex lists its tools in the input (an `additional_tools` item) too.
        listed = _list(body.get("tools")) + [
            tool
            for item in map(_dict, _list(body.get("input")))
            if item.get("type") == "additional_tools"
            for tool in _list(item.get("tools"))
        ]
        names: list[str] = []
        for tool in map(_dict, listed):
            nested = _list(tool.get("tools"))
            names += (
                [str(_dict(t).get("name", "")) for t in nested]
                if nested
                else [str(tool.get("name") or tool.get("type", ""))]
            )
        return tuple(names)

    def _users(self, body: Any) -> list[dict[str, Any]]:
        return [
            item
            for item in map(_dict, _list(_dict(body).get("input")))
            if item.get("role") == "user"
        ]

    def thread(self, body: Any) -> str:
        users = self._users(body)
        return _block_text(users[0].get("content")) if users else ""

    def user_texts(self, body: Any) -> list[str]:
        return [_block_text(u.get("content")) for u in self._users(body)]

    def results(self, body: Any) -> list[Result]:
        out = []
        for item in map(_dict, _list(_dict(body).get("input"))):
            if item.get("type") in _OPENAI_OUTPUTS:
                output = item.get("output")
                text = output if isinstance(output, str) else _block_text(output)
                out.append((str(item.get("call_id", "")), text, False))
        return out

    def response(self, text: str) -> Answer:
        model = ""
        items: dict[int, dict[str, Any]] = {}
        deltas: dict[int, str] = {}
        usage: dict[str, Any] = {}
        errors: list[str] = []
        completed = False
        streamed = False
        for event in map(_dict, events(text)):
            kind = str(event.get("type", ""))
            if kind.startswith("response."):
                streamed = True
            response = _dict(event.get("response"))
            if event.get("object") == "response":
                # An answer that was not streamed.
                response, kind = event, "response.completed"
                for i, item in enumerate(_list(event.get("output"))):
                    items[i] = _dict(item)
            model = str(response.get("model") or model)
            if kind in ("response.output_item.added", "response.output_item.done"):
                index = _int(event.get("output_index"))
                if kind.endswith("done") or index not in items:
                    items[index] = _dict(event.get("item"))
            elif kind == "response.output_text.delta":
                index = _int(event.get("output_index"))
                deltas[index] = deltas.get(index, "") + str(event.get("delta", ""))
            elif kind == "response.completed":
                completed = True
                usage = _dict(response.get("usage"))
            elif kind in ("response.failed", "response.incomplete"):
                completed = True
                usage = _dict(response.get("usage"))
                error = _dict(response.get("error")) or _dict(response.get("incomplete_details"))
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
                    str(_dict(c).get("text", ""))
                    for c in _list(item.get("content"))
                    if _dict(c).get("type") == "output_text"
                )
                texts.append(said or deltas.get(index, ""))
            elif kind in _OPENAI_CALLS:
                given: Any = item.get("input")
                if kind == "function_call":
                    given = _json_or_text(str(item.get("arguments", "")))
                elif kind != "custom_tool_call":
                    given = item.get("action", item)
                calls.append(
                    ToolCall(
                        str(item.get("name") or kind),
                        given,
                        str(item.get("call_id") or item.get("id", "")),
                    )
                )
            elif kind == "reasoning":
                thinking += sum(len(_block_text(s)) for s in [item.get("summary")])
        cached = _int(_dict(usage.get("input_tokens_details")).get("cached_tokens"))
        return Answer(
            model=model,
            texts=tuple(texts),
            calls=tuple(calls),
            thinking=thinking,
            usage=Usage(
                _int(usage.get("input_tokens")) - cached,
                _int(usage.get("output_tokens")),
                cached,
                known=bool(usage),
            ),
            errors=tuple(errors),
        )


class _Gemini(Reader):
    def helper(self, body: Any) -> bool:
        config = _dict(_dict(body).get("generationConfig"))
        return bool(config.get("responseJsonSchema") or config.get("responseSchema"))

    def kind(self, body: Any) -> str:
        config = _dict(_dict(body).get("generationConfig"))
        schema = _dict(config.get("responseJsonSchema") or config.get("responseSchema"))
        if schema:
            return "structured answer: " + ", ".join(_dict(schema.get("properties")))
        return "other conversation"

    def model(self, path: str, body: Any) -> str:
        route = path.partition("?")[0]
        return route.rpartition("/models/")[2].partition(":")[0]

    def system(self, body: Any) -> str:
        system = _dict(_dict(body).get("systemInstruction"))
        return "\n\n".join(str(_dict(p).get("text", "")) for p in _list(system.get("parts")))

    def tools(self, body: Any) -> tuple[str, ...]:
        return tuple(
            str(_dict(f).get("name", ""))
            for t in _list(_dict(body).get("tools"))
            for f in _list(_dict(t).get("functionDeclarations"))
        )

    def _user_parts(self, body: Any) -> list[list[Any]]:
        return [
            _list(_dict(c).get("parts"))
            for c in _list(_dict(body).get("contents"))
            if _dict(c).get("role", "user") == "user"
        ]

    def thread(self, body: Any) -> str:
        users = self._user_parts(body)
        return "\n".join(str(_dict(p).get("text", "")) for p in users[0]) if users else ""

    def user_texts(self, body: Any) -> list[str]:
        for parts in reversed(self._user_parts(body)):
            texts = [str(_dict(p)["text"]) for p in parts if "text" in _dict(p)]
            if texts:
                return texts
        return []

    def results(self, body: Any) -> list[Result]:
        out = []
        for parts in self._user_parts(body):
            for part in map(_dict, parts):
                answer = _dict(part.get("functionResponse"))
                if not answer:
                    continue
                response = answer.get("response")
                output = _dict(response).get("output", _dict(response).get("error", response))
                text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
                failed = "error" in _dict(response) and "output" not in _dict(response)
                out.append((str(answer.get("id") or answer.get("name", "")), text, failed))
        return out

    def response(self, text: str) -> Answer:
        model, stop = "", ""
        texts: list[str] = []
        calls: list[ToolCall] = []
        thinking = 0
        usage: dict[str, Any] = {}
        errors: list[str] = []
        for chunk in map(_dict, events(text)):
            if chunk.get("error"):
                error = _dict(chunk.get("error"))
                errors.append(
                    f"error: {error.get('status', '')} {error.get('message', '')}".strip()
                )
            model = str(chunk.get("modelVersion") or model)
            usage = _dict(chunk.get("usageMetadata")) or usage
            for candidate in map(_dict, _list(chunk.get("candidates"))[:1]):
                stop = str(candidate.get("finishReason") or stop)
                for part in map(_dict, _list(_dict(candidate.get("content")).get("parts"))):
                    if part.get("thought"):
                        thinking += len(str(part.get("text", "")))
                    elif "text" in part:
                        if texts and not calls:
                            texts[-1] += str(part["text"])
                        else:
                            texts.append(str(part["text"]))
                    elif "functionCall" in part:
                        call = _dict(part["functionCall"])
                        calls.append(
                            ToolCall(
                                str(call.get("name", "")),
                                call.get("args", {}),
                                str(call.get("id") or ""),
                            )
                        )
        cached = _int(usage.get("cachedContentTokenCount"))
        return Answer(
            model=model,
            texts=tuple(texts),
            calls=tuple(calls),
            thinking=thinking,
            usage=Usage(
                _int(usage.get("promptTokenCount")) - cached,
                _int(usage.get("candidatesTokenCount")) + _int(usage.get("thoughtsTokenCount")),
                cached,
                known=bool(usage),
            ),
            stop=stop,
            errors=tuple(errors),
        )


READERS: dict[Dialect, Reader] = {
    "anthropic": _Anthropic(),
    "openai": _OpenAI(),
    "gemini": _Gemini(),
}
