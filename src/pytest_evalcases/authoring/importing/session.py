"""What ``evalcases import`` reads of a saved agent session, whichever CLI saved it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_evalcases.errors import UsageError
from pytest_evalcases.kinds import SessionCli


@dataclass(frozen=True)
class ToolUse:
    """One tool call the agent made: its name in the CLI, its canonical kind (``shell``,
    ``read``, ... as checks name them) and its most telling input."""

    name: str
    kind: str
    input: str


@dataclass(frozen=True)
class Turn:
    """One user turn: the prompt as typed, and what the agent did in answer."""

    prompt: str
    timestamp: str
    model: str | None
    calls: tuple[ToolUse, ...]


@dataclass(frozen=True)
class Session:
    """One saved session: where it ran and its user turns, first to last."""

    cli: SessionCli
    path: Path
    session_id: str
    #: The directory the session ran in; ``None`` when the file does not say.
    cwd: Path | None
    #: When it started (ISO 8601, as the file has it).
    started: str
    #: The git commit the CLI recorded at the start, when it records one (Codex).
    commit: str | None
    branch: str | None
    version: str | None
    turns: tuple[Turn, ...]


def json_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON Lines file, skipping lines that are not one (a line
    the CLI was writing when it stopped)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read the session file {path}: {exc.strerror}") from None
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def text_of(value: object) -> str | None:
    """The text of message content: a string, or the text parts of a list of parts
    (``{"text": ...}``, joined); ``None`` when it has no text part, or a part that is a
    tool's result (the CLI answering the model, not the user typing)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return None
    parts = [p for p in value if isinstance(p, dict)]
    if any("tool_use_id" in p or "functionResponse" in p for p in parts):
        return None
    texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
    return "".join(texts) if texts else None


def no_turns(cli: str, path: Path) -> UsageError:
    return UsageError(f"{path}: no user turn found; is it a session file of {cli}?")
