"""MCP servers as the drivers see them (docs/mcp.md): the servers a run hands its CLI,
the MCP calls of a transcript, and what the case's mock servers saw.

Each CLI names an MCP tool its own way: Claude Code ``mcp__SERVER__TOOL``, Codex a
``mcp_tool_call`` item (the driver's tool name ``SERVER.TOOL``), Gemini CLI
``mcp_SERVER_TOOL``; :func:`transcript_calls` reads them back into :class:`McpCall`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class McpServer:
    """One stdio server a run gives its CLI, as ``.mcp.json`` describes one."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The server as ``.mcp.json``'s and Gemini CLI's ``mcpServers`` hold it."""
        return {"command": self.command, "args": list(self.args), "env": dict(self.env)}


@dataclass(frozen=True)
class McpCall:
    """One call of an MCP tool: the server, the tool and its input as compact JSON."""

    server: str
    tool: str
    input: str


@dataclass(frozen=True)
class McpServed:
    """What the case's mock servers saw in a run (docs/mcp.md, "What counts as a call"):
    the servers that listed their tools to the CLI, and every call they answered, per
    invocation of the agent."""

    #: The case's mock servers, by name.
    mocks: tuple[str, ...] = ()
    #: The mock servers that listed their tools: the CLI started them and asked.
    listed: tuple[str, ...] = ()
    #: The calls, one tuple per invocation of the agent (one for a single prompt).
    calls: tuple[tuple[McpCall, ...], ...] = ((),)

    @property
    def every_call(self) -> tuple[McpCall, ...]:
        """The calls of every invocation, in order."""
        return tuple(call for turn in self.calls for call in turn)

    def at_turn(self, number: int) -> McpServed:
        """What the mocks saw in invocation ``number`` of the agent (1 = the first): the
        turn of a conversation (docs/conversations.md)."""
        calls = self.calls[number - 1] if number <= len(self.calls) else ()
        return replace(self, calls=(calls,))

    def as_json(self) -> dict[str, Any]:
        """For the stored run (``run.json``)."""
        return {
            "mocks": list(self.mocks),
            "listed": list(self.listed),
            "calls": [
                [{"server": c.server, "tool": c.tool, "input": c.input} for c in turn]
                for turn in self.calls
            ],
        }

    @classmethod
    def from_json(cls, data: object) -> McpServed | None:
        """What :meth:`as_json` stored; ``None`` for a run that stored none."""
        if not isinstance(data, dict):
            return None
        return cls(
            mocks=tuple(str(name) for name in data.get("mocks") or ()),
            listed=tuple(str(name) for name in data.get("listed") or ()),
            calls=tuple(
                tuple(McpCall(str(c["server"]), str(c["tool"]), str(c["input"])) for c in turn)
                for turn in data.get("calls") or ((),)
            ),
        )


def transcript_calls(
    agent: str | None, calls: Sequence[Any], servers: Sequence[str] = ()
) -> tuple[McpCall, ...]:
    """The MCP calls among a transcript's tool calls (:class:`~.base.ToolCall`), as
    ``agent`` names them. A Gemini CLI name is split after the longest of ``servers``
    it starts with, else at its first ``_`` (a server name of the case has none)."""
    found = []
    for call in calls:
        parts = _split(agent, call.name, call.kind, servers)
        if parts is not None:
            found.append(McpCall(parts[0], parts[1], call.input))
    return tuple(found)


def _split(
    agent: str | None, name: str, kind: str, servers: Sequence[str]
) -> tuple[str, str] | None:
    if agent == "claude" and name.startswith("mcp__"):
        server, _, tool = name[len("mcp__") :].partition("__")
        return (server, tool) if tool else None
    if agent == "codex" and kind == "other" and "." in name:
        server, _, tool = name.partition(".")
        return server, tool
    if agent == "gemini" and name.startswith("mcp_"):
        rest = name[len("mcp_") :]
        known = [s for s in servers if rest.startswith(s + "_")]
        if known:
            server = max(known, key=len)
            return server, rest[len(server) + 1 :]
        server, _, tool = rest.partition("_")
        return (server, tool) if tool else None
    return None


def workspace_servers(path: Path, key: str = "mcpServers") -> dict[str, Mapping[str, Any]]:
    """The servers a workspace's JSON configuration names under ``key`` (``.mcp.json``);
    none when it is missing or not readable as such."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    servers = data.get(key) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}
    return {str(name): spec for name, spec in servers.items() if isinstance(spec, dict)}
