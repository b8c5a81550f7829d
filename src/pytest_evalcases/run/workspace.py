"""A fresh workspace per run: the fixture copied in, configuration overlaid, ``setup`` run.

The source fixture is only ever read. Workspaces live in pytest's temporary directory,
outside the user's repository, so agents that discover configuration by walking up
parent directories (Claude Code reads every CLAUDE.md up to ``/``) see only what the
case put there.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_evalcases import process
from pytest_evalcases.errors import SetupError
from pytest_evalcases.process import tail

DEFAULT_SETUP_TIMEOUT = 300.0


@dataclass(frozen=True)
class Overlay:
    """A file or directory laid over the workspace: a directory's contents land at
    ``dest`` (``""`` is the workspace root), a file lands at ``dest``."""

    source: Path
    dest: str = ""


@dataclass(frozen=True)
class Variant:
    """What differs between items of the same case: a graded directory or a config.

    ``name`` is ``""`` when there is a single, unnamed variant.
    """

    name: str = ""
    #: ``--eval-workspace``: grade this directory as it is, with no agent.
    graded_dir: Path | None = None
    #: ``--eval-config``: files laid over each workspace.
    overlays: tuple[Overlay, ...] = ()
    #: Human-readable origin, for reports ("git:main", a path).
    source: str = ""


def populate(workspace: Path, fixture: Path | None, overlays: Sequence[Overlay] = ()) -> None:
    """Copy the fixture into the (empty) workspace, then lay the overlays over it."""
    try:
        if fixture is not None:
            shutil.copytree(fixture, workspace, symlinks=True, dirs_exist_ok=True)
        for overlay in overlays:
            target = workspace / overlay.dest if overlay.dest else workspace
            if overlay.source.is_dir():
                shutil.copytree(overlay.source, target, symlinks=True, dirs_exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(overlay.source, target)
    except OSError as exc:
        raise SetupError(f"could not prepare the workspace {workspace}: {exc}") from None


def run_setup(
    workspace: Path, command: str, env: Mapping[str, str], timeout: float | None = None
) -> None:
    """Run the case's ``setup`` shell command; a non-zero exit is a :class:`SetupError`."""
    result = process.run(
        command,
        cwd=workspace,
        env=env,
        timeout=timeout or DEFAULT_SETUP_TIMEOUT,
        max_output=64 * 1024,
    )
    if result.timed_out:
        raise SetupError(f"setup timed out: `{command}`")
    if result.returncode != 0:
        output = tail(result.stderr) or tail(result.stdout) or "(no output)"
        raise SetupError(
            f"setup failed with exit status {result.returncode}: `{command}`\n{output}"
        )


def inside_git_repository(path: Path) -> bool:
    """Whether ``path`` or one of its parents holds a ``.git``."""
    return any((p / ".git").exists() for p in (path, *path.parents))
