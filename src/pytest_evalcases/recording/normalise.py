"""What replay compares: a request with what always varies between two runs of the same
case replaced (docs/replay.md, "What is normalised"): the workspace and agent-home paths,
dates, session, request and tool-use ids, the CLIs' metadata.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_evalcases.recording.format import stored_path

#: Placeholders that the normalised requests carry in place of what varies.
WORKSPACE = "<workspace>"
HOME = "<home>"

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
        return skills_in_order(text)

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
        normal_path = self.text(stored_path(path))
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


#: One skill of a list a CLI puts in its system prompt (Gemini CLI's
#: ``<available_skills>``): ``<skill>`` to ``</skill>``, with the line's indentation.
_SKILL = re.compile(r"[ \t]*<skill>.*?</skill>[ \t]*\n?", re.S)


def skills_in_order(text: str) -> str:
    """``text`` with each run of adjacent ``<skill>`` blocks sorted: Gemini CLI lists
    its skills in the order it happened to find them, which differs between two runs of
    the same case (docs/replay.md, "What is normalised"). Which skills are listed, and
    what each says, is still compared."""
    if "<skill>" not in text:
        return text
    parts: list[str] = []
    run: list[str] = []
    end = 0
    for match in _SKILL.finditer(text):
        if run and match.start() != end:
            parts.append(_sorted(run))
            run = []
        if not run:
            parts.append(text[end : match.start()])
        run.append(match.group())
        end = match.end()
    parts.append(_sorted(run))
    parts.append(text[end:])
    return "".join(parts)


def _sorted(run: list[str]) -> str:
    """Adjacent skill blocks in order, one a line; the run ends as it did."""
    ending = "\n" if run[-1].endswith("\n") else ""
    return "\n".join(sorted(block.removesuffix("\n") for block in run)) + ending


def _dropped(data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    data = dict(data)
    for key, inner in _DROPPED_TOP.items():
        value = data.get(key)
        if isinstance(value, dict):
            data[key] = {k: v for k, v in value.items() if k not in inner}
    return data
