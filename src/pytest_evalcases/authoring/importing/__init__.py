"""The saved sessions of the agent CLIs, read for ``evalcases import``: one reader per
CLI, each turning its file into a :class:`~.session.Session` (docs/writing-cases.md,
"From an incident")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytest_evalcases.authoring.importing import claude, codex, gemini
from pytest_evalcases.authoring.importing.session import Session
from pytest_evalcases.kinds import SessionCli

READERS: dict[SessionCli, Callable[[Path], Session]] = {
    "claude": claude.read,
    "codex": codex.read,
    "gemini": gemini.read,
}


def read(cli: SessionCli, path: Path) -> Session:
    """The session saved by ``cli`` in ``path``."""
    return READERS[cli](path)
