"""What a recorded run left besides its model traffic (docs/replay.md, "What else is
stored"): ``run.json`` (the final answer, the transcript, usage, the error) and
``changes.tar.gz`` (the files the run added or changed in its workspace, relative to the
fixture as populated), in the run's directory beside the results file. What
``--eval-regrade`` restores and grades again (:mod:`pytest_evalcases.run.regrade`).

The changes are found by comparing the workspace with a :func:`snapshot` taken right
after the fixture and the variant's overlays were copied in, before the case's
``setup``: restoring them over a fresh copy of the fixture needs no setup run. ``.git``
is a directory like any other: a commit the agent made is stored, so that a command
check that reads the history sees it again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_evalcases import defaults
from pytest_evalcases.agents import atif
from pytest_evalcases.agents.base import AgentResult, Denial, HookRun, ToolCall, Usage
from pytest_evalcases.agents.mcp import McpServed
from pytest_evalcases.redact import Redactor
from pytest_evalcases.run import changes, trajectory
from pytest_evalcases.run.changes import CHANGES, Changes, CorruptRecording, Omitted
from pytest_evalcases.run.workspace import EntryState, snapshot

#: The version of ``run.json``'s format.
FORMAT_VERSION = 1
#: The format's name, the first key of ``run.json``.
FORMAT = "pytest-evalcases run"
#: The file of a run's answer, transcript and outcome in its directory.
RUN_FILE = "run.json"


class RecordingWarning(UserWarning):
    """A run's recording could not be written (a full disk): the run keeps its verdict."""


@dataclass(frozen=True)
class StoredRun:
    """A run's ``run.json`` read back: what regrading needs."""

    directory: Path
    result: AgentResult | None
    #: Whether the driver's transcript carries tool inputs (tool checks need to know).
    tool_inputs: bool = True
    #: The error the run's agent ended in, as kind and message.
    error: tuple[str, str] | None = None
    #: The workspace was as the run started it (after ``setup``) when the agent ended.
    workspace_unchanged: bool = False
    changes: Changes = field(default_factory=Changes)
    #: The name of the agent that ran (the skill checks read its transcript its way).
    agent: str | None = None


# --- storing ---------------------------------------------------------------------------


def store(
    directory: Path,
    workspace: Path,
    populated: Mapping[str, EntryState] | None,
    started: Mapping[str, EntryState] | None,
    header: Mapping[str, Any],
    result: AgentResult | None,
    error: tuple[str, str] | None,
    *,
    tool_inputs: bool,
    redact: Redactor,
    max_bytes: int = defaults.CHANGES_MAX_BYTES,
    mode: int = 0o600,
    about: trajectory.About | None = None,
) -> None:
    """Write ``run.json`` and ``changes.tar.gz`` of a run into ``directory``, each
    through a temporary file renamed into place; an :class:`OSError` when they cannot be
    written. ``populated`` is the workspace as populated (before ``setup``), ``started``
    as the agent found it; either is ``None`` when the workspace held more entries than
    are walked (:func:`~pytest_evalcases.run.workspace.snapshot`): then no change is
    stored, and ``omitted`` says why. With ``about``, ``trajectory.json`` too
    (docs/trajectories.md): a trajectory that cannot be made costs the trajectory only,
    never the run, and ``run.json`` and a warning say why."""
    now = snapshot(workspace)
    directory.mkdir(parents=True, exist_ok=True)
    if now is None or populated is None:
        archive, changed = None, Changes(omitted=(Omitted(".", 0, "entries"),))
    else:
        archive, changed = changes.archive(
            workspace, populated, now, redact, max_bytes, defaults.CHANGES_MAX_ENTRIES
        )
    if archive is not None:
        _write(directory / CHANGES, archive, mode)
    else:
        with contextlib.suppress(FileNotFoundError):
            (directory / CHANGES).unlink()
    document = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        **header,
        **_result_dict(result),
        "tool_inputs": tool_inputs,
        "error": {"kind": error[0], "message": error[1]} if error is not None else None,
        "workspace_unchanged": now is not None and started is not None and now == dict(started),
        "changes": changed.to_dict(),
    }
    if about is not None:
        made = _trajectory(about, result, error, redact)
        if isinstance(made, bytes):
            _write(directory / atif.TRAJECTORY_FILE, made, mode)
        else:
            with contextlib.suppress(FileNotFoundError):
                (directory / atif.TRAJECTORY_FILE).unlink()
            document["trajectory_error"] = made
            warnings.warn(
                RecordingWarning(f"run {about.run}: no {atif.TRAJECTORY_FILE}: {made}"),
                stacklevel=2,
            )
    data = json.dumps(redact.data(document), ensure_ascii=False, indent=1) + "\n"
    _write(directory / RUN_FILE, data.encode("utf-8"), mode)


def _trajectory(
    about: trajectory.About,
    result: AgentResult | None,
    error: tuple[str, str] | None,
    redact: Redactor,
) -> bytes | str:
    """The run's trajectory as the file's bytes, redacted as ``run.json`` is; or why
    it could not be made."""
    try:
        made = trajectory.build(about, result, error)
    # Whatever went wrong in making it, the run and its verdict are kept.
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    data = redact.data(made.model_dump(mode="json", exclude_none=True))
    return (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def store_quietly(directory: Path, name: str, write: Callable[[], None]) -> bool:
    """Run ``write``; a failure to write (a full disk) costs the run's recording, never
    its verdict, and is said as a :class:`RecordingWarning` (pytest's warnings summary)."""
    try:
        write()
    except OSError as exc:
        warnings.warn(
            RecordingWarning(
                f"run {name}: its recording could not be written to {directory}: "
                f"{exc.strerror or exc}"
            ),
            stacklevel=2,
        )
        return False
    return True


def _result_dict(result: AgentResult | None) -> dict[str, Any]:
    if result is None:
        return {"answer": None, "tool_calls": None}
    calls = result.tool_calls
    return {
        "answer": result.text,
        "tool_calls": (
            [{"name": c.name, "kind": c.kind, "input": c.input} for c in calls]
            if calls is not None
            else None
        ),
        "usage": {
            "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens,
            "cache_read_tokens": result.usage.cache_read_tokens,
            "cache_write_tokens": result.usage.cache_write_tokens,
        },
        "cost_usd": result.cost_usd,
        "models": list(result.models),
        "duration_ms": result.duration_ms,
        "num_turns": result.num_turns,
        "exit_code": result.exit_code,
        "truncated": result.truncated,
        "denials": (
            [dataclasses.asdict(denial) for denial in result.denials]
            if result.denials is not None
            else None
        ),
        "refused_writes": list(result.refused_writes),
        "hooks": (
            [dataclasses.asdict(run) for run in result.hooks] if result.hooks is not None else None
        ),
        # A conversation's turns, each as the run is: a regrade grades `turn:` checks.
        **({"turns": [_result_dict(turn) for turn in result.turns]} if result.turns else {}),
        "mcp": result.mcp.as_json() if result.mcp is not None else None,
        "mcp_connected": list(result.mcp_connected) if result.mcp_connected is not None else None,
    }


def _names(value: object) -> tuple[str, ...] | None:
    """A stored list of names; ``None`` for a run that stored none."""
    return tuple(str(name) for name in value) if isinstance(value, list) else None


def _denials(value: object) -> tuple[Denial, ...] | None:
    """The stored refused calls; a run stored before they had fields kept each as
    ``TOOL: input``."""
    if not isinstance(value, list):
        return None
    denials = []
    for item in value:
        if isinstance(item, dict):
            by = item.get("by")
            denials.append(
                Denial(
                    str(item.get("name", "")),
                    str(item.get("kind", "other")),
                    str(item.get("input", "")),
                    by if by in ("permission", "hook") else None,
                )
            )
        else:
            name, _, text = str(item).partition(": ")
            denials.append(Denial(name, "other", text))
    return tuple(denials)


def _hooks(value: object) -> tuple[HookRun, ...] | None:
    """The stored hooks that ran; ``None`` for a run whose agent could not show them, or
    one stored before they were kept."""
    if not isinstance(value, list):
        return None
    return tuple(
        HookRun(
            str(item.get("event", "")),
            item["command"] if isinstance(item.get("command"), str) else None,
            str(item.get("name", "")),
            item.get("blocked") is True,
        )
        for item in value
        if isinstance(item, dict)
    )


def _write(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".tmp-{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        # As the results file beside it: what the umask allows (mkstemp's is private).
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# --- finding a session's recordings ------------------------------------------------------

#: A file that says a directory holds a run's recording (any one of them).
_RUN_FILES = (RUN_FILE, "exchange.jsonl", "exchange.jsonl.gz")


def is_recording_dir(path: Path) -> bool:
    """Whether ``path`` is a session's directory of recordings (``<stem>.runs``), ours
    to remove: every directory in it holds a run's ``run.json`` or exchange, and it
    holds no other file but hidden ones (temporary files of an interrupted write)."""
    if not path.name.endswith(".runs") or path.is_symlink() or not path.is_dir():
        return False
    try:
        entries = list(os.scandir(path))
    except OSError:
        return False
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if not entry.is_dir(follow_symlinks=False):
            return False
        if not any(os.path.isfile(os.path.join(entry.path, name)) for name in _RUN_FILES):
            return False
    return True


def recording_dirs(root: Path) -> list[Path]:
    """The directories of recordings in ``root``, oldest first."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return []
    found = [
        (_mtime(Path(e.path)), Path(e.path)) for e in entries if is_recording_dir(Path(e.path))
    ]
    return [path for _, path in sorted(found)]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


# --- reading back and restoring ----------------------------------------------------------


def load(directory: Path) -> StoredRun | None:
    """The run stored in ``directory``; ``None`` when it has no ``run.json``, a
    :class:`CorruptRecording` naming the file when it does not read."""
    path = directory / RUN_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CorruptRecording(f"{path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f'not a stored run (no "format": "{FORMAT}")')
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(f"version {data.get('version')!r}, this plugin reads {FORMAT_VERSION}")
        return _stored_run(directory, data)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise CorruptRecording(f"{path}: {exc}") from None


def _stored_run(directory: Path, data: dict[str, Any]) -> StoredRun:
    error = data.get("error")
    stored = data.get("changes") or {}
    return StoredRun(
        directory=directory,
        result=_stored_result(data),
        tool_inputs=bool(data.get("tool_inputs", True)),
        agent=str(data["agent"]) if isinstance(data.get("agent"), str) else None,
        error=(str(error["kind"]), str(error["message"])) if error else None,
        workspace_unchanged=bool(data.get("workspace_unchanged", False)),
        changes=Changes(
            archive=stored.get("archive"),
            entries=int(stored.get("entries", 0)),
            bytes=int(stored.get("bytes", 0)),
            deleted=tuple(str(p) for p in stored.get("deleted", ())),
            omitted=tuple(
                Omitted(str(o["path"]), int(o["bytes"]), str(o["reason"]))
                for o in stored.get("omitted", ())
            ),
            redacted=tuple(str(p) for p in stored.get("redacted", ())),
        ),
    )


def _stored_result(data: dict[str, Any]) -> AgentResult | None:
    """The stored answer, transcript and figures of a run, or of one turn of its
    conversation; ``None`` for a run that ended in an error."""
    if data.get("answer") is None:
        return None
    usage = data.get("usage") or {}
    calls = data.get("tool_calls")
    turns = (_stored_result(turn) for turn in data.get("turns") or () if isinstance(turn, dict))
    return AgentResult(
        text=str(data["answer"]),
        tool_calls=(
            tuple(ToolCall(str(c["name"]), str(c["kind"]), str(c["input"])) for c in calls)
            if calls is not None
            else None
        ),
        usage=Usage(
            input_tokens=usage.get("input_tokens"),
            output_tokens=usage.get("output_tokens"),
            cache_read_tokens=usage.get("cache_read_tokens"),
            cache_write_tokens=usage.get("cache_write_tokens"),
        ),
        cost_usd=data.get("cost_usd"),
        models=tuple(data.get("models") or ()),
        duration_ms=data.get("duration_ms"),
        num_turns=data.get("num_turns"),
        exit_code=data.get("exit_code"),
        truncated=bool(data.get("truncated", False)),
        denials=_denials(data.get("denials")),
        refused_writes=tuple(data.get("refused_writes") or ()),
        hooks=_hooks(data.get("hooks")),
        mcp=McpServed.from_json(data.get("mcp")),
        mcp_connected=_names(data.get("mcp_connected")),
        turns=tuple(turn for turn in turns if turn is not None),
    )


def restore(run: StoredRun, workspace: Path) -> None:
    """Lay a stored run's changes over ``workspace`` (a fresh copy of the fixture with
    the variant's overlays): :func:`pytest_evalcases.run.changes.restore`."""
    changes.restore(run.changes, run.directory, workspace, run.directory / RUN_FILE)
