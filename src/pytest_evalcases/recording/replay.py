"""Replay: a run's requests answered from a recording (docs/replay.md, "Replay",
"Reuse").

A request the CLI sends now is compared with the recorded ones after normalising what
always varies between two runs of the same case (:mod:`pytest_evalcases.recording.normalise`).
It is answered by the first recorded exchange not used yet whose normalised request is
the same (:class:`Replay`): the CLIs send helper requests beside their agent loop, at
times at once and in varying order, and a request sent twice (a rate limit, then its
retry) takes the recorded answers in their order. A request with no such exchange is a
:class:`Divergence`, described against the closest recorded one: at which turn of the
conversation, and what differs (the system prompt, the tool list, a message, a tool
result), with a short diff.

Plain Python: the proxy (:mod:`pytest_evalcases.recording.proxy`) asks, the runner
decides what a divergence does to the run.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_evalcases.kinds import Replayed, ReplayHow
from pytest_evalcases.recording import dialects
from pytest_evalcases.recording.format import Exchange, exchange_file, read
from pytest_evalcases.recording.normalise import Normalised, Normaliser, Places
from pytest_evalcases.recording.script import TOOL_RESULT
from pytest_evalcases.recording.views import Request


@dataclass(frozen=True)
class Recording:
    """A run's stored exchange, read back: what it is answered from."""

    path: Path
    exchanges: tuple[Exchange, ...]
    places: Places
    #: What the recorded run cost, as its results file says (``cost_usd``).
    cost_usd: float | None = None

    @functools.cached_property
    def tokens_of(self) -> tuple[int, ...]:
        """The tokens each exchange's response says the model read and wrote."""
        return tuple(tokens(e) for e in self.exchanges)

    @property
    def tokens(self) -> int:
        """The tokens all its responses report."""
        return sum(self.tokens_of)


def tokens(exchange: Exchange) -> int:
    """The tokens an exchange's response says were read and written, counted as a run's
    ``tokens_in`` plus ``tokens_out`` are (docs/replay.md, "What replay saves"); 0 for
    a request of no known dialect or a response that says nothing."""
    answer = dialects.response(
        exchange.method, exchange.path, exchange.response.body.decode("utf-8", "replace")
    )
    return answer.tokens


def request_text(exchange: Exchange) -> str | None:
    """A recorded request's body as replay compares it; ``None`` when it was left out
    (the recording was past its size limit)."""
    body = exchange.request
    if body.omitted is not None:
        return None
    return body.body.decode("utf-8", "replace")


def read_recording(directory: Path, cost_usd: float | None = None) -> Recording | None:
    """The recording in a run's directory; ``None`` when there is none; a
    :class:`~pytest_evalcases.recording.format.RecordingError` naming the file when it
    cannot be read."""
    found = exchange_file(directory)
    if found is None:
        return None
    recorded = read(found)
    homes = recorded.header.get("homes") or []
    places = Places(str(recorded.header.get("workspace") or ""), tuple(str(h) for h in homes))
    return Recording(found, recorded.exchanges, places, cost_usd)


def _view(normalised: Normalised) -> Request:
    return dialects.request(normalised.method, normalised.path, normalised.body)


@dataclass(frozen=True)
class Divergence:
    """A request the recording has no unused answer to, and how it differs from the
    closest recorded one."""

    turn: int
    what: str
    method: str
    path: str
    diff: tuple[str, ...] = ()
    #: In a conversation (docs/conversations.md): its turn and the request's number in
    #: that turn; ``None`` in a run of one prompt.
    within: tuple[int, int] | None = None

    @property
    def message(self) -> str:
        where = f"turn {self.turn}"
        if self.within is not None:
            where = f"turn {self.within[0]} of the conversation, request {self.within[1]}"
        head = f"replay diverged at {where}: {self.what} ({self.method} {self.path})"
        return "\n".join([head, *self.diff])


#: Lines of a divergence's diff, and characters of each, at most.
DIFF_LINES = 12
DIFF_WIDTH = 160


class Replay:
    """Answers one run's requests from its recording. Thread-safe: a CLI sends requests
    at once from several connections."""

    def __init__(self, recorded: Recording, places: Places, redact: Callable[[str], str]) -> None:
        self.recording = recorded
        self._live = Normaliser(places, redact)
        then = Normaliser(recorded.places)
        self._then = [
            None if (text := request_text(e)) is None else then.request(e.method, e.path, text)
            for e in recorded.exchanges
        ]
        self._used = [False] * len(recorded.exchanges)
        self._lock = threading.Lock()
        #: The tokens of the responses answered so far.
        self.tokens = 0
        self.answered = 0
        #: Of those, the model requests (a conversation, not the CLI's check that the
        #: API answers): a run none of whose model requests replayed went live.
        self.model_requests = 0

    def answer(self, method: str, path: str, body: bytes) -> Exchange | Divergence:
        """The first unused recorded exchange whose request is this one, normalised; a
        :class:`Divergence` when there is none."""
        text = body.decode("utf-8", "replace")
        now = self._live.request(method, path, text)
        with self._lock:
            for index, then in enumerate(self._then):
                if not self._used[index] and then is not None and then.key == now.key:
                    self._used[index] = True
                    exchange = self.recording.exchanges[index]
                    self.tokens += self.recording.tokens_of[index]
                    self.answered += 1
                    self.model_requests += _view(then).dialect != "other"
                    return exchange
            unused = [t for i, t in enumerate(self._then) if not self._used[i] and t is not None]
        return describe(now, unused)

    @property
    def saved_usd(self) -> float | None:
        """The recorded run's cost times the share of its tokens replayed: an
        approximation (docs/replay.md, "What replay saves")."""
        cost, total = self.recording.cost_usd, self.recording.tokens
        if cost is None:
            return None
        if not total:
            return cost if self.answered and self.answered == len(self._used) else 0.0
        return cost * min(self.tokens / total, 1.0)


def describe(now: Normalised, recorded: Sequence[Normalised]) -> Divergence:
    """How ``now`` differs from the closest of ``recorded``: one of the same method and
    path at the same turn, sharing the longest run of first messages."""
    view = _view(now)
    at = view.turn
    same = [r for r in recorded if r.method == now.method and r.path == now.path]
    if not same:
        what = "a request the recording does not have" + (
            "" if recorded else " (every recorded request was answered already)"
        )
        return Divergence(at, what, now.method, now.path)
    same_turn = [r for r in same if _view(r).turn == at] or same
    closest = max(same_turn, key=lambda r: _shared(_view(r), view))
    what, before, after = _difference(_view(closest), view, closest.body, now.body)
    return Divergence(at, what, now.method, now.path, _diff(before, after))


def _given(request: Request) -> list[Any]:
    """The request's messages as sent: what two requests compare."""
    return [message.given for message in request.messages]


def _shared(a: Request, b: Request) -> int:
    same = 0
    for x, y in zip(_given(a), _given(b), strict=False):
        if x != y:
            break
        same += 1
    system = a.given_system == b.given_system
    return same * 4 + 2 * bool(system) + bool(a.given_tools == b.given_tools)


def _difference(then: Request, now: Request, then_body: Any, now_body: Any) -> tuple[str, Any, Any]:
    """What differs first, in the order the model reads it, and the two versions of it."""
    if then.given_system != now.given_system:
        return "the system prompt differs", then.given_system, now.given_system
    if then.given_tools != now.given_tools:
        return "the tool list differs", then.given_tools, now.given_tools
    before, after = _given(then), _given(now)
    for index, (x, y) in enumerate(zip(before, after, strict=False)):
        if x != y:
            return f"{_describe_message(index, now)} differs", x, y
    if len(before) != len(after):
        return (
            f"the number of messages differs (recorded {len(before)}, now {len(after)})",
            before[len(after) :],
            after[len(before) :],
        )
    if isinstance(then_body, dict) and isinstance(now_body, dict):
        # The model first: another model changes other fields too (a CLI asks each model
        # for its own `max_tokens`), and it is what a model variant changed.
        for key in sorted(set(then_body) | set(now_body), key=lambda k: (k != "model", k)):
            if then_body.get(key) != now_body.get(key):
                return f"the request's {key!r} differs", then_body.get(key), now_body.get(key)
    return "the request differs", then_body, now_body


def _lines(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.splitlines()
    text = json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True)
    # A JSON string's newlines as lines of their own: a changed line of CLAUDE.md shows.
    return [part for line in text.splitlines() for part in line.split("\\n")]


def _diff(before: Any, after: Any) -> tuple[str, ...]:
    """A short unified diff (recorded, now): a few lines, long ones cut. Past
    :data:`DIFF_LINES`, the first lines removed and the first added are shown."""
    lines = list(
        difflib.unified_diff(_lines(before), _lines(after), "recorded", "now", n=1, lineterm="")
    )
    head, body = lines[:2], lines[2:]
    if len(body) > DIFF_LINES:
        half = (DIFF_LINES - 1) // 2
        removed = [line for line in body if line.startswith("-")][:half]
        added = [line for line in body if line.startswith("+")][: DIFF_LINES - 1 - len(removed)]
        shown = [body[0], *removed, *added]
        body = [*shown, f"… ({len(body) - len(shown)} more lines)"]
    return tuple(
        line if len(line) <= DIFF_WIDTH else line[: DIFF_WIDTH - 1] + "…" for line in head + body
    )


def outcome(replay: Replay | None, diverged: bool, reuse: bool) -> Replayed:
    """How a run went: ``replay`` answered some of its requests (``None``: it had no
    recording), and a request ``diverged`` from it or not. A reused run of which no
    model request replayed (at most the CLI's check that the API answers) went live;
    what it saved is what the replayed responses say, request by request."""
    if replay is None:
        return Replayed("live", 0, None)
    if diverged and not reuse:
        how: ReplayHow = "diverged"
    elif not diverged:
        how = "full"
    else:
        how = "partial" if replay.model_requests else "live"
    saved = replay.saved_usd
    return Replayed(
        how, replay.tokens, saved if replay.answered else (None if saved is None else 0.0)
    )


#: Context a CLI puts in a message of its own before the conversation: Claude Code's
#: ``<system-reminder>`` (CLAUDE.md), Codex's AGENTS.md and environment, Gemini CLI's
#: session context.
_CLI_CONTEXT = re.compile(
    r"<system-reminder>|AGENTS\.md instructions|<environment_context>|<session_context>"
    r"|<permissions instructions>|<user_instructions>"
)


def _describe_message(index: int, request: Request) -> str:
    message = request.messages[index]
    text = json.dumps(message.given, ensure_ascii=False)
    if TOOL_RESULT.search(text):
        return f"the tool result in message {index + 1}"
    first_turn = not any(m.from_model for m in request.messages[:index])
    if first_turn and (message.role in ("developer", "system") or _CLI_CONTEXT.search(text)):
        return f"the system prompt (the CLI's context in message {index + 1})"
    return f"message {index + 1}"
