"""Agent drivers: one module per CLI behind the small protocol in :mod:`.base`.

Third-party drivers register a factory ``(AgentSettings) -> Agent`` under the entry
point group ``pytest_evalcases.agents``, or call :func:`register_agent` from a
``conftest.py`` or plugin.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

from pytest_evalcases.agents.base import Agent, AgentSettings
from pytest_evalcases.agents.claude import ClaudeAgent
from pytest_evalcases.agents.codex import CodexAgent
from pytest_evalcases.agents.command import CommandAgent
from pytest_evalcases.agents.gemini import GeminiAgent
from pytest_evalcases.errors import UsageError

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


def _load_entry_points() -> None:
    for ep in entry_points(group="pytest_evalcases.agents"):
        if ep.name not in _FACTORIES:
            _FACTORIES[ep.name] = ep.load()


def known_agents() -> list[str]:
    """Names accepted by ``--eval-agent``."""
    _load_entry_points()
    return sorted(_FACTORIES)


def make_agent(settings: AgentSettings) -> Agent:
    """Build the agent named in ``settings``; unknown names are a usage error."""
    _load_entry_points()
    factory = _FACTORIES.get(settings.name)
    if factory is None:
        raise UsageError(
            f"unknown agent {settings.name!r} (--eval-agent / eval_agent); "
            f"known: {', '.join(known_agents())}"
        )
    return factory(settings)
