"""What the agent drivers share: reading JSON output, naming errors, tool kinds.

The Claude Code, Codex and Gemini CLIs print JSON in different shapes (one object, a
pretty-printed object, an array, JSON lines mixed with plain-text lines) and report the
same few failures (bad credentials, no credit, rate limits) in their own words. This
module turns those shapes into a flat list of JSON objects and those words into the
``kind`` of an :class:`~pytest_evalcases.errors.AgentError`, so each driver only knows
its own field names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_evalcases import process
from pytest_evalcases.errors import AgentError
from pytest_evalcases.kinds import ErrorKind, Spent
from pytest_evalcases.process import tail

#: JSON object as the CLIs print it; values are whatever ``json.loads`` made of them.
JSONObject = dict[str, Any]

_DECODER = json.JSONDecoder()

# Order matters: an insufficient-quota message also says 429, and it is billing, not a
# transient limit; a Claude 401 message says nothing but "Invalid API key".
_KIND_PATTERNS: tuple[tuple[ErrorKind, re.Pattern[str]], ...] = (
    (
        "authentication",
        re.compile(
            r"not logged in|authentication|\bunauthori[sz]ed\b|\b401\b"
            r"|invalid[ _-]?(api|x-api)[ _-]?key"
            r"|api[ _-]?key (is )?(missing|not (set|found|valid))|please run /login"
            r"|credentials|oauth token",
            re.IGNORECASE,
        ),
    ),
    (
        "billing",
        re.compile(
            r"credit balance|insufficient[ _]quota|billing|payment required|\b402\b",
            re.IGNORECASE,
        ),
    ),
    (
        "rate-limit",
        re.compile(
            r"\b429\b|rate[ _-]?limit|usage limit|hit your limit|too many requests"
            r"|resource[ _]exhausted|quota exceeded",
            re.IGNORECASE,
        ),
    ),
    (
        # The provider's side failed (an outage, overload): no verdict, and nothing the
        # configuration or the account could fix.
        "server",
        re.compile(
            r"\b(500|502|503|504|529)\b|overloaded|server[ _-]side issue|internal server error"
            r"|high demand|service unavailable",
            re.IGNORECASE,
        ),
    ),
)

#: How each kind of failure reads in a message, after the agent's name.
_KIND_PHRASES: dict[ErrorKind, str] = {
    "authentication": "could not authenticate",
    "billing": "was refused for billing (no credit)",
    "rate-limit": "hit a rate or usage limit",
    "server": "met an error on the model provider's side",
    "max-turns": "stopped at its turn limit",
    "budget": "stopped at its budget limit",
    "config": "refused its configuration",
    "input": "rejected its input",
    "agent": "reported an error",
}


def json_objects(text: str) -> list[JSONObject]:
    """Every JSON object in ``text``, in order; elements of top-level arrays flattened.

    Accepts one (possibly pretty-printed) document, JSON lines, and either of them
    with plain-text lines around them ("Reading prompt from stdin...", a warning, the
    marker left where :mod:`~pytest_evalcases.process` cut a long output). Lines that
    are not JSON are skipped rather than failing the whole run.
    """
    found: list[JSONObject] = []
    pos, end = 0, len(text)
    while pos < end:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            break
        if text[pos] in "{[":
            try:
                value, pos = _DECODER.raw_decode(text, pos)
            except json.JSONDecodeError:
                pass
            else:
                _collect(value, found)
                continue
        newline = text.find("\n", pos)
        pos = end if newline < 0 else newline + 1
    return found


def _collect(value: object, found: list[JSONObject]) -> None:
    if isinstance(value, dict):
        found.append(value)
    elif isinstance(value, list):
        found.extend(item for item in value if isinstance(item, dict))


def classify(*texts: object) -> ErrorKind:
    """The error kind that the CLI's own words suggest, ``"agent"`` when none does."""
    words = " ".join(str(t) for t in texts if t is not None)
    for kind, pattern in _KIND_PATTERNS:
        if pattern.search(words):
            return kind
    return "agent"


def agent_error(
    agent: str, kind: ErrorKind, words: str, *, hint: str = "", spent: Spent | None = None
) -> AgentError:
    """An :class:`AgentError` that says what went wrong and quotes the CLI's words; a
    rate limit carries the delay the words ask for (:func:`retry_after`); ``spent`` is
    what the run reported spending up to there."""
    phrase = _KIND_PHRASES.get(kind, "reported an error")
    message = f"{agent} {phrase}: {words.strip() or '(no message)'}"
    if hint:
        message += f"\n  hint: {hint}"
    delay = retry_after(words) if kind == "rate-limit" else None
    return AgentError(message, kind=kind, retry_after=delay, spent=spent)


#: How agents and APIs say how long to wait: "retry after 30 seconds", "Retry-After: 30",
#: "try again in 2m", "Please retry in 17.7s" (Gemini), "retryDelay": "30s" (Google's
#: RetryInfo).
_RETRY_AFTER = re.compile(
    r"(?:retry[ _-]?after|try again in|retry in|retry[ _-]?delay)\W{0,4}"
    r"(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?)?\b",
    re.IGNORECASE,
)
_UNIT_SECONDS = {"ms": 0.001, "m": 60.0, "min": 60.0}


def retry_after(words: str) -> float | None:
    """Seconds the agent's words ask to wait before the next request; ``None`` when they
    name no delay. A bare number is seconds, as in the HTTP header."""
    match = _RETRY_AFTER.search(words)
    if match is None:
        return None
    unit = (match.group(2) or "s").lower()
    if unit.startswith("milli"):
        unit = "ms"
    elif unit.startswith("min"):
        unit = "min"
    return float(match.group(1)) * _UNIT_SECONDS.get(unit, 1.0)


def no_result_error(
    agent: str, result: process.ProcessResult, missing: str, *, hint: str = ""
) -> AgentError:
    """The CLI printed nothing usable: a crash when it failed, a parse error when not.

    ``missing`` names what was looked for ("a result event"), so the message tells a
    version change in the output format apart from a crash.
    """
    cut = " (its output was longer than the cap and was cut)" if result.stdout_truncated else ""
    if result.returncode == 0:
        message = (
            f"{agent} exited 0 but its output has no {missing}{cut}; "
            f"stdout: {tail(result.stdout) or '(empty)'}"
        )
        kind: ErrorKind = "parse"
    else:
        status = process.exited(result.returncode)
        said = result.said()
        message = f"{agent} {status} without {missing}{cut}: {said}"
        kind = "crash"
    if hint:
        message += f"\n  hint: {hint}"
        kind = "config" if kind == "crash" else kind
    return AgentError(message, kind=kind)


def tool_kind(name: str, kinds: Mapping[str, str]) -> str:
    """The canonical kind of a tool name (``other`` for tools the driver does not know)."""
    return kinds.get(name, "other")


def tool_input(value: object, *keys: str) -> str:
    """The most telling text of a tool's input: the first of ``keys`` holding a string
    (a shell command), otherwise the whole input as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in keys:
            field = value.get(key)
            if isinstance(field, str):
                return field
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=False)


def as_int(value: object) -> int | None:
    """``value`` when it is a count (JSON numbers may come as floats), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def as_float(value: object) -> float | None:
    """``value`` as a float when it is a JSON number, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def as_str(value: object) -> str | None:
    """``value`` when it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def as_object(value: object) -> JSONObject:
    """``value`` when it is a JSON object, else an empty one (missing or odd fields)."""
    return value if isinstance(value, dict) else {}


def option_value(args: tuple[str, ...], *names: str) -> str | None:
    """The value of the last ``--name VALUE`` / ``--name=VALUE`` among ``args``."""
    value: str | None = None
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                value = args[i + 1]
            elif name.startswith("--") and arg.startswith(name + "="):
                value = arg[len(name) + 1 :]
    return value


def measured_ms(result: process.ProcessResult) -> int:
    """Wall-clock duration of the process in milliseconds."""
    return int(result.duration * 1000)


@dataclass(frozen=True)
class Default:
    """One default permission argument of a driver (``args``, an option and its value),
    and the options that set the same thing: any of them among the user's arguments
    replaces it (docs/agents.md, "Permissions")."""

    args: tuple[str, ...]
    same: tuple[str, ...]


def with_permissions(args: Sequence[str], defaults: Sequence[Default]) -> tuple[str, ...]:
    """``args`` followed by each of the driver's ``defaults`` that ``args`` does not set
    itself (an option of its ``same``, alone or as ``OPTION=…``): the user's arguments
    add to the defaults and replace one only where they set the same thing."""
    kept = [
        default.args
        for default in defaults
        if not any(a == f or a.startswith(f + "=") for a in args for f in default.same)
    ]
    return (*args, *(arg for default in kept for arg in default))
