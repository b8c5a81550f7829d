"""A fresh workspace per run: the fixture copied in, configuration overlaid, ``setup`` run.

The source fixture is only ever read. Workspaces live in a temporary directory of the
session (:class:`WorkspaceDirs`), outside the user's repository, so agents that discover
configuration by walking up parent directories (Claude Code reads every CLAUDE.md up to
``/``) see only what the case put there (docs/agents.md).
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_evalcases import defaults, process
from pytest_evalcases.errors import RunError, SetupError
from pytest_evalcases.sandbox import Sandbox

#: The prefix of the session directories below the system's temporary directory.
SESSION_PREFIX = "session-"
#: A session directory touched this recently may belong to a process still running.
IN_USE_SECONDS = 3600.0


@dataclass(frozen=True)
class Overlay:
    """A file or directory laid over the workspace: a directory's contents land at
    ``dest`` (``""`` is the workspace root), a file lands at ``dest``."""

    source: Path
    dest: str = ""


@dataclass(frozen=True)
class Variant:
    """What differs between items of the same case: a graded directory, or a
    configuration, an agent, a model and the agent's arguments.

    ``name`` is ``""`` when there is a single, unnamed variant.
    """

    name: str = ""
    #: ``--eval-workspace``: grade this directory as it is, with no agent.
    graded_dir: Path | None = None
    #: ``--eval-config``: files laid over each workspace.
    overlays: tuple[Overlay, ...] = ()
    #: Human-readable origin, for reports ("git:main", a path).
    source: str = ""
    #: ``--eval-variant``'s other factors (docs/variants.md); ``None``: the session's
    #: own (``--eval-agent``, ``--eval-model``, ``eval_agent_args``).
    agent: str | None = None
    model: str | None = None
    args: tuple[str, ...] | None = None


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


#: What :func:`snapshot` keeps of an entry: mode, size, modification time, link target.
EntryState = tuple[int, int, int, str]


def snapshot(workspace: Path) -> dict[str, EntryState] | None:
    """The workspace's entries by relative path, links not followed: two snapshots
    differ when a run created, deleted, wrote or touched anything in it (``.git``
    included: a commit changes nothing else). Entries that cannot be read are left out.
    ``None`` when it holds more than :data:`~pytest_evalcases.defaults.WORKSPACE_MAX_ENTRIES`
    entries: the walk stops there, so that an agent's 300,000 files cost no more than
    that many (docs/replay.md, "What else is stored")."""
    limit = defaults.WORKSPACE_MAX_ENTRIES
    state: dict[str, EntryState] = {}
    # One scandir and one lstat an entry, each directory with its path relative to the
    # workspace: os.walk's joins and checks cost a third of the walk.
    todo = [("", os.fspath(workspace))]
    while todo:
        prefix, top = todo.pop()
        try:
            with os.scandir(top) as listing:
                entries = list(listing)
        except OSError:
            continue
        if len(state) + len(entries) > limit:
            return None
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
                target = os.readlink(entry.path) if stat.S_ISLNK(st.st_mode) else ""
            except OSError:
                continue
            rel = prefix + entry.name
            state[rel] = (st.st_mode, st.st_size, st.st_mtime_ns, target)
            if stat.S_ISDIR(st.st_mode):
                todo.append((rel + os.sep, entry.path))
    return state


def run_setup(
    workspace: Path,
    command: str,
    env: Mapping[str, str],
    timeout: float | None = None,
    sandbox: Sandbox | None = None,
    *,
    limited_by: str = "",
) -> None:
    """Run the case's ``setup`` shell command, in ``sandbox`` when given (writing only
    to the workspace); a non-zero exit is a :class:`SetupError`. ``limited_by`` says
    which limit outside the case set ``timeout``: running out of it is then a
    ``timeout`` :class:`RunError` that says so."""
    args: Sequence[str] | str = command
    if sandbox is not None:
        args = sandbox.wrap(
            command, cwd=workspace, writable=(workspace,), network=sandbox.network == "shared"
        )
    result = process.run(
        args,
        cwd=workspace,
        env=env,
        timeout=timeout or defaults.SETUP_TIMEOUT,
        max_output=64 * 1024,
        sweep=True,
    )
    if result.timed_out and limited_by:
        raise RunError(f"setup timed out: `{command}`: {limited_by}", kind="timeout")
    if result.timed_out:
        raise SetupError(f"setup timed out: `{command}`")
    if result.returncode != 0:
        output = result.said()
        raise SetupError(
            f"setup failed ({process.exit_status(result.returncode)}): `{command}`\n{output}"
        )


#: The instruction files agents read from the directories above their working directory
#: (docs/agents.md): Claude Code every CLAUDE.md up to ``/``, Codex and Gemini CLI theirs
#: up to a project root.
INSTRUCTION_FILES = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/CLAUDE.md",
    "AGENTS.md",
    "AGENTS.override.md",
    "GEMINI.md",
)


def _is_repository(directory: str) -> bool:
    """Whether git takes ``directory`` for the top of a work tree: a ``.git`` file (a
    worktree's or a submodule's link) or a ``.git`` directory with a ``HEAD``. An empty
    ``.git`` directory is none: Codex's own sandbox makes one in each directory it lets
    the agent write (``/tmp`` among them) to mount over while it runs, and git looks
    past it. (Codex's search for a project root may stop at it; the instruction files of
    every directory above are checked whatever the root.)"""
    git = f"{directory}/.git"
    return os.path.isfile(git) or os.path.exists(f"{git}/HEAD")


def inherited_configuration(path: Path) -> str | None:
    """Why an agent working in ``path`` would read configuration from around it (a git
    repository it is in, an instruction file in a directory above it), or ``None``."""
    # Plain strings: a workspace is made for every run, and the Path objects of some
    # forty look-ups cost more than the look-ups.
    here = str(path)
    parents = [str(parent) for parent in path.parents]
    repository = next((p for p in (here, *parents) if _is_repository(p)), None)
    if repository is not None:
        return f"it is inside the git repository {repository}"
    # The workspace's own files are the case's: only the directories above it count.
    above = (os.path.join(p, name) for p in parents for name in INSTRUCTION_FILES)
    found = next((file for file in above if os.path.isfile(file)), None)
    return None if found is None else f"agents would also read {found}"


class WorkspaceDirs:
    """Where one process makes the workspaces of its runs: a fresh directory each.

    ``mktemp`` is pytest's own (``tmp_path_factory.mktemp``), so that workspaces live in
    pytest's temporary directory with its retention policy, ``--basetemp`` included.
    Without it, or when it returns ``None`` (pytest's tmpdir plugin disabled), they go
    in a numbered session directory of our own, ``evalcases-of-USER/session-N`` below
    the system's temporary directory, of which the newest ``keep`` are kept. Never inside
    a git repository and never below an agent's instruction file (:data:`INSTRUCTION_FILES`):
    agents read configuration from parent directories, so a workspace there falls back to
    the session directory, and where that is no better the run is a setup error.
    """

    def __init__(
        self,
        mktemp: Callable[[str], Path | None] | None = None,
        *,
        keep: int = 3,
        temproot: Path | None = None,
    ) -> None:
        self.mktemp = mktemp
        self.keep = keep
        self.temproot = temproot
        self._root: Path | None = None

    def new(self, label: str) -> Path:
        """A new, empty directory named after ``label``: ``LABEL0``, ``LABEL1``, ..."""
        prefix = _safe(label)
        path = self.mktemp(prefix) if self.mktemp is not None else None
        if path is not None:
            if inherited_configuration(path) is None:
                return path
            path.rmdir()
        for _ in range(1000):
            number = 1 + max(_numbers(self.root, prefix), default=-1)
            path = self.root / f"{prefix}{number}"
            try:
                path.mkdir(mode=0o700)
            except FileExistsError:
                # Another process of the session took the number first.
                continue
            inherited = inherited_configuration(path)
            if inherited is not None:
                path.rmdir()
                raise SetupError(
                    f"no workspace can be made where only the case's configuration is"
                    f" read: in {path.parent}, {inherited}; set TMPDIR to a directory"
                    " outside any git repository and with no CLAUDE.md, AGENTS.md or"
                    " GEMINI.md above it (docs/agents.md#where-workspaces-live)"
                )
            return path
        raise SetupError(f"could not make a workspace for {label!r} in {self.root}")

    @property
    def root(self) -> Path:
        """The session directory of our own (made on first use)."""
        if self._root is None:
            self._root = self._new_session()
        return self._root

    def _new_session(self) -> Path:
        temproot = (self.temproot or Path(tempfile.gettempdir())).resolve()
        parent = temproot / f"evalcases-of-{_user()}"
        parent.mkdir(mode=0o700, exist_ok=True)
        while True:
            number = 1 + max(_numbers(parent, SESSION_PREFIX), default=-1)
            session = parent / f"{SESSION_PREFIX}{number}"
            try:
                session.mkdir(mode=0o700)
            except FileExistsError:
                continue
            break
        recent = time.time() - IN_USE_SECONDS
        for old in sorted(_numbers(parent, SESSION_PREFIX))[: -self.keep or None]:
            path = parent / f"{SESSION_PREFIX}{old}"
            # Another process (an xdist worker, a second pytest) may still be using a
            # recent one: only sessions idle for a while go.
            if old != number and _mtime(path) < recent:
                shutil.rmtree(path, ignore_errors=True)
        return session


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return float("inf")


def _numbers(directory: Path, prefix: str) -> list[int]:
    """The N of the ``PREFIXN`` entries of ``directory``."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)\Z")
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return [int(m.group(1)) for m in map(pattern.match, names) if m]


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", label)[:60] or "case"


def _user() -> str:
    try:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", getpass.getuser()) or "unknown"
    except (ImportError, KeyError, OSError):
        return "unknown"
