"""A run's recorded exchange read back as a conversation (docs/replay.md, "Reading a
run"): the prompt, each model turn with its text and tool calls, each tool call's result,
the final answer, and the tokens of every turn.

Three dialects are understood (:mod:`pytest_evalcases.report.dialects`): the Anthropic
Messages API (``claude``), the OpenAI Responses API (``codex``) and the Gemini API
(``gemini``). A turn is one request of the main conversation and the model's answer to
it; a tool call's result is found in the next request, which carries it back to the
model. Requests that are not the conversation (a CLI's title or quota helpers, a
JSON-schema side question, a refused WebSocket upgrade, a sub-agent's own conversation)
are kept apart as :class:`Other` requests. An exchange of no known dialect is read as
plain requests.

Plain Python: nothing here imports pytest.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_evalcases.errors import EvalcasesError
from pytest_evalcases.report.dialects import (
    READERS,
    Dialect,
    Reader,
    ToolCall,
    Usage,
    dialect_of,
)
from pytest_evalcases.run import recording

__all__ = ["Conversation", "Other", "Raw", "RecordingError", "ToolCall", "Turn", "Usage", "read"]


class RecordingError(EvalcasesError):
    """A stored exchange that cannot be read: names the file, and the line when one is
    at fault."""


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
    usage: Usage = field(default_factory=Usage)
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
    usage: Usage = field(default_factory=Usage)
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
    try:
        return build(path, header, entries)
    except (TypeError, ValueError, AttributeError) as exc:
        # A line that is JSON but not of the stored format (a field of the wrong type).
        raise RecordingError(f"{path}: not a recording this version reads: {exc}") from None


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
        return dialect_of(self.method, self.path, self.request)


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
    reader = READERS[dialect]
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
    exchanges: list[_Exchange], dialect: Dialect, reader: Reader
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


def _turns(main: list[_Exchange], reader: Reader) -> tuple[Turn, ...]:
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
                model=(answer.model if answer else "") or reader.model(x.path, x.request),
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


def _with_results(calls: list[ToolCall], reader: Reader, before: Any, after: Any) -> list[ToolCall]:
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


def _other(x: _Exchange, reader: Reader | None) -> Other:
    """A request apart from the conversation; ``reader`` when it is of the
    conversation's dialect."""
    if reader is None:
        return Other(x.seq, x.method, x.path, x.status, x.reason, error=x.error)
    answer = reader.response(x.response_text or "") if x.response_text is not None else None
    answered = ""
    if answer is not None:
        if answer.texts:
            answered = " ".join(" ".join(answer.texts).split())
        elif answer.calls:
            answered = "tool call " + ", ".join(c.name for c in answer.calls)
    texts = reader.user_texts(x.request)
    return Other(
        x.seq,
        x.method,
        x.path,
        x.status,
        x.reason,
        kind=reader.kind(x.request),
        # The model asked: a side question often goes to a smaller one than the turns.
        model=reader.model(x.path, x.request) or (answer.model if answer else ""),
        asked=" ".join(texts[-1].split()) if texts else "",
        answered=answered,
        usage=answer.usage if answer else Usage(),
        error=x.error,
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
