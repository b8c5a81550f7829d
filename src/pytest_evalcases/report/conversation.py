"""A run's recorded exchange read back as a conversation (docs/replay.md, "Reading a
run"): the prompt, each model turn with its text and tool calls, each tool call's result,
the final answer, and the tokens of every turn.

Three dialects are understood, as their CLIs speak them: the Anthropic Messages API
(``claude``), the OpenAI Responses API (``codex``) and the Gemini API (``gemini``). A turn
is one request of the main conversation and the model's answer to it; a tool call's
result is found in the next request, which carries it back to the model. Requests that
are not the conversation (a CLI's title or quota helpers, a JSON-schema side question,
a refused WebSocket upgrade, a sub-agent's own conversation) are kept apart as
:class:`Other` requests. An exchange of no known dialect is read as plain requests.

Plain Python: nothing here imports pytest.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pytest_evalcases.errors import EvalcasesError
from pytest_evalcases.run import recording

Dialect = Literal["anthropic", "openai", "gemini", "other"]


class RecordingError(EvalcasesError):
    """A stored exchange that cannot be read: names the file, and the line when one is
    at fault."""


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
class Turn:
    """One request of the main conversation and the model's answer."""

    seq: int
    model: str
    status: int
    reason: str
    texts: tuple[str, ...] = ()
    calls: tuple[ToolCall, ...] = ()
    #: Characters of reasoning the model streamed (shown as a size, not read out).
    thinking: int = 0
    usage: Usage = Usage()
    stop: str = ""
    #: What went wrong: an HTTP error's message, an error event, a cut stream, the
    #: proxy's ``error``.
    errors: tuple[str, ...] = ()
    #: The request's or the response's body was not stored (past the size limit).
    omitted: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return "\n\n".join(t for t in self.texts if t.strip())


@dataclass(frozen=True)
class Other:
    """A request that is not the main conversation, described in one line."""

    seq: int
    method: str
    path: str
    status: int
    reason: str
    #: What it was: ``quota check``, ``structured answer: title``, ``other
    #: conversation`` …; empty for a request of no known dialect.
    kind: str = ""
    model: str = ""
    asked: str = ""
    answered: str = ""
    usage: Usage = Usage()
    error: str = ""


@dataclass(frozen=True)
class Raw:
    """An exchange of no known dialect, for listing as it is."""

    seq: int
    method: str
    path: str
    status: int
    reason: str
    request: str
    response: str
    error: str = ""


@dataclass(frozen=True)
class Conversation:
    """A run's exchange read back."""

    path: Path
    header: dict[str, Any]
    dialect: Dialect
    system: str = ""
    tools: tuple[str, ...] = ()
    #: Text the CLI put before the prompt in the user's messages (environment, date).
    context: tuple[str, ...] = ()
    prompt: str | None = None
    turns: tuple[Turn, ...] = ()
    others: tuple[Other, ...] = ()
    raw: tuple[Raw, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def answer(self) -> str:
        """The model's last text of the conversation: the final answer."""
        for turn in reversed(self.turns):
            if turn.text:
                return turn.text
        return ""

    @property
    def usage(self) -> Usage:
        return sum((t.usage for t in self.turns), Usage())

    @property
    def other_usage(self) -> Usage:
        return sum((o.usage for o in self.others), Usage())


# --- reading the file -----------------------------------------------------------------


def read(path: Path) -> Conversation:
    """The conversation stored at ``path`` (``exchange.jsonl`` or its ``.gz``); a
    :class:`RecordingError` names the file and line that do not read."""
    header, entries = _lines(path)
    return build(path, header, entries)


def _lines(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            data = gzip.decompress(data)
        text = data.decode("utf-8")
    except OSError as exc:
        raise RecordingError(f"{path}: cannot read the recording: {exc.strerror or exc}") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise RecordingError(f"{path}: not a complete gzip file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise RecordingError(f"{path}: not UTF-8 text ({exc.reason})") from None
    objects: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise RecordingError(f"{path}:{number}: not a JSON object: {exc}") from None
        if not isinstance(value, dict):
            raise RecordingError(f"{path}:{number}: not a JSON object")
        if objects and not isinstance(value.get("request"), dict):
            raise RecordingError(f"{path}:{number}: an exchange without its request")
        objects.append(value)
    if not objects or objects[0].get("format") != "pytest-evalcases exchange":
        raise RecordingError(f"{path}:1: not a recorded exchange (no header line)")
    version = objects[0].get("version")
    if not isinstance(version, int) or version > recording.FORMAT_VERSION:
        raise RecordingError(
            f"{path}:1: recording format version {version!r} is not one this version reads "
            f"(up to {recording.FORMAT_VERSION})"
        )
    return objects[0], objects[1:]


# --- the exchanges --------------------------------------------------------------------


@dataclass
class _Exchange:
    """One stored exchange, its bodies decoded where they are JSON."""

    seq: int
    method: str
    path: str
    status: int
    reason: str
    request: Any
    response_text: str | None
    error: str
    omitted: list[str] = field(default_factory=list)
    binary: list[str] = field(default_factory=list)

    @property
    def dialect(self) -> Dialect:
        if self.method != "POST" or not isinstance(self.request, dict):
            return "other"
        route = self.path.partition("?")[0]
        if route.endswith("/messages"):
            return "anthropic"
        if route.endswith("/responses"):
            return "openai"
        if route.endswith(":streamGenerateContent") or route.endswith(":generateContent"):
            return "gemini"
        return "other"


def _exchange(entry: dict[str, Any]) -> _Exchange:
    request = entry.get("request") or {}
    response = entry.get("response") or {}
    omitted: list[str] = []
    binary: list[str] = []
    bodies: list[str | None] = []
    for what, message in (("request", request), ("response", response)):
        if "body_omitted" in message:
            omitted.append(f"{what} body not stored ({message['body_omitted']:,} bytes)")
            bodies.append(None)
        elif "body_base64" in message:
            binary.append(
                f"{what} body is binary ({len(str(message['body_base64'])) * 3 // 4:,} bytes)"
            )
            bodies.append(None)
        else:
            bodies.append(str(message.get("body", "")))
    parsed: Any = None
    if bodies[0]:
        try:
            parsed = json.loads(bodies[0])
        except ValueError:
            parsed = bodies[0]
    return _Exchange(
        seq=int(entry.get("seq", 0)),
        method=str(request.get("method", "")),
        path=str(request.get("path", "")),
        status=int(response.get("status") or 0),
        reason=str(response.get("reason", "")),
        request=parsed,
        response_text=bodies[1],
        error=str(entry.get("error") or ""),
        omitted=omitted,
        binary=binary,
    )


def build(path: Path, header: dict[str, Any], entries: list[dict[str, Any]]) -> Conversation:
    """The conversation of a recording's ``header`` and ``entries`` (its exchange lines)."""
    exchanges = [_exchange(e) for e in entries]
    notes = _notes(header, exchanges)
    dialects: list[Dialect] = [x.dialect for x in exchanges if x.dialect != "other"]
    if not dialects:
        return Conversation(
            path, header, "other", raw=tuple(_raw(x) for x in exchanges), notes=notes
        )
    dialect: Dialect = max(set(dialects), key=dialects.count)
    reader = _READERS[dialect]
    main, others = _split(exchanges, dialect, reader)
    turns = _turns(main, reader)
    first = main[0].request if main else {}
    system, tools = reader.system(first), reader.tools(first)
    context, prompt = _prompt(reader.user_texts(first))
    return Conversation(
        path,
        header,
        dialect,
        system=system,
        tools=tools,
        context=context,
        prompt=prompt,
        turns=turns,
        others=tuple(_other(x, reader if x.dialect == dialect else None) for x in others),
        notes=notes,
    )


def _notes(header: dict[str, Any], exchanges: list[_Exchange]) -> tuple[str, ...]:
    notes = []
    if header.get("truncated"):
        notes.append(
            "the recording is truncated: it reached its size limit, and the later "
            "exchanges were stored without their bodies"
        )
    count = header.get("exchanges")
    if isinstance(count, int) and count != len(exchanges):
        notes.append(f"the header counts {count} exchanges, the file holds {len(exchanges)}")
    return tuple(notes)


def _prompt(texts: list[str]) -> tuple[tuple[str, ...], str | None]:
    """The user's texts of the first request: the last is the prompt, the rest the
    context the CLI added before it."""
    if not texts:
        return (), None
    return tuple(texts[:-1]), texts[-1]


def _split(
    exchanges: list[_Exchange], dialect: Dialect, reader: _Reader
) -> tuple[list[_Exchange], list[_Exchange]]:
    """The main conversation's requests and the others. The main conversation is the
    thread (requests opening with the same first user message) with the most tools, then
    the most requests; a CLI's helpers (a quota check, a JSON-schema side question) and
    its sub-agents open differently or ask for a structured answer."""
    threads: dict[str, list[_Exchange]] = {}
    for x in exchanges:
        if x.dialect == dialect and not reader.helper(x.request):
            threads.setdefault(reader.thread(x.request), []).append(x)
    if not threads:
        return [], exchanges
    main = max(
        threads.values(),
        key=lambda xs: (len(reader.tools(xs[0].request)), len(xs), -xs[0].seq),
    )
    chosen = set(map(id, main))
    return main, [x for x in exchanges if id(x) not in chosen]


def _turns(main: list[_Exchange], reader: _Reader) -> tuple[Turn, ...]:
    turns: list[Turn] = []
    for i, x in enumerate(main):
        # An HTTP error's body is the error, said on the status line; no answer.
        failed = x.status >= 400
        answer = None if x.response_text is None or failed else reader.response(x.response_text)
        errors = list(answer.errors) if answer else []
        if failed:
            errors.insert(0, f"HTTP {x.status} {x.reason}".rstrip() + _error_body(x))
        if x.error:
            errors.append(x.error)
        calls = list(answer.calls) if answer else []
        if calls and i + 1 < len(main):
            calls = _with_results(calls, reader, x.request, main[i + 1].request)
        turns.append(
            Turn(
                seq=x.seq,
                model=(answer.model if answer else "") or reader.model(x),
                status=x.status,
                reason=x.reason,
                texts=answer.texts if answer else (),
                calls=tuple(calls),
                thinking=answer.thinking if answer else 0,
                usage=answer.usage if answer else Usage(),
                stop=answer.stop if answer else "",
                errors=tuple(errors),
                omitted=tuple(x.omitted + x.binary),
            )
        )
    return tuple(turns)


def _error_body(x: _Exchange) -> str:
    """``: message`` of an API's error body (every dialect nests it as
    ``{"error": {"message": …}}``), or the body's first line."""
    text = (x.response_text or "").strip()
    if not text:
        return ""
    try:
        data = json.loads(text)
    except ValueError:
        return ": " + text.splitlines()[0][:300]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return f": {error['message']}"
    return ": " + text[:300]


def _with_results(
    calls: list[ToolCall], reader: _Reader, before: Any, after: Any
) -> list[ToolCall]:
    """``calls`` with their results: those the next request carries that this one did
    not (a CLI sends the whole conversation each time), matched by id, else in order."""
    old, new = reader.results(before), reader.results(after)
    fresh = new[len(old) :] if len(new) >= len(old) else new
    unused = list(fresh)
    out = []
    for call in calls:
        match = next((r for r in unused if call.id and r[0] == call.id), None)
        if match is None and unused and not any(call.id and r[0] == call.id for r in new):
            match = unused[0]
        if match is None:
            out.append(call)
            continue
        unused.remove(match)
        out.append(ToolCall(call.name, call.input, call.id, result=match[1], failed=match[2]))
    return out


def _other(x: _Exchange, reader: _Reader | None) -> Other:
    base = {
        "seq": x.seq,
        "method": x.method,
        "path": x.path,
        "status": x.status,
        "reason": x.reason,
        "error": x.error,
    }
    if reader is None:
        return Other(**base)  # type: ignore[arg-type]
    answer = reader.response(x.response_text or "") if x.response_text is not None else None
    answered = ""
    if answer is not None:
        if answer.texts:
            answered = " ".join(" ".join(answer.texts).split())
        elif answer.calls:
            answered = "tool call " + ", ".join(c.name for c in answer.calls)
    texts = reader.user_texts(x.request)
    return Other(
        **base,  # type: ignore[arg-type]
        kind=reader.kind(x.request),
        model=(answer.model if answer else "") or reader.model(x),
        asked=" ".join(texts[-1].split()) if texts else "",
        answered=answered,
        usage=answer.usage if answer else Usage(),
    )


def _raw(x: _Exchange) -> Raw:
    request = (
        json.dumps(x.request, indent=2, ensure_ascii=False)
        if isinstance(x.request, (dict, list))
        else str(x.request or "")
    )
    return Raw(
        seq=x.seq,
        method=x.method,
        path=x.path,
        status=x.status,
        reason=x.reason,
        request="; ".join(x.omitted[:1] + x.binary[:1]) or request,
        response=x.response_text
        if x.response_text is not None
        else "; ".join(x.omitted + x.binary),
        error=x.error,
    )


# --- the dialects ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Answer:
    """What one response said."""

    model: str = ""
    texts: tuple[str, ...] = ()
    calls: tuple[ToolCall, ...] = ()
    thinking: int = 0
    usage: Usage = Usage()
    stop: str = ""
    errors: tuple[str, ...] = ()


#: A tool result a request carries: the call's id, the result's text, whether it failed.
_Result = tuple[str, str, bool]


def _events(text: str) -> Iterator[Any]:
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


class _Reader:
    """How one dialect says things; each method takes a request body or a response
    body as stored."""

    def helper(self, body: Any) -> bool:
        return False

    def kind(self, body: Any) -> str:
        return "other conversation"

    def thread(self, body: Any) -> str:
        texts = self.user_texts(body)
        return texts[0] if texts else ""

    def model(self, x: _Exchange) -> str:
        return str(_dict(x.request).get("model") or "")

    def system(self, body: Any) -> str:
        raise NotImplementedError

    def tools(self, body: Any) -> tuple[str, ...]:
        raise NotImplementedError

    def user_texts(self, body: Any) -> list[str]:
        """The texts of the last user message, in order."""
        raise NotImplementedError

    def results(self, body: Any) -> list[_Result]:
        raise NotImplementedError

    def response(self, text: str) -> _Answer:
        raise NotImplementedError


class _Anthropic(_Reader):
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

    def results(self, body: Any) -> list[_Result]:
        return [
            (str(b.get("tool_use_id", "")), _block_text(b.get("content")), bool(b.get("is_error")))
            for m in _list(_dict(body).get("messages"))
            for b in map(_dict, _list(_dict(m).get("content")))
            if b.get("type") == "tool_result"
        ]

    def response(self, text: str) -> _Answer:
        model, stop = "", ""
        blocks: dict[int, dict[str, Any]] = {}
        usage: dict[str, int] = {}
        errors: list[str] = []
        stopped = False
        streamed = False
        for event in map(_dict, _events(text)):
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
        return _Answer(
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


class _OpenAI(_Reader):
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

    def results(self, body: Any) -> list[_Result]:
        out = []
        for item in map(_dict, _list(_dict(body).get("input"))):
            if item.get("type") in _OPENAI_OUTPUTS:
                output = item.get("output")
                text = output if isinstance(output, str) else _block_text(output)
                out.append((str(item.get("call_id", "")), text, False))
        return out

    def response(self, text: str) -> _Answer:
        model = ""
        items: dict[int, dict[str, Any]] = {}
        deltas: dict[int, str] = {}
        usage: dict[str, Any] = {}
        errors: list[str] = []
        completed = False
        streamed = False
        for event in map(_dict, _events(text)):
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
        return _Answer(
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


class _Gemini(_Reader):
    def helper(self, body: Any) -> bool:
        config = _dict(_dict(body).get("generationConfig"))
        return bool(config.get("responseJsonSchema") or config.get("responseSchema"))

    def kind(self, body: Any) -> str:
        config = _dict(_dict(body).get("generationConfig"))
        schema = _dict(config.get("responseJsonSchema") or config.get("responseSchema"))
        if schema:
            return "structured answer: " + ", ".join(_dict(schema.get("properties")))
        return "other conversation"

    def model(self, x: _Exchange) -> str:
        route = x.path.partition("?")[0]
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

    def results(self, body: Any) -> list[_Result]:
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

    def response(self, text: str) -> _Answer:
        model, stop = "", ""
        texts: list[str] = []
        calls: list[ToolCall] = []
        thinking = 0
        usage: dict[str, Any] = {}
        errors: list[str] = []
        for chunk in map(_dict, _events(text)):
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
        return _Answer(
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


_READERS: dict[Dialect, _Reader] = {
    "anthropic": _Anthropic(),
    "openai": _OpenAI(),
    "gemini": _Gemini(),
}
