"""Replay: a run's requests answered from a recording (docs/replay.md, "Replay",
"Reuse", "What is normalised").

A request the CLI sends now is compared with the recorded ones after normalising what
always varies between two runs of the same case (:class:`Normaliser`: the workspace and
agent-home paths, dates, session, request and tool-use ids, the CLIs' metadata). It is
answered by the first recorded exchange not used yet whose normalised request is the
same (:class:`Replay`): the CLIs send helper requests beside their agent loop, at times
at once and in varying order, and a request sent twice (a rate limit, then its retry)
takes the recorded answers in their order. A request with no such exchange is a
:class:`Divergence`, described against the closest recorded one: at which turn of the
conversation, and what differs (the system prompt, the tool list, a message, a tool
result), with a short diff.

Plain Python: the proxy (:mod:`pytest_evalcases.run.proxy`) asks, the runner decides what
a divergence does to the run.
"""

from __future__ import annotations

import base64
import difflib
import functools
import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode

from pytest_evalcases.kinds import Replayed, ReplayHow
from pytest_evalcases.results.files import ResultsFileError
from pytest_evalcases.run import recording
from pytest_evalcases.run.recorded import RecordedSession, load_session

Mode = Literal["replay", "reuse"]

#: Placeholders that the normalised requests carry in place of what varies.
WORKSPACE = "<workspace>"
HOME = "<home>"

# --- normalisation ----------------------------------------------------------------------

#: Keys dropped wherever they are: the CLIs' metadata (Codex's ``client_metadata`` names
#: its installation, session, thread and turn; its ``prompt_cache_key`` is the session id;
#: each input item's ``internal_chat_message_metadata_passthrough`` has a creation time
#: and the turn's id).
_DROPPED_KEYS = frozenset(
    {"client_metadata", "prompt_cache_key", "internal_chat_message_metadata_passthrough"}
)
#: Keys dropped at the top of a request body: Claude Code's ``metadata.user_id`` names the
#: device and the session.
_DROPPED_TOP = {"metadata": frozenset({"user_id"})}

_DAYS = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
_MONTHS_SHORT = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
#: What varies inside the text of a request, in the order it is replaced.
_VARYING: tuple[tuple[re.Pattern[str], str], ...] = (
    # An agent home left at its default place: a directory of its own for each run.
    (re.compile(r"[^\s\"'`<>()]*/pytest-evalcases/agent-homes/home-[A-Za-z0-9_]+"), HOME),
    (
        re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I),
        "<uuid>",
    ),
    # Tool-use ids: Anthropic's toolu_…, OpenAI's call_…, and the like.
    (re.compile(r"\b(toolu|srvtoolu|call|fc|ctc|ctco)_[A-Za-z0-9_<>-]{4,}"), r"\1_<id>"),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
        ),
        "<date>",
    ),
    (re.compile(rf"\b(?:(?:{_DAYS}), )?(?:{_MONTHS}) \d{{1,2}}, \d{{4}}\b"), "<date>"),
    # `ls -l`'s modification times: "Dec  3 15:58", "Jan  1  2001".
    (re.compile(rf"\b(?:{_MONTHS_SHORT}) [ \d]\d (?:\d\d:\d\d| ?\d{{4}})\b"), "<date>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:\s?[AP]M)?\b"), "<time>"),
    # Milliseconds since the epoch, also inside ids (Gemini CLI's run_shell_command_<ms>_0).
    (re.compile(r"(?<![0-9])1[5-9]\d{11}(?![0-9])"), "<time>"),
    # What a tool's result says of the process that ran it (Gemini CLI, Codex).
    (re.compile(r"(Process Group PGID): \d+"), r"\1: <pid>"),
    (re.compile(r"(\"wall_time_seconds\"\s*:\s*)[0-9.eE+-]+"), r"\1<seconds>"),
    (re.compile(r"(Wall time:?\s*)[0-9.]+(\s*seconds)"), r"\1<seconds>\2"),
    (re.compile(r"(\"chunk_id\"\s*:\s*)\"[^\"]*\""), r'\1"<id>"'),
)


@dataclass(frozen=True)
class Places:
    """The paths of one run that its requests quote: its workspace and its agent's
    home (or homes)."""

    workspace: str = ""
    homes: tuple[str, ...] = ()

    def replacements(self) -> list[tuple[str, str]]:
        """(path, placeholder), the longest path first: a home inside the workspace is
        the home. The workspace also as Claude Code names its project directory, which
        its system prompt quotes as the memory directory of a run without ``--bare``."""
        pairs = [(self.workspace, WORKSPACE), (claude_project(self.workspace), WORKSPACE)]
        pairs = pairs if self.workspace else []
        pairs += [(home, HOME) for home in self.homes if home]
        return sorted(pairs, key=lambda pair: -len(pair[0]))


#: Claude Code's project names are cut here, a hash of the whole path appended.
_PROJECT_NAME_MAX = 200


def claude_project(path: str) -> str:
    """The name Claude Code gives a working directory's project (its sessions and its
    memory, ``<config>/projects/<name>/memory/``): the path with every character but an
    ASCII letter or digit as ``-``; a longer name than 200 characters is cut there and
    ends with ``-`` and a hash of the path (Claude Code 2.1's, found by experiment)."""
    name = re.sub(r"[^a-zA-Z0-9]", "-", path)
    if len(name) <= _PROJECT_NAME_MAX:
        return name
    return f"{name[:_PROJECT_NAME_MAX]}-{_base36(abs(_string_hash(path)))}"


def _string_hash(text: str) -> int:
    """JavaScript's ``h = (h << 5) - h + charCodeAt(i) | 0`` over the UTF-16 units."""
    units = text.encode("utf-16-le")
    value = 0
    for i in range(0, len(units), 2):
        value = (value * 31 + int.from_bytes(units[i : i + 2], "little")) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, digit = divmod(number, 36)
        out = digits[digit] + out
        if not number:
            return out


@dataclass(frozen=True)
class Normalised:
    """A request with what always varies replaced: what two runs compare."""

    method: str
    path: str
    #: The body: parsed JSON, or its text when it is not JSON.
    body: Any
    #: The whole request as one canonical string.
    key: str


class Normaliser:
    """Normalises the requests of one run: its own paths, then what varies in every run
    (docs/replay.md, "What is normalised"). ``redact`` is applied to a body first, as it
    was to the recorded ones."""

    def __init__(self, places: Places, redact: Callable[[str], str] | None = None) -> None:
        self._paths = places.replacements()
        self._redact = redact

    def text(self, text: str) -> str:
        for path, placeholder in self._paths:
            text = text.replace(path, placeholder)
        for pattern, replacement in _VARYING:
            text = pattern.sub(replacement, text)
        return text

    def request(self, method: str, path: str, body: str | None) -> Normalised:
        if body is not None and self._redact is not None:
            body = self._redact(body)
        data: Any = body
        if body:
            try:
                data = json.loads(body)
            except ValueError:
                data = body
        data = self._value(_dropped(data))
        normal_path = self.text(_without_credentials(path))
        key = json.dumps([method, normal_path, data], sort_keys=True, ensure_ascii=False)
        return Normalised(method, normal_path, data, key)

    def _value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self._value(v) for v in value]
        if isinstance(value, dict):
            return {k: self._value(v) for k, v in value.items() if k not in _DROPPED_KEYS}
        return value


def _dropped(data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    data = dict(data)
    for key, inner in _DROPPED_TOP.items():
        value = data.get(key)
        if isinstance(value, dict):
            data[key] = {k: v for k, v in value.items() if k not in inner}
    return data


def _without_credentials(path: str) -> str:
    """The path with the values of credential query parameters left out, as stored."""
    route, mark, query = path.partition("?")
    if not mark:
        return route
    pairs = [
        (name, "" if recording.is_credential_header(name) else value)
        for name, value in parse_qsl(query, keep_blank_values=True)
    ]
    return route + "?" + urlencode(pairs)


# --- the conversation in a request ------------------------------------------------------


@dataclass(frozen=True)
class Conversation:
    """The parts of a model request that say what the model was given, in any of the
    three dialects: Anthropic Messages, OpenAI Responses, Gemini."""

    system: Any
    tools: Any
    messages: list[Any]
    #: The role of the model's own messages (``assistant``, Gemini's ``model``).
    dialect: Literal["anthropic", "openai", "gemini", ""]


def conversation(body: Any) -> Conversation:
    """The system prompt, tool list and messages of a request body (normalised or not)."""
    if not isinstance(body, dict):
        return Conversation(None, None, [], "")
    if "contents" in body:
        contents = body.get("contents")
        messages = contents if isinstance(contents, list) else [contents]
        return Conversation(body.get("systemInstruction"), body.get("tools"), messages, "gemini")
    if "input" in body:
        given = body.get("input")
        messages = given if isinstance(given, list) else [given]
        return Conversation(body.get("instructions"), body.get("tools"), messages, "openai")
    if "messages" in body:
        given = body.get("messages")
        messages = given if isinstance(given, list) else []
        return Conversation(body.get("system"), body.get("tools"), messages, "anthropic")
    return Conversation(None, None, [], "")


#: Responses input items that the model produced.
_MODEL_ITEMS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "reasoning",
        "web_search_call",
        "computer_call",
    }
)


def _from_model(message: Any, dialect: str) -> bool:
    if not isinstance(message, dict):
        return False
    role = message.get("role")
    if dialect == "gemini":
        return role == "model"
    if dialect == "openai" and message.get("type") in _MODEL_ITEMS:
        return True
    return role == "assistant"


def turn(conv: Conversation) -> int:
    """The request's model turn: the model's answers so far (a run of the model's own
    items counts once) + 1."""
    turns, before = 0, False
    for message in conv.messages:
        mine = _from_model(message, conv.dialect)
        turns += mine and not before
        before = mine
    return turns + 1


_TOOL_RESULT = re.compile(
    r"\"(tool_result|function_call_output|custom_tool_call_output|functionResponse)\""
)
#: Context a CLI puts in a message of its own before the conversation: Claude Code's
#: ``<system-reminder>`` (CLAUDE.md), Codex's AGENTS.md and environment, Gemini CLI's
#: session context.
_CLI_CONTEXT = re.compile(
    r"<system-reminder>|AGENTS\.md instructions|<environment_context>|<session_context>"
    r"|<permissions instructions>|<user_instructions>"
)


def _describe_message(index: int, message: Any, conv: Conversation) -> str:
    text = json.dumps(message, ensure_ascii=False)
    if _TOOL_RESULT.search(text):
        return f"the tool result in message {index + 1}"
    first_turn = not any(_from_model(m, conv.dialect) for m in conv.messages[:index])
    role = message.get("role") if isinstance(message, dict) else None
    if first_turn and (role in ("developer", "system") or _CLI_CONTEXT.search(text)):
        return f"the system prompt (the CLI's context in message {index + 1})"
    return f"message {index + 1}"


# --- a recording to replay --------------------------------------------------------------


@dataclass(frozen=True)
class RecordedExchange:
    """One stored exchange: the request as recorded and the response to send again."""

    seq: int
    method: str
    path: str
    #: The request body as stored; ``None`` when it was left out (the recording was past
    #: its size limit).
    body: str | None
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    response: bytes

    @property
    def tokens(self) -> int:
        """The tokens its response says the model read and wrote."""
        return response_tokens(self.response)


@dataclass(frozen=True)
class Recording:
    """A run's stored exchange, read back: what it is answered from."""

    path: Path
    exchanges: tuple[RecordedExchange, ...]
    places: Places
    #: What the recorded run cost, as its results file says (``cost_usd``).
    cost_usd: float | None = None

    @functools.cached_property
    def tokens(self) -> int:
        """The tokens all its responses report."""
        return sum(e.tokens for e in self.exchanges)


class RecordingError(Exception):
    """A recording that cannot be read; the message names its file."""


def read_recording(directory: Path, cost_usd: float | None = None) -> Recording | None:
    """The recording in a run's directory; ``None`` when there is none; a
    :class:`RecordingError` naming the file when it cannot be read."""
    found = recording.exchange_file(directory)
    if found is None:
        return None
    try:
        header, *lines = recording.read(found)
        exchanges = tuple(_exchange(line) for line in lines if isinstance(line, dict))
    except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
        raise RecordingError(f"{found}: not a readable recording ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != "pytest-evalcases exchange":
        raise RecordingError(f"{found}: not a pytest-evalcases exchange")
    homes = header.get("homes") or []
    places = Places(str(header.get("workspace") or ""), tuple(str(h) for h in homes))
    return Recording(found, exchanges, places, cost_usd)


def _exchange(line: Mapping[str, Any]) -> RecordedExchange:
    request, response = line["request"], line["response"]
    if "body_base64" in response:
        body = base64.b64decode(response["body_base64"])
    else:
        body = str(response.get("body", "")).encode("utf-8")
    given = request.get("body")
    if given is None and "body_base64" in request:
        given = base64.b64decode(request["body_base64"]).decode("utf-8", "replace")
    return RecordedExchange(
        seq=int(line.get("seq", 0)),
        method=str(request["method"]),
        path=str(request["path"]),
        body=None if "body_omitted" in request else str(given or ""),
        status=int(response.get("status") or 0),
        reason=str(response.get("reason") or ""),
        headers=tuple((str(n), str(v)) for n, v in response.get("headers") or []),
        response=body,
    )


def response_tokens(body: bytes) -> int:
    """The tokens a response says were read and written, input plus output as results
    files count them: Anthropic's ``message_start`` and ``message_delta`` usage (its
    cache's reads and writes apart), the Responses API's ``response.completed`` usage,
    Gemini's ``usageMetadata`` (its last, in a stream); 0 when it says nothing."""
    text = body.decode("utf-8", "replace")
    documents: list[Any] = []
    for line in text.splitlines():
        if line.startswith("data:"):
            try:
                documents.append(json.loads(line[5:]))
            except ValueError:
                continue
    if not documents:
        try:
            documents.append(json.loads(text))
        except ValueError:
            return 0
    tokens, gemini = 0, 0
    for doc in documents:
        if not isinstance(doc, dict):
            continue
        kind = doc.get("type")
        if kind == "message_start":
            tokens += _sum(doc.get("message", {}).get("usage"), _ANTHROPIC_USAGE)
        elif kind == "message_delta":
            tokens += _sum(doc.get("usage"), ("output_tokens",))
        elif kind == "response.completed":
            tokens += _sum(doc.get("response", {}).get("usage"), ("input_tokens", "output_tokens"))
        elif kind == "message" and isinstance(doc.get("usage"), dict):
            tokens += _sum(doc["usage"], (*_ANTHROPIC_USAGE, "output_tokens"))
        elif "usageMetadata" in doc:
            gemini = _sum(doc["usageMetadata"], ("promptTokenCount", "candidatesTokenCount"))
    return tokens + gemini


#: Anthropic's input without the cache's reads and writes, as results files count a run's
#: tokens (the Responses API's and Gemini's input counts include their cached part, as the
#: CLIs' own counts do).
_ANTHROPIC_USAGE = ("input_tokens",)


def _sum(usage: Any, keys: Iterable[str]) -> int:
    if not isinstance(usage, dict):
        return 0
    return sum(v for k in keys if isinstance(v := usage.get(k), int))


# --- matching ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Divergence:
    """A request the recording has no unused answer to, and how it differs from the
    closest recorded one."""

    turn: int
    what: str
    method: str
    path: str
    diff: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        head = f"replay diverged at turn {self.turn}: {self.what} ({self.method} {self.path})"
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
            then.request(e.method, e.path, e.body) if e.body is not None else None
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

    def answer(self, method: str, path: str, body: bytes) -> RecordedExchange | Divergence:
        """The first unused recorded exchange whose request is this one, normalised; a
        :class:`Divergence` when there is none."""
        text = body.decode("utf-8", "replace")
        now = self._live.request(method, path, text)
        with self._lock:
            for index, then in enumerate(self._then):
                if not self._used[index] and then is not None and then.key == now.key:
                    self._used[index] = True
                    exchange = self.recording.exchanges[index]
                    self.tokens += exchange.tokens
                    self.answered += 1
                    self.model_requests += conversation(then.body).dialect != ""
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
    conv = conversation(now.body)
    at = turn(conv)
    same = [r for r in recorded if r.method == now.method and r.path == now.path]
    if not same:
        what = "a request the recording does not have" + (
            "" if recorded else " (every recorded request was answered already)"
        )
        return Divergence(at, what, now.method, now.path)
    same_turn = [r for r in same if turn(conversation(r.body)) == at] or same
    closest = max(same_turn, key=lambda r: _shared(conversation(r.body), conv))
    what, before, after = _difference(conversation(closest.body), conv, closest.body, now.body)
    return Divergence(at, what, now.method, now.path, _diff(before, after))


def _shared(a: Conversation, b: Conversation) -> int:
    same = 0
    for x, y in zip(a.messages, b.messages, strict=False):
        if x != y:
            break
        same += 1
    return same * 4 + 2 * bool(a.system == b.system) + bool(a.tools == b.tools)


def _difference(
    then: Conversation, now: Conversation, then_body: Any, now_body: Any
) -> tuple[str, Any, Any]:
    """What differs first, in the order the model reads it, and the two versions of it."""
    if then.system != now.system:
        return "the system prompt differs", then.system, now.system
    if then.tools != now.tools:
        return "the tool list differs", then.tools, now.tools
    for index, (x, y) in enumerate(zip(then.messages, now.messages, strict=False)):
        if x != y:
            return f"{_describe_message(index, y, now)} differs", x, y
    if len(then.messages) != len(now.messages):
        return (
            f"the number of messages differs (recorded {len(then.messages)}, now "
            f"{len(now.messages)})",
            then.messages[len(now.messages) :],
            now.messages[len(then.messages) :],
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


# --- the session's source of recordings -------------------------------------------------


@dataclass(frozen=True)
class ReplayPlan:
    """What ``--eval-replay`` / ``--eval-reuse`` asked for: the mode and the results
    file to replay from."""

    mode: Mode
    results: Path


@dataclass(frozen=True)
class Found:
    """What a run replays: its recording, or why it has none."""

    recording: Recording | None
    missing: str = ""


@dataclass
class ReplaySource:
    """The recordings of the results file a session replays from, found by run. The
    results file is read once, when the first run asks."""

    plan: ReplayPlan
    #: The session's redaction, which the recorded bodies went through: a request now
    #: goes through it too before it is compared.
    redact: Callable[[str], str] = str
    _session: RecordedSession | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def mode(self) -> Mode:
        return self.plan.mode

    def session(self) -> RecordedSession:
        """The stored results file; a :class:`ResultsFileError` names it when it does
        not read."""
        with self._lock:
            if self._session is None:
                self._session = load_session(self.plan.results)
            return self._session

    def find(self, case_id: str, variant: str, repetition: int) -> Found:
        """The recording of repetition ``repetition`` of ``case_id`` for ``variant``."""
        try:
            session = self.session()
        except ResultsFileError as exc:
            return Found(None, str(exc))
        name = f"{case_id}[{variant}]" if variant else case_id
        run = session.find(case_id, variant, repetition)
        where = self.plan.results
        if run is None:
            return Found(None, f"{where} has no run {repetition} of {name}")
        if run.directory is None:
            return Found(None, f"run {repetition} of {name} in {where} was not recorded")
        try:
            found = read_recording(run.directory, run.record.cost_usd)
        except RecordingError as exc:
            return Found(None, str(exc))
        if found is None:
            return Found(None, f"the recording of {name} in {where} is gone ({run.directory})")
        return Found(found)


def repetition_of(name: str, case_id: str, variant_name: str) -> int:
    """The repetition of a run from its name beside the results file (``case.r2``: 2;
    ``case``: 0), as :func:`pytest_evalcases.run.keep.entry_name` made it."""
    from pytest_evalcases.run.keep import entry_name

    found = re.search(r"\.r(\d+)$", name)
    if found and entry_name(case_id, variant_name, int(found.group(1))) == name:
        return int(found.group(1))
    return 0
