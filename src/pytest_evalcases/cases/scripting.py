"""The models of a case's ``script:`` (the scripted model's turns, docs/case-format.md)
and ``mcp:`` (its MCP servers, real or mock, docs/mcp.md)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pytest_evalcases.cases import limits
from pytest_evalcases.cases.fields import Regex, no_nul

#: The agents whose model the plugin can play (``script:``): those that reach it over HTTP.
SCRIPTED_AGENTS = ("claude", "codex", "gemini")


#: An MCP server's name: what all three CLIs can join into a tool's name (Claude Code
#: ``mcp__S__T``, Codex ``mcp__S__T``, Gemini CLI ``mcp_S_T``, which an ``_`` would make
#: ambiguous) (docs/mcp.md).
MCP_SERVER_NAME = r"^[A-Za-z0-9-]+$"
McpServerName = Annotated[str, Field(max_length=limits.ID_CHARS, pattern=MCP_SERVER_NAME)]
#: A mock tool's name, as the MCP specification's tool names go.
McpToolName = Annotated[
    str, Field(min_length=1, max_length=limits.ID_CHARS, pattern=r"^[A-Za-z0-9_-]+$")
]


class ScriptMcp(BaseModel):
    """The MCP tool a scripted turn calls (docs/mcp.md, "The scripted model")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    server: McpServerName
    tool: McpToolName


class McpMatch(BaseModel):
    """One answer of a mock tool: ``returns`` when ``match`` finds the call's input."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    _strings_without_nul = field_validator("*", mode="after")(no_nul)

    match: Regex = Field(description="A regular expression on the call's input, as compact JSON")
    returns: str = Field(max_length=limits.TEXT_CHARS)


class McpMockTool(BaseModel):
    """One tool of a mock MCP server (docs/mcp.md, "Mock servers")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    _strings_without_nul = field_validator("*", mode="after")(no_nul)

    description: str = Field(default="", max_length=limits.TEXT_CHARS)
    returns: str | list[McpMatch] = Field(
        description="The text every call gets, or a list of {match, returns}: the first "
        "whose match finds the call's input (none: an error result)",
    )


class McpMock(BaseModel):
    """A server the plugin serves over stdio, answering from ``tools``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tools: dict[McpToolName, McpMockTool] = Field(min_length=1, max_length=limits.TAGS)


class McpServerModel(BaseModel):
    """One server of the case's ``mcp:``: a real one (``command``, ``args``, ``env``, as
    in ``.mcp.json``) or a ``mock`` (docs/mcp.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    _strings_without_nul = field_validator("*", mode="after")(no_nul)

    command: str | None = Field(default=None, min_length=1, max_length=limits.PATH_CHARS)
    args: list[Annotated[str, Field(max_length=limits.TEXT_CHARS)]] = Field(
        default_factory=list, max_length=limits.TAGS
    )
    env: dict[str, str] = Field(default_factory=dict, max_length=limits.TAGS)
    mock: McpMock | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> McpServerModel:
        if (self.command is None) == (self.mock is None):
            raise ValueError("a server has exactly one of `command` or `mock`")
        if self.mock is not None and (self.args or self.env):
            raise ValueError("`args` and `env` go with `command`")
        return self


class ScriptTurn(BaseModel):
    """One turn of the scripted model (docs/case-format.md, `script`): a command for the
    CLI's shell tool, a call of a tool by the CLI's own name with its input, a call of an
    MCP server's tool with its input, or the text of an answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    _strings_without_nul = field_validator("*", mode="after")(no_nul)

    shell: str | None = Field(
        default=None,
        min_length=1,
        max_length=limits.TEXT_CHARS,
        description="A command the model runs with the CLI's own shell tool",
    )
    tool: str | None = Field(
        default=None,
        min_length=1,
        max_length=limits.LINE_CHARS,
        description="A tool the model calls, by the CLI's own name (Read, read_file, ...)",
    )
    mcp: ScriptMcp | None = Field(
        default=None,
        description="A tool of an MCP server the model calls, by the server's and the "
        'tool\'s names (docs/mcp.md, "The scripted model")',
    )
    input: dict[str, Any] | None = Field(
        default=None, description="With `tool` or `mcp`: the call's input, a mapping"
    )
    text: str | None = Field(
        default=None, max_length=limits.TEXT_CHARS, description="The model's answer"
    )

    @model_validator(mode="after")
    def _one_kind(self) -> ScriptTurn:
        kinds = ("shell", "tool", "mcp", "text")
        given = [name for name in kinds if getattr(self, name) is not None]
        if len(given) != 1:
            said = ", ".join(f"`{name}`" for name in given) or "none"
            raise ValueError(
                f"a turn has exactly one of `shell`, `tool`, `mcp` or `text` (got {said})"
            )
        if self.input is not None and self.tool is None and self.mcp is None:
            raise ValueError("`input` goes with `tool` or `mcp`")
        return self
