"""agents/base.py: the whole Agent protocol, the defaults of AgentBase, and a driver
written against the three members of earlier releases, adapted once when it is made."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from pytest_evalcases import process
from pytest_evalcases.agents import _FACTORIES, make_agent, register_agent
from pytest_evalcases.agents.base import (
    Adapted,
    AgentBase,
    AgentResult,
    AgentSettings,
    Invocation,
    ModelAPI,
    RunRequest,
    run_agent,
)
from pytest_evalcases.agents.claude import ClaudeAgent
from pytest_evalcases.agents.requirements import Requirements
from pytest_evalcases.run.agenthome import agent_home


class OldStyle:
    """A driver of the documented three-member protocol: a name, an invocation, a parse."""

    name = "old"

    def __init__(self, settings: AgentSettings) -> None:
        self.settings = settings

    def invocation(self, request: RunRequest) -> Invocation:
        return Invocation((sys.executable, "-c", "print('old says hi')"))

    def parse(self, result: process.ProcessResult, request: RunRequest) -> AgentResult:
        return AgentResult(text=result.stdout.strip(), exit_code=result.returncode)


class WithExtras(OldStyle):
    """An old-style driver with some of the optional members the plugin once probed."""

    name = "extras"
    tool_inputs = False
    requirements = Requirements(install="pip install extras", version=False)
    args = ("--yes",)
    continues = True

    def model_api(self, env: Mapping[str, str]) -> ModelAPI | None:
        return ModelAPI(env.get("EXTRAS_URL", "https://api.example"), "EXTRAS_URL")

    def isolate(self, root: Path, env: Mapping[str, str]) -> dict[str, str]:
        (root / "extras").mkdir()
        return {"EXTRAS_HOME": str(root / "extras")}


class Subclassed(AgentBase):
    """A driver of the whole protocol: only what it must say."""

    name = "sub"

    def invocation(self, request: RunRequest) -> Invocation:
        return Invocation(("true",))

    def parse(self, result: process.ProcessResult, request: RunRequest) -> AgentResult:
        return AgentResult(text="")


@pytest.fixture
def registered() -> Iterator[None]:
    """The drivers of this module, registered as a conftest registers its own."""
    register_agent("old", OldStyle)
    register_agent("extras", WithExtras)
    register_agent("sub", Subclassed)
    yield
    for name in ("old", "extras", "sub"):
        _FACTORIES.pop(name, None)


def request_in(tmp_path: Path) -> RunRequest:
    return RunRequest(
        prompt="p", workspace=tmp_path, bare=False, timeout=30, env={"PATH": "/usr/bin:/bin"}
    )


def test_a_subclass_of_the_base_gets_every_default(registered: None) -> None:
    agent = make_agent(AgentSettings("sub", args=("-v",)))

    assert isinstance(agent, Subclassed)
    assert (agent.requirements, agent.args, agent.tool_inputs, agent.has_home) == (
        None,
        ("-v",),
        True,
        False,
    )
    assert agent.model_api({"ANY": "thing"}) is None
    assert agent.home_paths({}) == ()
    assert agent.isolate(Path("/nowhere"), {}) == {}
    # No session to continue: a case with follow_ups is an error on it.
    assert agent.continues is False


def test_a_three_member_driver_is_adapted_and_runs(registered: None, tmp_path: Path) -> None:
    agent = make_agent(AgentSettings("old", args=("--given",)))

    assert isinstance(agent, Adapted)
    assert isinstance(agent.driver, OldStyle)
    assert agent.name == "old"
    # The defaults of the protocol, the settings' arguments among them (the pins).
    assert (agent.requirements, agent.args, agent.tool_inputs, agent.has_home) == (
        None,
        ("--given",),
        True,
        False,
    )
    assert agent.model_api({}) is None
    assert agent.home_paths({}) == ()
    assert agent.continues is False
    # Its own invocation and parse, through the runner's one way of running agents.
    assert run_agent(agent, request_in(tmp_path)).text == "old says hi"


def test_an_adapted_driver_keeps_the_optional_members_it_has(
    registered: None, tmp_path: Path
) -> None:
    agent = make_agent(AgentSettings("extras", args=("--given",)))

    assert isinstance(agent, Adapted)
    assert agent.tool_inputs is False
    assert agent.continues is True
    assert agent.requirements == Requirements(install="pip install extras", version=False)
    assert agent.args == ("--yes",)
    assert agent.model_api({"EXTRAS_URL": "http://127.0.0.1:9"}) == ModelAPI(
        "http://127.0.0.1:9", "EXTRAS_URL"
    )
    # Its isolate method gives it a fresh home per run, which goes when the run ends.
    assert agent.has_home
    with agent_home(agent, {}, "isolated") as (variables, writable):
        home = Path(variables["EXTRAS_HOME"])
        assert home.is_dir()
        assert writable == (home.parent,)
    assert not home.exists()


def test_the_built_in_drivers_subclass_the_base() -> None:
    claude = make_agent(AgentSettings("claude"))
    command = make_agent(AgentSettings("command", command="true"))

    assert isinstance(claude, ClaudeAgent)
    assert claude.has_home
    assert claude.requirements is not None
    assert isinstance(command, AgentBase)
    assert not isinstance(command, Adapted)
    assert not command.has_home


def test_the_base_cannot_be_made_without_invocation_and_parse() -> None:
    class Half(AgentBase):
        name = "half"

        def invocation(self, request: RunRequest) -> Invocation:
            return Invocation(("true",))

    with pytest.raises(TypeError, match="parse"):
        Half(AgentSettings("half"))  # type: ignore[abstract]
