"""The agent protocol: how a CLI is invoked for one run and how its output is read.

An agent has a ``name``, an :meth:`Agent.invocation` that builds the command line for a
run, and an :meth:`Agent.parse` that turns the finished process into an
:class:`AgentResult` or raises :class:`~pytest_evalcases.errors.AgentError`; the rest of
the protocol has defaults in :class:`AgentBase`.
:func:`run_agent` does the rest (process group, timeout, missing binary), the same for
every agent.
"""

from __future__ import annotations

import abc
import dataclasses
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pytest_evalcases import containment, process
from pytest_evalcases.agents.mcp import McpServed, McpServer
from pytest_evalcases.agents.requirements import Requirements
from pytest_evalcases.errors import AgentError
from pytest_evalcases.kinds import ModelDialect, Spent
from pytest_evalcases.process import tail as tail  # docs/agents.md imports it from here
from pytest_evalcases.redact import shorten
from pytest_evalcases.sandbox import Sandbox

#: Canonical tool kinds every driver assigns, so tool checks hold across agents.
TOOL_KINDS = ("shell", "read", "write", "edit", "search", "web", "other")


@dataclass(frozen=True)
class ToolCall:
    """One tool call in an agent's transcript.

    ``input`` is the most telling text of the call's input: the shell command for shell
    tools, otherwise the input serialised as compact JSON.
    """

    name: str
    kind: str
    input: str


#: What refused a tool call: the agent's permission rules, or a hook (docs/agents.md,
#: "Refused tool calls").
Blocker = Literal["permission", "hook"]


@dataclass(frozen=True)
class Denial:
    """A tool call the CLI refused to run, named as :class:`ToolCall` names calls.

    ``by`` is what refused it, where the CLI's output says; ``None`` where it does not
    (docs/agents.md, "Refused tool calls").
    """

    name: str
    kind: str
    input: str
    by: Blocker | None = None

    @property
    def shown(self) -> str:
        """The call as reports name it: ``TOOL: input`` (``TOOL`` without an input)."""
        return f"{self.name}: {self.input}" if self.input else self.name

    @property
    def named(self) -> str:
        """The call and, where known, what refused it: ``Bash: git push (by hook)``."""
        return self.shown + (f" (by {self.by})" if self.by else "")


@dataclass(frozen=True)
class RequestPart:
    """One part of a model request as the model saw it: ``system prompt``, ``tools`` (a
    line ``NAME: description`` per tool) or ``message N (ROLE)`` (its texts, tool calls
    and tool results, each beginning a line of its own) (docs/case-format.md, "What a
    request check reads")."""

    name: str
    text: str


@dataclass(frozen=True)
class ModelRequest:
    """One request the CLI sent its model, as the request checks read it: its parts in
    order, or why its text is not known."""

    parts: tuple[RequestPart, ...] = ()
    #: Why the request's text is not known (a recording that left its body out); empty
    #: when it is.
    unreadable: str = ""
    #: The turn of the run's conversation it was sent in (docs/conversations.md).
    turn: int = 1

    @property
    def text(self) -> str:
        """The parts, one after the other, each beginning a line of its own: what a
        pattern is searched in."""
        return "\n".join(part.text for part in self.parts)


@dataclass(frozen=True)
class HookRun:
    """One hook the CLI ran, as its output shows it (docs/config-contract.md, "Hooks and
    refusals: what each CLI shows").

    ``command`` is the hook's command where the output names it, ``None`` where it
    names the hook otherwise (Claude Code: ``name``, the event and the tool,
    ``PreToolUse:Bash``). ``blocked`` says that the hook refused what it was asked
    about: the tool call, the prompt, the stop.
    """

    event: str
    command: str | None = None
    name: str = ""
    blocked: bool = False

    @property
    def shown(self) -> str:
        """The hook as reports name it: ``EVENT: command``, else the CLI's name for it."""
        return (
            f"{self.event}: {self.command}" if self.command is not None else self.name or self.event
        )


@dataclass(frozen=True)
class Usage:
    """Token counts of a run; ``None`` where the agent does not report them."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None

    def spent(self, cost_usd: float | None) -> Spent:
        """These tokens and ``cost_usd`` as what a run reported spending."""
        return Spent(self.input_tokens, self.output_tokens, cost_usd)


@dataclass(frozen=True)
class AgentResult:
    """Everything the plugin keeps of one agent run."""

    text: str
    #: Ordered tool calls, or ``None`` when the agent produced no transcript.
    tool_calls: tuple[ToolCall, ...] | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    models: tuple[str, ...] = ()
    duration_ms: int | None = None
    num_turns: int | None = None
    exit_code: int | None = None
    #: True when stdout or stderr was longer than the cap and was cut.
    truncated: bool = False
    #: Tool calls the CLI refused (its permission rules, a hook); ``None`` when its
    #: output cannot show refusals.
    denials: tuple[Denial, ...] | None = None
    #: Paths outside the workspace the sandbox refused to let the agent write, as its
    #: output and transcript name them (docs/sandbox.md).
    refused_writes: tuple[str, ...] = ()
    #: The hooks the CLI ran, in order; ``None`` when its output cannot show them, or
    #: the run did not ask it to (:attr:`RunRequest.hook_events`).
    hooks: tuple[HookRun, ...] | None = None
    #: The session the CLI reported (its id, to continue it with a follow-up prompt);
    #: ``None`` where its output names none (docs/conversations.md).
    session: str | None = None
    #: A conversation's turns, each what its prompt produced, in order; empty for a run
    #: of one prompt. The run's own fields are then their totals (docs/conversations.md).
    turns: tuple[AgentResult, ...] = ()
    #: What the case's mock MCP servers saw (docs/mcp.md); ``None`` in a run without one.
    mcp: McpServed | None = None
    #: The MCP servers the CLI says it connected to as it started; ``None`` where its
    #: output does not say (docs/mcp.md, "The checks").
    mcp_connected: tuple[str, ...] | None = None

    @property
    def spent(self) -> Spent:
        """The tokens and cost the run reported."""
        return self.usage.spent(self.cost_usd)

    def turn(self, number: int | None) -> AgentResult:
        """What turn ``number`` (1 = the case's ``prompt``) produced; the whole run for
        ``None`` or a run of one prompt."""
        if number is None or not self.turns:
            return self
        return self.turns[number - 1]


@dataclass(frozen=True)
class AgentSettings:
    """How the user configured the agent (command-line options and ini values)."""

    name: str
    args: tuple[str, ...] = ()
    command: str | None = None
    model: str | None = None
    #: Ask for a transcript of tool calls even when no case checks tools.
    transcript: bool = False
    #: The ``command`` agent writes its trajectory in ATIF to ``$EVALCASES_TRAJECTORY``
    #: (ini ``eval_agent_trajectory``; docs/trajectories.md).
    trajectory: bool = False
    #: Placeholders available in ``eval_agent_command`` besides ``{prompt}``.
    placeholders: Mapping[str, str] = field(default_factory=dict)


#: What a timeout message suggests when the case's own limit ran out.
TIMEOUT_HINT = "raise `timeout:` on the case, or --eval-timeout / eval_timeout"


@dataclass(frozen=True)
class RunRequest:
    """One run of one case: what the agent is asked to do, and where."""

    prompt: str
    workspace: Path
    bare: bool
    timeout: float
    env: Mapping[str, str]
    #: The case has a tool check, so the agent must produce a transcript.
    needs_transcript: bool = False
    #: Where the agent runs (docs/sandbox.md), and what it may write besides the
    #: workspace (its home).
    sandbox: Sandbox = field(default_factory=Sandbox)
    writable: tuple[Path, ...] = ()
    #: What the timeout message suggests: the limit that ``timeout`` came from.
    timeout_hint: str = TIMEOUT_HINT
    #: The base URL of the model API the CLI must use (the recording proxy's), for a
    #: driver that passes it on the command line; ``None``: the CLI's own.
    base_url: str | None = None
    #: The scripted model answers at ``base_url`` (docs/config-contract.md): a driver
    #: whose CLI would send a login of the operator's there sends its stand-in key.
    scripted: bool = False
    #: The case checks the hooks that ran, or tells refusals by permission rules from
    #: refusals by hooks: the driver asks its CLI to show its hooks (Claude Code's
    #: ``--include-hook-events``, Gemini CLI's ``--debug``).
    hook_events: bool = False
    #: The session of a conversation (docs/conversations.md): the id its first turn
    #: starts it with (a CLI that takes one), then the id the CLI reported; ``None``:
    #: a run of one prompt, which names no session.
    session: str | None = None
    #: This prompt is a follow-up: the run continues :attr:`session` rather than
    #: starting it.
    follow_up: bool = False
    #: The tokens the conversation's earlier turns reported, for a CLI that reports a
    #: session's usage so far rather than its turn's (Codex) to subtract.
    earlier: Usage = field(default_factory=Usage)
    #: The case's MCP servers (docs/mcp.md): the driver hands them to its CLI, besides
    #: the workspace's own with ``bare`` false, and keeps the operator's out.
    mcp_servers: tuple[McpServer, ...] = ()
    #: Where the agent writes its trajectory in ATIF, for a driver that reads one
    #: (:attr:`Agent.trajectory`); ``None``: nowhere (docs/trajectories.md).
    trajectory: Path | None = None


#: How a driver hands a run's MCP servers to its CLI: on the command line (``flags``),
#: or in the run's own home, which ``eval_agent_home = inherit`` has none of (``home``).
McpConfig = Literal["flags", "home"]


@dataclass(frozen=True)
class ModelAPI:
    """How a CLI reaches its model API over HTTP, for the recording proxy
    (docs/replay.md, "Recording"): where its requests would go, and how it is told to
    send them elsewhere."""

    #: The API's base URL for this run: the one the environment names, else the CLI's
    #: default (``https://api.anthropic.com``).
    upstream: str
    #: The environment variable the CLI reads its base URL from; empty when the driver
    #: passes it on the command line instead (:attr:`RunRequest.base_url`).
    variable: str = ""
    #: The API it speaks, in which the scripted model answers it (docs/config-contract.md).
    dialect: ModelDialect = "anthropic"


@dataclass(frozen=True)
class Invocation:
    """A command line to run, with optional standard input."""

    argv: tuple[str, ...]
    stdin: str | None = None
    #: Variables the driver sets in the run's environment, over the request's.
    env: tuple[tuple[str, str], ...] = ()


class Driver(Protocol):
    """What every agent driver says: its name, its command line, how its output reads.
    The whole protocol of earlier releases; :func:`adapt` makes the rest."""

    name: str

    def invocation(self, request: RunRequest) -> Invocation:
        """The command line for this run."""

    def parse(self, result: process.ProcessResult, request: RunRequest) -> AgentResult:
        """Read the finished process; raise ``AgentError`` when there is no verdict."""


class Agent(Driver, Protocol):
    """What an agent driver provides (docs/agents.md, "Adding your own agent").

    A driver subclasses :class:`AgentBase`, which gives every member but ``name``,
    :meth:`invocation` and :meth:`parse` its default. A driver written against the
    three members of earlier releases is adapted once, when it is made
    (:func:`adapt`)."""

    #: What the CLI needs before it can run a case, checked once per session;
    #: ``None``: the program only (docs/agents.md, "Before the first run").
    requirements: Requirements | None
    #: The arguments the CLI runs with, the driver's default permissions included: the
    #: results file's pins record them.
    args: tuple[str, ...]
    #: Whether tool calls carry their inputs; ``False``: names only, and a tool check
    #: with ``input:`` cannot be graded.
    tool_inputs: bool
    #: Whether the CLI keeps a user-level home of its own, which :meth:`isolate`
    #: replaces for each run (docs/agents.md, "The agent's home").
    has_home: bool
    #: Whether a follow-up prompt can continue the session of an earlier run
    #: (:attr:`RunRequest.follow_up`); ``False``: a case with ``follow_ups`` is an
    #: error on this agent (docs/conversations.md).
    continues: bool
    #: How the driver gives its CLI a case's MCP servers; ``None``: it cannot (docs/mcp.md).
    mcp_config: McpConfig | None
    #: Whether the agent's output can show its tool calls; ``False``: a case whose
    #: checks read them is an error before the agent runs (docs/trajectories.md).
    transcript: bool
    #: Whether the agent writes its trajectory in ATIF, which the driver reads for its
    #: tool calls: each run is given a :attr:`RunRequest.trajectory` path.
    trajectory: bool

    def model_api(self, env: Mapping[str, str]) -> ModelAPI | None:
        """The model API the CLI talks to over HTTP in ``env``, for the recording proxy;
        ``None`` when it reaches its model otherwise here (Bedrock, Vertex AI)."""

    def home_paths(self, env: Mapping[str, str]) -> tuple[Path, ...]:
        """The operator's own home that the CLI writes to (``eval_agent_home =
        inherit``): writable in the sandbox."""

    def isolate(self, root: Path, env: Mapping[str, str]) -> Mapping[str, str]:
        """The variables that point the CLI at a fresh home made in ``root``."""

    def write_mcp(self, home_env: Mapping[str, str], servers: Sequence[McpServer]) -> None:
        """Add ``servers`` to the run's own home that ``home_env`` points at."""


class AgentBase(abc.ABC):
    """The defaults of the :class:`Agent` protocol, for a driver to subclass: no
    requirements but the program, the settings' arguments, tool calls with inputs, no
    model API the proxy can record, no home of its own, and no session to continue."""

    name: str
    requirements: Requirements | None = None
    tool_inputs: bool = True
    has_home: bool = False
    continues: bool = False
    #: How the driver gives its CLI a case's MCP servers; ``None``: it cannot.
    mcp_config: McpConfig | None = None
    transcript: bool = True
    trajectory: bool = False

    def __init__(self, settings: AgentSettings) -> None:
        self.settings = settings
        self.args: tuple[str, ...] = tuple(settings.args)

    @abc.abstractmethod
    def invocation(self, request: RunRequest) -> Invocation:
        """The command line for this run."""

    @abc.abstractmethod
    def parse(self, result: process.ProcessResult, request: RunRequest) -> AgentResult:
        """Read the finished process; raise ``AgentError`` when there is no verdict."""

    def model_api(self, env: Mapping[str, str]) -> ModelAPI | None:
        return None

    def home_paths(self, env: Mapping[str, str]) -> tuple[Path, ...]:
        return ()

    def isolate(self, root: Path, env: Mapping[str, str]) -> Mapping[str, str]:
        return {}

    def write_mcp(self, home_env: Mapping[str, str], servers: Sequence[McpServer]) -> None:
        """Add ``servers`` to the run's own home that ``home_env`` points at, for a CLI
        that reads them from its settings only (:attr:`mcp_config` ``home``); nothing
        for the others."""
        return None


def adapt(driver: Driver, settings: AgentSettings) -> Agent:
    """``driver`` as the whole :class:`Agent` protocol: an :class:`AgentBase` as it is,
    anything else (a driver written against the three members of earlier releases, or
    one that does not subclass the base) wrapped in an :class:`Adapted`."""
    if isinstance(driver, AgentBase):
        return driver
    return Adapted(driver, settings)


class Adapted(AgentBase):
    """A driver that does not subclass :class:`AgentBase`, with the protocol's defaults
    for what it lacks: each optional member it has is looked up here, once, when it is
    made (docs/agents.md, "Adding your own agent")."""

    def __init__(self, driver: Driver, settings: AgentSettings) -> None:
        super().__init__(settings)
        #: The driver as its factory made it.
        self.driver = driver
        self.name = driver.name
        # The one place a driver is asked what it offers.
        requirements = getattr(driver, "requirements", None)
        self.requirements = requirements if isinstance(requirements, Requirements) else None
        self.args = tuple(getattr(driver, "args", settings.args))
        self.tool_inputs = bool(getattr(driver, "tool_inputs", True))
        self._model_api = getattr(driver, "model_api", None)
        self._home_paths = getattr(driver, "home_paths", None)
        self._isolate = getattr(driver, "isolate", None)
        self.has_home = self._isolate is not None
        self.continues = bool(getattr(driver, "continues", False))
        self.transcript = bool(getattr(driver, "transcript", True))

    def invocation(self, request: RunRequest) -> Invocation:
        return self.driver.invocation(request)

    def parse(self, result: process.ProcessResult, request: RunRequest) -> AgentResult:
        return self.driver.parse(result, request)

    def model_api(self, env: Mapping[str, str]) -> ModelAPI | None:
        api = self._model_api(env) if self._model_api is not None else None
        return api if isinstance(api, ModelAPI) else None

    def home_paths(self, env: Mapping[str, str]) -> tuple[Path, ...]:
        return tuple(self._home_paths(env)) if self._home_paths is not None else ()

    def isolate(self, root: Path, env: Mapping[str, str]) -> Mapping[str, str]:
        return dict(self._isolate(root, env)) if self._isolate is not None else {}


def run_agent(agent: Agent, request: RunRequest) -> AgentResult:
    """Run ``agent`` for ``request`` in the workspace and parse what it printed."""
    inv = agent.invocation(request)
    program = inv.argv[0]
    if not on_path(program, request.env):
        # The session's preflight said so once; this covers a PATH that changed since.
        raise AgentError(
            f"agent {agent.name!r}: program {program!r} not found on PATH; "
            "install it or set --eval-agent / eval_agent_command",
            kind="missing",
        )
    argv = request.sandbox.wrap(
        list(inv.argv), cwd=request.workspace, writable=(request.workspace, *request.writable)
    )
    try:
        proc = process.run(
            argv,
            cwd=request.workspace,
            env={**request.env, **dict(inv.env)},
            timeout=request.timeout,
            stdin=inv.stdin,
            sweep=True,
        )
    except OSError as exc:
        said = f"agent {agent.name!r} could not start {program!r}: {exc}"
        relative = os.sep in program and not os.path.isabs(program)
        if relative and not os.path.lexists(request.workspace / program):
            raise AgentError(
                f"{said}\n  hint: the agent runs in the case's workspace, where {program!r} "
                f"does not exist; write {{rootdir}}/{program} in eval_agent_command "
                "({rootdir} is pytest's rootdir)",
                kind="config",
            ) from None
        raise AgentError(said, kind="missing") from None
    if proc.timed_out:
        said = last_words(proc)
        raise AgentError(
            f"agent {agent.name!r} timed out after {request.timeout:g}s "
            f"(its whole process group was killed); {request.timeout_hint}"
            + (f"\nlast output: {said}" if said else ""),
            kind="timeout",
        )
    result = agent.parse(proc, request)
    if request.sandbox.contained:
        refused = containment.refused_paths(proc.stdout, proc.stderr)
        if refused:
            result = dataclasses.replace(result, refused_writes=tuple(refused))
    return result


def on_path(program: str, env: Mapping[str, str]) -> bool:
    """Whether ``program`` is found on the ``PATH`` of ``env``, or is a file's path."""
    return shutil.which(program, path=env.get("PATH", os.defpath)) is not None or (
        Path(program).is_file()
    )


def last_words(proc: process.ProcessResult, limit: int = 300) -> str:
    """The last thing a process said, to explain a timeout: the last line of its
    standard output (the ``message`` of a JSON event), else of its standard error.
    A CLI waiting for a network it cannot reach says so there."""
    for text in (proc.stdout, proc.stderr):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if not lines:
            continue
        line = lines[-1]
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        return shorten(_event_message(event) or line, limit)
    return ""


def _event_message(event: object) -> str | None:
    """The ``message`` of a JSON event, or of its ``item`` or ``error`` (Codex nests)."""
    if not isinstance(event, dict):
        return None
    for holder in (event, event.get("item"), event.get("error")):
        if isinstance(holder, dict) and isinstance(holder.get("message"), str):
            return str(holder["message"])
    return None
