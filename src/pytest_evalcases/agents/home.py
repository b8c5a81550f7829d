"""The agent's own home, fresh and empty for every run (docs/agents.md, "The agent's home").

A coding-agent CLI reads the operator's personal configuration from a directory of its
own (Claude Code ``~/.claude``, Codex ``~/.codex``, Gemini CLI ``~/.gemini``): personal
instructions, settings, hooks, skills, memories. A verdict must not depend on them, so
each run points the CLI at a new directory that holds copies of the operator's
credential files and nothing else but what its driver adds (Gemini: the operator's
choice of authentication). The drivers say which variable names the directory and which
files are credentials; this module makes it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Home:
    """Where a CLI keeps its user-level configuration, and what of it is credentials."""

    #: The environment variable that moves the directory (``CLAUDE_CONFIG_DIR``, ...).
    variable: str
    #: The directory the CLI uses when the variable is unset, below ``$HOME``.
    default: str
    #: The files of it that are credentials, copied into the fresh home.
    credentials: Sequence[str]
    #: The configuration directory is this subdirectory of the variable's value
    #: (Gemini CLI: ``$GEMINI_CLI_HOME/.gemini``); empty when it is the value itself.
    subdir: str = ""
    #: Files the CLI also writes in ``$HOME`` when the variable is unset (Claude Code:
    #: ``~/.claude.json``).
    beside: Sequence[str] = ()


def source_dir(home: Home, env: Mapping[str, str]) -> Path:
    """The operator's configuration directory of this CLI, as ``env`` says."""
    given = env.get(home.variable)
    if given:
        return Path(given).expanduser() / home.subdir
    return Path(env.get("HOME") or Path.home()).expanduser() / home.default


def own_paths(home: Home, env: Mapping[str, str]) -> tuple[Path, ...]:
    """What the CLI writes of the operator's own home (``eval_agent_home = inherit``):
    writable in a sandbox, where the rest of ``$HOME`` is not."""
    paths = [source_dir(home, env)]
    if not env.get(home.variable):
        user_home = Path(env.get("HOME") or Path.home()).expanduser()
        paths += [user_home / name for name in home.beside]
    return tuple(paths)


def make(home: Home, root: Path, env: Mapping[str, str]) -> tuple[dict[str, str], Path]:
    """A fresh home in ``root`` with copies of the credential files: the environment
    variables that point the CLI at it, and its configuration directory."""
    source = source_dir(home, env)
    value = root / home.variable.lower()
    config = value / home.subdir
    config.mkdir(parents=True, exist_ok=True)
    for name in home.credentials:
        found = source / name
        if found.is_file():
            shutil.copy2(found, config / name)
            (config / name).chmod(0o600)
    return {home.variable: str(value)}, config


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``, or ``{}`` when it is missing or not an object."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
