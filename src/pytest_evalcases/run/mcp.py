"""The MCP servers of one run (docs/mcp.md): the case's ``mcp:`` as the servers the
driver hands its CLI, its mock servers' specs and log in a directory of the run's own
(writable in the sandbox, never the workspace), and what the mocks saw when the run
ends. Plain Python, no pytest."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_evalcases import mcpmock
from pytest_evalcases.agents.base import Agent, AgentResult
from pytest_evalcases.agents.mcp import McpCall, McpServed, McpServer
from pytest_evalcases.cases.loading import LoadedCase
from pytest_evalcases.errors import RunError
from pytest_evalcases.kinds import AgentHome
from pytest_evalcases.run.agenthome import private_dir

#: The mock servers' log, in the run's MCP directory.
LOG_NAME = "mock-calls.jsonl"


@dataclass(frozen=True)
class McpRun:
    """The MCP servers of one run: what the driver hands its CLI, the paths the agent
    must be able to write besides its workspace, and the log of the mock servers."""

    servers: tuple[McpServer, ...] = ()
    writable: tuple[Path, ...] = ()
    #: The log of the mock servers; ``None`` when the case has none.
    log: Path | None = None
    #: The names of the case's mock servers.
    mocks: tuple[str, ...] = ()

    def begin(self, invocation: int) -> None:
        """Mark the start of the agent's invocation ``invocation`` (1 = the first) in the
        mocks' log: the calls that follow are that invocation's."""
        if self.log is not None:
            mcpmock.mark_invocation(self.log, invocation)

    def served(self) -> McpServed | None:
        """What the mock servers saw, per invocation; ``None`` without a mock."""
        if self.log is None:
            return None
        listed: list[str] = []
        turns: list[list[McpCall]] = []
        for line in mcpmock.read_log(self.log):
            if line.event == mcpmock.INVOCATION or not turns:
                turns.append([])
            if line.event == mcpmock.LIST and line.server not in listed:
                listed.append(line.server)
            elif line.event == mcpmock.CALL:
                turns[-1].append(McpCall(line.server, line.tool, line.input))
        calls = tuple(tuple(turn) for turn in turns) or ((),)
        return McpServed(self.mocks, tuple(listed), calls)

    def attach(self, result: AgentResult) -> AgentResult:
        """``result`` with what the mock servers saw."""
        served = self.served()
        if served is None:
            return result
        return replace(result, mcp=served)


@contextmanager
def mcp_run(
    case: LoadedCase, agent: Agent, mode: AgentHome, home_env: Mapping[str, str]
) -> Iterator[McpRun]:
    """The MCP servers of ``case`` for one run of ``agent``: a real server as the case
    gives it, a mock as the plugin's :mod:`~pytest_evalcases.mcpmock` run by the plugin's
    own interpreter. The mocks' directory goes when the run ends. A case with ``mcp:``
    whose agent cannot be given servers, or only in a home of its own that
    ``eval_agent_home = inherit`` has none of, is an error of kind ``case``."""
    if not case.mcp:
        yield McpRun()
        return
    where = f"{case.file}:{case.line + 1}"
    if agent.mcp_config is None:
        raise RunError(
            f"{where}: `mcp:` gives MCP servers to claude, codex and gemini only, and this "
            f"run's agent is {agent.name!r} (docs/mcp.md)",
            kind="case",
        )
    if agent.mcp_config == "home" and (mode == "inherit" or not home_env):
        raise RunError(
            f"{where}: `mcp:` with eval_agent_home = inherit: the {agent.name} agent reads "
            "MCP servers from its home's settings only, and the plugin never writes into "
            "the operator's (docs/mcp.md)",
            kind="case",
        )
    directory = private_dir("mcp-")
    try:
        log = directory / LOG_NAME
        servers = []
        for name, model in case.mcp:
            if model.mock is None:
                assert model.command is not None
                servers.append(
                    McpServer(name, model.command, tuple(model.args), tuple(model.env.items()))
                )
                continue
            spec = directory / f"{name}.json"
            tools = {tool: entry.model_dump() for tool, entry in model.mock.tools.items()}
            spec.write_text(json.dumps({"server": name, "log": str(log), "tools": tools}), "utf-8")
            program, *args = mcpmock.command(spec)
            servers.append(McpServer(name, program, tuple(args)))
        mocks = tuple(name for name, model in case.mcp if model.mock is not None)
        if agent.mcp_config == "home":
            agent.write_mcp(home_env, servers)
        yield McpRun(tuple(servers), (directory,), log if mocks else None, mocks)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
