"""Gemini CLI's saved session: ``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/
session-*.jsonl`` (``~/.gemini/...`` by default), one record a line.

A header record (``sessionId``, ``startTime``) opens each start of the CLI; message
records (``id``, ``type`` user or gemini) follow, a record with an ``id`` seen before
replacing it (the answer again, with its ``toolCalls``), and ``{"$set": {"messages":
[...]}}`` lists them all anew (a resumed session, in the model API's form). The file
names neither the directory the session ran in nor a commit nor the CLI's version: the
directory is in the project's ``.project_root`` beside ``chats/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_evalcases.agents import output
from pytest_evalcases.agents.gemini import TOOL_KINDS
from pytest_evalcases.authoring.importing.session import (
    Session,
    ToolUse,
    Turn,
    json_lines,
    no_turns,
    text_of,
)

#: The first user message of each start: the CLI's context, not the user's words.
_CONTEXT = "<session_context>"
INPUT_KEYS = ("command", "file_path", "absolute_path", "dir_path", "pattern", "url", "query")


def read(path: Path) -> Session:
    """The session of a Gemini CLI session file."""
    header: dict[str, Any] = {}
    # Every message record by id (the last one written wins), and the ids of the
    # conversation in order.
    records: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for record in json_lines(path):
        update = record.get("$set")
        if isinstance(update, dict) and isinstance(update.get("messages"), list):
            # A resumed session's history comes back in the API's form (no model, no
            # toolCalls, new timestamps): a message recorded before keeps its record.
            listed = [m for m in update["messages"] if isinstance(m, dict)]
            order = [str(m.get("id")) for m in listed]
            for message in listed:
                records.setdefault(str(message.get("id")), message)
        elif "type" in record and "id" in record:
            key = str(record["id"])
            if key not in order:
                order.append(key)
            records[key] = record
        elif "sessionId" in record and "startTime" in record and not header:
            header = record
    messages = [records[key] for key in order]
    turns: list[Turn] = []
    answers: list[dict[str, Any]] = []
    pending: tuple[str, str] | None = None

    def close() -> None:
        if pending is not None:
            turns.append(Turn(pending[0], pending[1], _model(answers), _calls(answers)))

    for message in messages:
        if message.get("type") == "user":
            prompt = text_of(message.get("content"))
            if prompt is None or prompt.startswith(_CONTEXT):
                continue
            close()
            pending, answers = (prompt, str(message.get("timestamp") or "")), []
        elif message.get("type") == "gemini":
            answers.append(message)
    close()
    if not turns:
        raise no_turns("Gemini CLI", path)
    return Session(
        cli="gemini",
        path=path,
        session_id=str(header.get("sessionId") or path.stem),
        cwd=_project_root(path),
        started=str(header.get("startTime") or turns[0].timestamp),
        commit=None,
        branch=None,
        version=None,
        turns=tuple(turns),
    )


def _project_root(path: Path) -> Path | None:
    """The directory the session ran in, from ``<project>/.project_root`` beside the
    ``chats`` directory of the session file."""
    marker = path.parent.parent / ".project_root"
    try:
        text = marker.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return Path(text) if text else None


def _model(answers: list[dict[str, Any]]) -> str | None:
    return next((str(a["model"]) for a in answers if isinstance(a.get("model"), str)), None)


def _calls(answers: list[dict[str, Any]]) -> tuple[ToolUse, ...]:
    calls = []
    for answer in answers:
        listed = answer.get("toolCalls")
        if not isinstance(listed, list):
            # A message in the model API's form: its functionCall parts.
            content = answer.get("content")
            parts = [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []
            listed = [p["functionCall"] for p in parts if "functionCall" in p]
        for call in listed:
            if isinstance(call, dict):
                name = str(call.get("name") or "")
                kind = output.tool_kind(name, TOOL_KINDS)
                calls.append(ToolUse(name, kind, output.tool_input(call.get("args"), *INPUT_KEYS)))
    return tuple(calls)
