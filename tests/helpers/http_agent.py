"""A third-party agent of a test's conftest whose driver talks HTTP to a model API: a
Python script (the test's own, ``http_agent.py`` beside the conftest) that the plugin
runs with ``$HTTP_AGENT_BASE_URL`` pointing at its recording proxy, whose upstream is
``$SCRIPTED_API`` (the scripted server of :mod:`tests.helpers.model_server`)."""

from __future__ import annotations

import pytest

#: The conftest registering agent ``http``: a run that exits non-zero is an
#: ``authentication`` error when the script said "bad key", else an ``agent`` error,
#: either as "the agent said: ..." with the script's stderr.
CONFTEST = """
import sys
from pathlib import Path

from pytest_evalcases.agents import register_agent
from pytest_evalcases.agents.base import AgentResult, Invocation, ModelAPI
from pytest_evalcases.errors import AgentError

AGENT = str(Path(__file__).parent / "http_agent.py")


class HttpAgent:
    name = "http"

    def __init__(self, settings):
        self.settings = settings

    def invocation(self, request):
        return Invocation((sys.executable, AGENT, request.prompt))

    def model_api(self, env):
        return ModelAPI(env["SCRIPTED_API"], "HTTP_AGENT_BASE_URL")

    def parse(self, result, request):
        if result.returncode:
            said = result.stderr.strip()
            kind = "authentication" if "bad key" in said else "agent"
            raise AgentError("the agent said: " + said, kind=kind)
        return AgentResult(text=result.stdout)


register_agent("http", HttpAgent)
"""


def install(pytester: pytest.Pytester, script: str) -> None:
    """The conftest of agent ``http`` and its ``script`` in ``pytester``'s directory."""
    pytester.makeconftest(CONFTEST)
    (pytester.path / "http_agent.py").write_text(script)
