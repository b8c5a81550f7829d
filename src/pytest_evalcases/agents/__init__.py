"""Agent drivers: one module per CLI behind the protocol in :mod:`.base`.

Third-party drivers register a factory ``(AgentSettings) -> Agent`` under the entry
point group ``pytest_evalcases.agents``, or call :func:`register_agent` from a
``conftest.py`` or plugin. What a factory makes is adapted to the whole protocol once,
here (:func:`~pytest_evalcases.agents.base.adapt`).

The built-in drivers are imported when their agent is made, not with the plugin: a
pytest run that names no agent (or another one) does not pay for them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING

from pytest_evalcases.errors import UsageError
from pytest_evalcases.extensions import load_entry_point

if TYPE_CHECKING:
    from pytest_evalcases.agents.base import Agent, AgentSettings, Driver

    AgentFactory = Callable[[AgentSettings], Driver]

#: The built-in drivers: agent name -> (module, factory), imported on first use.
_BUILTIN = {
    "command": ("pytest_evalcases.agents.command", "CommandAgent"),
    "claude": ("pytest_evalcases.agents.claude", "ClaudeAgent"),
    "codex": ("pytest_evalcases.agents.codex", "CodexAgent"),
    "gemini": ("pytest_evalcases.agents.gemini", "GeminiAgent"),
}

_FACTORIES: dict[str, AgentFactory] = {}


def register_agent(name: str, factory: AgentFactory) -> None:
    """Make ``--eval-agent NAME`` use ``factory``; a later registration wins."""
    _FACTORIES[name] = factory


def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group="pytest_evalcases.agents")}


def known_agents() -> list[str]:
    """Names accepted by ``--eval-agent``."""
    return sorted({*_BUILTIN, *_FACTORIES, *_entry_points()})


def make_agent(settings: AgentSettings) -> Agent:
    """Build the agent named in ``settings``; an unknown name, or an entry point that
    does not load, is a usage error. Only the named driver or entry point is loaded: a
    broken one of another package never stands in the way."""
    factory = _FACTORIES.get(settings.name)
    if factory is None and settings.name in _BUILTIN:
        # Looked up in sys.modules each time, not kept here: a host that drops the
        # modules a session imported (pytester's in-process runs) would otherwise pair
        # a stale driver class with fresh modules (its base class no longer the
        # adapter's).
        module, name = _BUILTIN[settings.name]
        factory = getattr(importlib.import_module(module), name)
    if factory is None:
        ep = _entry_points().get(settings.name)
        if ep is None:
            raise UsageError(
                f"unknown agent {settings.name!r} (--eval-agent / eval_agent); "
                f"known: {', '.join(known_agents())}"
            )
        factory = _FACTORIES[settings.name] = load_entry_point(ep)
    # Imported with the first agent, as the drivers are: a session that makes none
    # does not pay for the protocol's module.
    from pytest_evalcases.agents.base import adapt

    return adapt(factory(settings), settings)
