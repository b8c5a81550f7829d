"""Codex's rollout file: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` (``~/.codex``
by default), one ``{"timestamp", "type", "payload"}`` record a line.

Its ``session_meta`` record names the ``cwd``, the ``cli_version`` and, in a git
repository, the commit and branch at the start (``git.commit_hash``, ``git.branch``);
each turn's ``turn_context`` names the model.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from pytest_evalcases.agents import output
from pytest_evalcases.authoring.importing.session import (
    Session,
    ToolUse,
    Turn,
    json_lines,
    no_turns,
    text_of,
)

#: The completed items that are tool calls: item type -> canonical kind.
ITEM_KINDS = {
    "CommandExecution": "shell",
    "FileChange": "edit",
    "WebSearch": "web",
    "McpToolCall": "other",
}


def read(path: Path) -> Session:
    """The session of a Codex rollout file."""
    meta: dict[str, Any] = {}
    models: dict[str, str] = {}
    prompts: list[tuple[str, str, str]] = []  # prompt, timestamp, turn id
    legacy: list[tuple[str, str, str]] = []  # from `user_message` events of older releases
    calls: list[tuple[str, ToolUse]] = []  # turn id, call
    for record in json_lines(path):
        payload = record.get("payload")
        if not isinstance(payload, dict):
            continue
        kind, stamp = record.get("type"), str(record.get("timestamp") or "")
        if kind == "session_meta" and not meta:
            meta = payload
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            models.setdefault(str(payload.get("turn_id")), payload["model"])
        elif kind == "event_msg" and payload.get("type") == "user_message":
            message = payload.get("message")
            if isinstance(message, str):
                legacy.append((message, stamp, str(payload.get("turn_id"))))
        elif kind == "event_msg" and payload.get("type") == "item_completed":
            item = payload.get("item")
            turn = str(payload.get("turn_id"))
            if not isinstance(item, dict):
                continue
            if item.get("type") == "UserMessage":
                prompt = text_of(item.get("content"))
                if prompt is not None:
                    prompts.append((prompt, stamp, turn))
            elif item.get("type") in ITEM_KINDS:
                calls.append((turn, _call(item)))
    prompts = prompts or legacy
    if not prompts:
        raise no_turns("Codex", path)
    recorded = meta.get("git")
    git: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    turns = tuple(
        Turn(prompt, stamp, models.get(turn), tuple(c for t, c in calls if t == turn))
        for prompt, stamp, turn in prompts
    )
    cwd = meta.get("cwd")
    return Session(
        cli="codex",
        path=path,
        session_id=str(meta.get("id") or path.stem),
        cwd=Path(cwd) if isinstance(cwd, str) and cwd else None,
        started=str(meta.get("timestamp") or prompts[0][1]),
        commit=_str(git.get("commit_hash")),
        branch=_str(git.get("branch")),
        version=_str(meta.get("cli_version")),
        turns=turns,
    )


def _call(item: dict[str, Any]) -> ToolUse:
    name = str(item["type"])
    if name == "CommandExecution":
        command = item.get("command")
        if isinstance(command, list) and all(isinstance(w, str) for w in command):
            # The shell it ran the command line with: ["/bin/bash", "-lc", LINE].
            shell = len(command) == 3 and command[1] in ("-lc", "-c")
            command = command[2] if shell else shlex.join(command)
        return ToolUse(name, "shell", output.tool_input(command))
    if name == "McpToolCall":
        server, tool = item.get("server"), item.get("tool")
        name = f"{server}.{tool}" if server else str(tool)
        return ToolUse(name, "other", output.tool_input(item.get("arguments", {})))
    detail = item.get("changes") if name == "FileChange" else item.get("query")
    return ToolUse(name, ITEM_KINDS[name], output.tool_input(detail or ""))


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
