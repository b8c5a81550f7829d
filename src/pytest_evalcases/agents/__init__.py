"""Agent drivers: one module per CLI behind the small protocol in :mod:`.base`.

Third-party drivers register a factory ``(AgentSettings) -> Agent`` under the entry
point group ``pytest_evalcases.agents``, or call :func:`register_agent` from a
``conftest.py`` or plugin.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points

from pytest_evalcases.agents.base import Agent, AgentSettings
from pytest_evalcases.agents.claude import ClaudeAgent
from pytest_evalcases.agents.codex import CodexAgent
from pytest_evalcases.agents.command import CommandAgent
from pytest_evalcases.agents.gemini import GeminiAgent
from pytest_evalcases.errors import UsageError
from pytest_evalcases.extensions import load_entry_point

AgentFactory = Callable[[AgentSettings], Agent]

_FACTORIES: dict[str, AgentFactory] = {
    "command": CommandAgent,
    "claude": ClaudeAgent,
    "codex": CodexAgent,
    "gemini": GeminiAgent,
}


def register_agent(name: str, factory: AgentFactory) -> None:
    """Make ``--eval-agent NAME`` use ``factory``; a later registration wins."""
    _FACTORIES[name] = factory


def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group="pytest_evalcases.agents")}


def known_agents() -> list[str]:
    """Names accepted by ``--eval-agent``."""
    return sorted({*_FACTORIES, *_entry_points()})


def make_agent(settings: AgentSettings) -> Agent:
    """Build the agent named in ``settings``; an unknown name, or an entry point that
    does not load, is a usage error. Only the named entry point is loaded: a broken
    one of another package never stands in the way."""
    factory = _FACTORIES.get(settings.name)
    if factory is None:
        ep = _entry_points().get(settings.name)
        if ep is None:
            raise UsageError(
                f"unknown agent {settings.name!r} (--eval-agent / eval_agent); "
                f"known: {', '.join(known_agents())}"
            )
        factory = _FACTORIES[settings.name] = load_entry_point(ep)
    return factory(settings)
