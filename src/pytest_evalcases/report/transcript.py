"""A run's transcript as plain text (docs/replay.md, "Reading a run"): what
``evalcases show`` prints and what the ``--eval-html`` report embeds for each recorded
run.

The system prompt is shown by its size and first lines, long tool inputs and results are
cut to a readable length; ``full=True`` shows everything. The model's own text and the
final answer are never cut.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_evalcases.recording.views import Usage
from pytest_evalcases.report.conversation import Conversation, Other, Turn
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.text import check_label, plural, usd

#: Lines of the system prompt, of each context text and of a raw body shown unless full.
HEAD_LINES = 5
#: Lines and characters of a tool's input or result shown unless full.
TOOL_LINES = 20
TOOL_CHARS = 2000
#: Characters of a line of the system prompt, or of an other request's question.
LINE_CHARS = 160
_INDENT = "  "


@dataclass(frozen=True)
class Source:
    """Where the transcript comes from, for its first lines."""

    results: str
    recording: str


def lines(
    conversation: Conversation,
    record: RunRecord | None = None,
    *,
    source: Source | None = None,
    name: str = "",
    full: bool = False,
) -> list[str]:
    """The transcript of ``conversation``; ``record`` (the run's entry in its results
    file) adds the verdict, the tokens the CLI reported and the cost; ``name`` is the
    run's as pytest names its item."""
    out: list[str] = []
    out += _head(conversation, record, source, name)
    if conversation.dialect == "other":
        out += _raw(conversation, full)
    else:
        out += _system(conversation, full)
        out += _section(
            "prompt",
            conversation.prompt if conversation.prompt is not None else "(no user message)",
        )
        for number, turn in enumerate(conversation.turns, 1):
            if turn.follow_up:
                # Where a conversation's follow-up prompt began (docs/conversations.md).
                out += _section(f"follow-up (turn {turn.prompt_turn})", turn.follow_up)
            out += _turn(number, turn, full)
        if not conversation.turns:
            out += ["", "(no request of the conversation was recorded)"]
        out += _section("answer", conversation.answer or "(no text in the last turn)")
        out += _others(conversation.others)
    out += _tokens(conversation, record)
    return out


def text(
    conversation: Conversation,
    record: RunRecord | None = None,
    *,
    source: Source | None = None,
    name: str = "",
    full: bool = False,
) -> str:
    """:func:`lines` as one text."""
    return "\n".join(lines(conversation, record, source=source, name=name, full=full)) + "\n"


def _head(
    conversation: Conversation, record: RunRecord | None, source: Source | None, name: str
) -> list[str]:
    header = conversation.header
    label = name or str(header.get("run") or header.get("case") or "")
    head = [label, f"agent {header.get('agent') or '?'}"]
    if record is not None:
        head.append(record.outcome + (f" ({record.error_kind})" if record.error_kind else ""))
    out = [" · ".join(head)]
    if source is not None:
        out.append(f"results file: {source.results}")
        out.append(f"recording: {source.recording}")
    count = len(conversation.turns) + len(conversation.others) + len(conversation.raw)
    said = f"{plural(count, 'request')} to {header.get('upstream') or 'the API'}"
    if conversation.dialect != "other":
        said += f": {len(conversation.turns)} of the conversation, {len(conversation.others)} other"
    out.append(said)
    out += [f"note: {note}" for note in conversation.notes]
    return out


def _section(title: str, body: str) -> list[str]:
    return ["", title, *_indented(body)]


def _indented(body: str, depth: int = 1) -> list[str]:
    pad = _INDENT * depth
    return [pad + line if line else "" for line in body.splitlines()] or [pad + "(empty)"]


def _cut_lines(body: str, count: int, chars: int, full: bool) -> str:
    """``body``'s first ``count`` lines and ``chars`` characters, saying what was left."""
    if full:
        return body
    kept = body.splitlines()
    cut = "\n".join(kept[:count])
    if len(cut) > chars:
        cut = cut[:chars]
    left = len(body) - len(cut)
    if left <= 1:
        return body
    more = len(kept) - len(cut.splitlines())
    what = plural(more, "more line") if more > 0 else f"{left:,} more characters"
    return f"{cut}\n… ({what}; --full shows all)"


def _system(conversation: Conversation, full: bool) -> list[str]:
    system = conversation.system
    tools = conversation.tools
    facts = [f"{len(system):,} characters, {plural(len(system.splitlines()), 'line')}"]
    if tools:
        facts.append(f"{plural(len(tools), 'tool')}: {', '.join(tools)}")
    out = ["", "system prompt · " + " · ".join(facts)]
    if system:
        shown = (
            system if full else "\n".join(_short(line) for line in system.splitlines()[:HEAD_LINES])
        )
        more = len(system.splitlines()) - HEAD_LINES
        out += _indented(shown)
        if more > 0 and not full:
            out.append(f"{_INDENT}… ({plural(more, 'more line')}; --full shows all)")
    for text in conversation.context:
        out += [
            "",
            f"context before the prompt · {len(text):,} characters",
            *_indented(_cut_lines(text, HEAD_LINES, LINE_CHARS * HEAD_LINES, full)),
        ]
    return out


def _short(line: str) -> str:
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


def _usage(usage: Usage) -> str:
    if not usage.known:
        return "tokens not said"
    parts = [f"{usage.input:,} in", f"{usage.output:,} out"]
    if usage.cache_read:
        parts.append(f"{usage.cache_read:,} cache read")
    if usage.cache_write:
        parts.append(f"{usage.cache_write:,} cache write")
    return ", ".join(parts)


def _turn(number: int, turn: Turn, full: bool) -> list[str]:
    facts = [f"turn {number}", f"request #{turn.seq}"]
    if turn.model:
        facts.append(turn.model)
    facts.append(_usage(turn.usage))
    if turn.stop:
        facts.append(f"stop: {turn.stop}")
    out = ["", " · ".join(facts)]
    out += [f"{_INDENT}! {error}" for error in turn.errors]
    out += [f"{_INDENT}! {what}" for what in turn.omitted]
    if turn.thinking:
        out.append(f"{_INDENT}(thinking: {turn.thinking:,} characters)")
    for said in turn.texts:
        if said.strip():
            out += _indented(said)
    for call in turn.calls:
        out.append(f"{_INDENT}tool call {call.name}" + (f" ({call.id})" if call.id else ""))
        out += _indented(_cut_lines(_input(call.input), TOOL_LINES, TOOL_CHARS, full), 2)
        if call.result is None:
            out.append(f"{_INDENT}no result: no later request carried one")
        else:
            out.append(f"{_INDENT}result" + (" (error)" if call.failed else ""))
            out += _indented(_cut_lines(call.result, TOOL_LINES, TOOL_CHARS, full) or "(empty)", 2)
    return out


def _input(given: Any) -> str:
    """A tool's input: ``key: value`` lines for an object, else the value itself."""
    if isinstance(given, str):
        return given
    if not isinstance(given, dict):
        return json.dumps(given, ensure_ascii=False)
    out = []
    for key, value in given.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if "\n" in shown:
            out.append(f"{key}:")
            out += [_INDENT + line for line in shown.splitlines()]
        else:
            out.append(f"{key}: {shown}")
    return "\n".join(out) or "(no input)"


def _others(others: Sequence[Other]) -> list[str]:
    if not others:
        return []
    out = ["", f"other requests · {len(others)}, not part of the conversation"]
    i = 0
    while i < len(others):
        first = others[i]
        same = 1
        while (
            i + same < len(others) and not first.kind and _plain(others[i + same]) == _plain(first)
        ):
            same += 1
        seqs = f"#{first.seq}" if same == 1 else f"#{first.seq}–#{others[i + same - 1].seq}"
        line = f"{seqs} {first.method} {first.path} → {first.status} {first.reason}".rstrip()
        if same > 1:
            line += f" ({same}×)"
        if first.error:
            line += f": {first.error}"
        facts = [x for x in (first.model, first.kind) if x]
        if first.asked:
            facts.append(f"asked: {_short(first.asked)}")
        if first.answered:
            facts.append(f"answered: {_short(first.answered)}")
        if first.usage.known:
            facts.append(_usage(first.usage))
        out.append(_INDENT + " · ".join([line, *facts]))
        i += same
    return out


def _plain(other: Other) -> tuple[str, str, int, str]:
    return (other.method, other.path, other.status, other.error)


def _raw(conversation: Conversation, full: bool) -> list[str]:
    out = ["", "requests of no known API (shown as stored)"]
    for raw in conversation.raw:
        out += ["", f"#{raw.seq} {raw.method} {raw.path} → {raw.status} {raw.reason}".rstrip()]
        if raw.error:
            out.append(f"{_INDENT}! {raw.error}")
        if raw.request:
            out += [f"{_INDENT}request"]
            out += _indented(_cut_lines(raw.request, TOOL_LINES, TOOL_CHARS, full), 2)
        if raw.response:
            out += [f"{_INDENT}response"]
            out += _indented(_cut_lines(raw.response, TOOL_LINES, TOOL_CHARS, full), 2)
    return out


def _tokens(conversation: Conversation, record: RunRecord | None) -> list[str]:
    out = ["", "tokens"]
    if conversation.dialect != "other":
        turns = plural(len(conversation.turns), "turn")
        out.append(f"{_INDENT}conversation: {_usage(conversation.usage)} over {turns}")
        if conversation.other_usage.known:
            out.append(f"{_INDENT}other requests: {_usage(conversation.other_usage)}")
    if record is not None:
        said = []
        if record.tokens_in is not None or record.tokens_out is not None:
            said.append(f"{record.tokens_in or 0:,} in, {record.tokens_out or 0:,} out")
        said.append(f"cost {usd(record.cost_usd)}")
        if record.model:
            said.append(f"model {record.model}")
        if record.turns is not None:
            said.append(plural(record.turns, "turn"))
        out.append(f"{_INDENT}as the agent reported: " + " · ".join(said))
        out += _verdict(record)
    return out


def _verdict(record: RunRecord) -> list[str]:
    passed = sum(c.passed for c in record.checks)
    out = ["", f"verdict: {record.outcome}"]
    if record.checks:
        out[-1] += f" · {passed} of {plural(len(record.checks), 'check')} passed"
    out += [
        f"{_INDENT}failed {check_label(c.id, c.type)}: {c.message}"
        for c in record.checks
        if not c.passed
    ]
    if record.error:
        out.append(f"{_INDENT}error ({record.error_kind or 'error'}): {record.error}")
    return out
