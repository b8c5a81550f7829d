"""Claude Code's session file: ``$CLAUDE_CONFIG_DIR/projects/<dir>/<session>.jsonl``
(``~/.claude/projects/...`` by default), one JSON entry a line.

User entries carry ``cwd``, ``gitBranch`` and the CLI's ``version``; no commit is
recorded, so the importer takes the branch's commit at the session's start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_evalcases.agents import output
from pytest_evalcases.agents.claude import TOOL_KINDS
from pytest_evalcases.authoring.importing.session import (
    Session,
    ToolUse,
    Turn,
    json_lines,
    no_turns,
    text_of,
)

#: What the CLI writes as a user entry that the user did not type: slash commands and
#: their output, and the caveat before them.
_NOT_TYPED = ("<command-name>", "<command-message>", "<local-command-", "Caveat: ")
#: The keys of a tool's input that say most about the call, in order.
INPUT_KEYS = ("command", "file_path", "notebook_path", "pattern", "url", "query", "path")


def read(path: Path) -> Session:
    """The session of a Claude Code session file."""
    entries = list(json_lines(path))
    cwd = branch = version = None
    started = ""
    prompts: list[tuple[str, str]] = []
    answers: list[list[dict[str, Any]]] = []
    for entry in entries:
        started = started or str(entry.get("timestamp") or "")
        if entry.get("isSidechain"):
            continue
        kind = entry.get("type")
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        if kind == "user":
            prompt = _typed(entry, message)
            if prompt is None:
                continue
            cwd = cwd or entry.get("cwd")
            branch = branch or entry.get("gitBranch")
            version = version or entry.get("version")
            prompts.append((prompt, str(entry.get("timestamp") or "")))
            answers.append([])
        elif kind == "assistant" and answers:
            answers[-1].append(message)
    if not prompts:
        raise no_turns("Claude Code", path)
    turns = tuple(
        Turn(prompt, stamp, _model(messages), _calls(messages))
        for (prompt, stamp), messages in zip(prompts, answers, strict=True)
    )
    session_id = next((str(e["sessionId"]) for e in entries if e.get("sessionId")), path.stem)
    return Session(
        cli="claude",
        path=path,
        session_id=session_id,
        cwd=Path(cwd) if isinstance(cwd, str) and cwd else None,
        started=started,
        commit=None,
        branch=branch if isinstance(branch, str) and branch not in ("", "HEAD") else None,
        version=version if isinstance(version, str) else None,
        turns=turns,
    )


def _typed(entry: dict[str, Any], message: dict[str, Any]) -> str | None:
    """The prompt of a user entry the user typed, else ``None``."""
    if entry.get("isMeta") or "toolUseResult" in entry or entry.get("isCompactSummary"):
        return None
    prompt = text_of(message.get("content"))
    if prompt is None or prompt.lstrip().startswith(_NOT_TYPED):
        return None
    return prompt


def _model(messages: list[dict[str, Any]]) -> str | None:
    for message in messages:
        model = message.get("model")
        if isinstance(model, str) and model and not model.startswith("<"):
            return model
    return None


def _calls(messages: list[dict[str, Any]]) -> tuple[ToolUse, ...]:
    calls = []
    for message in messages:
        content = message.get("content")
        for part in content if isinstance(content, list) else ():
            if isinstance(part, dict) and part.get("type") == "tool_use":
                name = str(part.get("name") or "")
                kind = output.tool_kind(name, TOOL_KINDS)
                calls.append(ToolUse(name, kind, output.tool_input(part.get("input"), *INPUT_KEYS)))
    return tuple(calls)
