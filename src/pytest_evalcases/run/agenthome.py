"""The agent's home for one run: a fresh one made from the operator's credentials, or
the operator's own (docs/agents.md, "The agent's home"). The drivers say what a home
holds (:mod:`pytest_evalcases.agents.home`); this module makes it and removes it."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from pytest_evalcases.agents.base import Agent
from pytest_evalcases.errors import SetupError
from pytest_evalcases.kinds import AgentHome


@contextmanager
def agent_home(
    agent: Agent, env: Mapping[str, str], mode: AgentHome
) -> Iterator[tuple[dict[str, str], tuple[Path, ...]]]:
    """The environment variables that give ``agent`` a fresh home of its own for one run
    (none with ``inherit``, or for an agent that keeps no home), and the paths of the
    home the agent writes to (in a sandbox they are writable). The home holds copies of
    credentials: it goes when the run ends, whatever its outcome."""
    if mode == "inherit" or not agent.has_home:
        yield {}, agent.home_paths(env)
        return
    root = private_dir()
    try:
        try:
            variables = dict(agent.isolate(root, env))
        except OSError as exc:
            raise SetupError(f"could not make the agent's home in {root}: {exc}") from None
        yield variables, (root,)
    finally:
        shutil.rmtree(root, ignore_errors=True)


#: Seconds after which a home left behind (its run was killed) is removed.
STALE_HOME_SECONDS = 24 * 3600


def private_dir(prefix: str = "home-") -> Path:
    """A new, private directory for one agent home (or another directory of one run the
    agent writes to, such as its MCP servers' log): below the user's cache directory
    (``$XDG_CACHE_HOME/pytest-evalcases/agent-homes``), not the system's temporary one,
    where Codex refuses to set up its own sandbox's helpers. Homes that a killed run
    left behind for a day go. The system's temporary directory when the cache is not
    writable."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parent = cache / "pytest-evalcases" / "agent-homes"
    try:
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _remove_stale(parent)
        return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    except OSError:
        return Path(tempfile.mkdtemp(prefix=f"evalcases-{prefix}"))


def _remove_stale(parent: Path) -> None:
    old = time.time() - STALE_HOME_SECONDS
    for entry in os.scandir(parent):
        try:
            if entry.stat(follow_symlinks=False).st_mtime < old:
                shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue
