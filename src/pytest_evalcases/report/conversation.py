"""A run's recorded exchange read back as a conversation (docs/replay.md, "Reading a
run"): the prompt, each model turn with its text and tool calls, each tool call's result,
the final answer, and the tokens of every turn.

Three dialects are understood (:mod:`pytest_evalcases.recording.dialects`): the Anthropic
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

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_evalcases.recording import dialects
from pytest_evalcases.recording.dialects import PARSERS
from pytest_evalcases.recording.format import Exchange
from pytest_evalcases.recording.format import read as read_exchange
from pytest_evalcases.recording.views import UNKNOWN, Dialect, Parser, Request, ToolCall, Usage
from pytest_evalcases.recording.wire import error_message


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
    #: The turn of a conversation (docs/conversations.md) the request was sent in, and
    #: the prompt that began it: a follow-up's text on its first request, else empty.
    prompt_turn: int = 1
    follow_up: str = ""

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


# --- the exchanges --------------------------------------------------------------------


@dataclass
class _Exchange:
    """One stored exchange, its request read in its dialect."""

    seq: int
    method: str
    path: str
    status: int
    reason: str
    #: The request body: its JSON, or its text when it is not JSON.
    request: Any
    view: Request
    response_text: str | None
    error: str
    omitted: list[str] = field(default_factory=list)
    binary: list[str] = field(default_factory=list)
    turn: int = 1

    @property
    def dialect(self) -> Dialect:
        return self.view.dialect


def _exchange(stored: Exchange) -> _Exchange:
    omitted: list[str] = []
    binary: list[str] = []
    for what, message in (("request", stored.request), ("response", stored.response)):
        if message.omitted is not None:
            omitted.append(f"{what} body not stored ({message.omitted:,} bytes)")
        elif message.binary:
            binary.append(f"{what} body is binary ({len(message.body):,} bytes)")
    request = dialects.parse_body(stored.request.text)
    view = dialects.request(stored.method, stored.path, request)
    found = (stored.seq, stored.method, stored.path, stored.status, stored.reason)
    return _Exchange(
        *found, request, view, stored.response.text, stored.error, omitted, binary, stored.turn
    )


def read(path: Path) -> Conversation:
    """The conversation stored at ``path`` (``exchange.jsonl`` or its ``.gz``); a
    :class:`~pytest_evalcases.recording.format.RecordingError` names the file and line
    that do not read."""
    recorded = read_exchange(path)
    return build(path, recorded.header, [_exchange(x) for x in recorded.exchanges])


def build(path: Path, header: dict[str, Any], exchanges: list[_Exchange]) -> Conversation:
    """The conversation of a recording's ``header`` and its exchanges."""
    notes = _notes(header, exchanges)
    known: list[Dialect] = [x.dialect for x in exchanges if x.dialect != "other"]
    if not known:
        return Conversation(
            path, header, "other", raw=tuple(_raw(x) for x in exchanges), notes=notes
        )
    dialect: Dialect = max(set(known), key=known.count)
    parser = PARSERS[dialect]
    main, others = _split(exchanges, dialect)
    turns = _turns(main, parser)
    first = main[0].view if main else UNKNOWN
    context, prompt = _prompt(list(first.user_texts))
    return Conversation(
        path,
        header,
        dialect,
        system=first.system,
        tools=first.tools,
        context=context,
        prompt=prompt,
        turns=turns,
        others=tuple(_other(x, parser if x.dialect == dialect else None) for x in others),
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


def _split(exchanges: list[_Exchange], dialect: Dialect) -> tuple[list[_Exchange], list[_Exchange]]:
    """The main conversation's requests and the others. The main conversation is the
    thread (requests opening with the same first user message) with the most tools, then
    the most requests; a CLI's helpers (a quota check, a JSON-schema side question) and
    its sub-agents open differently or ask for a structured answer."""
    threads: dict[str, list[_Exchange]] = {}
    for x in exchanges:
        if x.dialect == dialect and not x.view.helper:
            threads.setdefault(x.view.thread, []).append(x)
    if not threads:
        return [], exchanges
    main = max(
        threads.values(),
        key=lambda xs: (len(xs[0].view.tools), len(xs), -xs[0].seq),
    )
    chosen = set(map(id, main))
    return main, [x for x in exchanges if id(x) not in chosen]


def _turns(main: list[_Exchange], parser: Parser) -> tuple[Turn, ...]:
    turns: list[Turn] = []
    for i, x in enumerate(main):
        begins = x.turn > 1 and (i == 0 or main[i - 1].turn != x.turn)
        texts = x.view.user_texts
        # An HTTP error's body is the error, said on the status line; no answer.
        failed = x.status >= 400
        answer = None if x.response_text is None or failed else parser.response(x.response_text)
        errors = list(answer.errors) if answer else []
        if failed:
            errors.insert(0, f"HTTP {x.status} {x.reason}".rstrip() + _error_body(x))
        if x.error:
            errors.append(x.error)
        calls = list(answer.calls) if answer else []
        if calls and i + 1 < len(main):
            calls = _with_results(calls, x.view, main[i + 1].view)
        turns.append(
            Turn(
                seq=x.seq,
                model=(answer.model if answer else "") or x.view.model,
                status=x.status,
                reason=x.reason,
                texts=answer.texts if answer else (),
                calls=tuple(calls),
                thinking=answer.thinking if answer else 0,
                usage=answer.usage if answer else Usage(),
                stop=answer.stop if answer else "",
                errors=tuple(errors),
                omitted=tuple(x.omitted + x.binary),
                prompt_turn=x.turn,
                follow_up=(texts[-1] if texts else "(no user message)") if begins else "",
            )
        )
    return tuple(turns)


def _error_body(x: _Exchange) -> str:
    """``: message`` of an API's error body, or the body's first line."""
    text = (x.response_text or "").strip()
    if not text:
        return ""
    message = error_message(text)
    if message:
        return f": {message}"
    try:
        json.loads(text)
    except ValueError:
        return ": " + text.splitlines()[0][:300]
    return ": " + text[:300]


def _with_results(calls: list[ToolCall], before: Request, after: Request) -> list[ToolCall]:
    """``calls`` with their results: those the next request carries that this one did
    not (a CLI sends the whole conversation each time), matched by id, else in order."""
    old, new = before.results, after.results
    fresh = new[len(old) :] if len(new) >= len(old) else new
    unused = list(fresh)
    out = []
    for call in calls:
        match = next((r for r in unused if call.id and r.call_id == call.id), None)
        if match is None and unused and not any(call.id and r.call_id == call.id for r in new):
            match = unused[0]
        if match is None:
            out.append(call)
            continue
        unused.remove(match)
        out.append(ToolCall(call.name, call.input, call.id, result=match.text, failed=match.failed))
    return out


def _other(x: _Exchange, parser: Parser | None) -> Other:
    """A request apart from the conversation; ``parser`` when it is of the
    conversation's dialect."""
    if parser is None:
        return Other(x.seq, x.method, x.path, x.status, x.reason, error=x.error)
    answer = parser.response(x.response_text) if x.response_text is not None else None
    answered = ""
    if answer is not None:
        if answer.texts:
            answered = " ".join(" ".join(answer.texts).split())
        elif answer.calls:
            answered = "tool call " + ", ".join(c.name for c in answer.calls)
    texts = x.view.user_texts
    return Other(
        x.seq,
        x.method,
        x.path,
        x.status,
        x.reason,
        kind=x.view.kind,
        # The model asked: a side question often goes to a smaller one than the turns.
        model=x.view.model or (answer.model if answer else ""),
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
