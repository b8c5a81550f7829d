"""Trajectories in ATIF, the Agent Trajectory Interchange Format of the Harbor framework
(docs/trajectories.md): the format's objects, as this plugin writes them and reads an
in-house agent's, and the tool calls a trajectory shows.

The models follow the format's published specification, version ``ATIF-v1.7`` (the
Harbor project's RFC 0001, "Agent Trajectory Interchange Format"): every object forbids
fields the specification does not name, step ids count from 1 without a gap, the
agent-only fields (``model_name``, ``reasoning_*``, ``tool_calls``, ``metrics``) appear
on agent steps only, and each observation result's ``source_call_id`` names a tool
call of its own step. A file of an earlier 1.x version reads as well: each version
only added optional fields.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pytest_evalcases.agents.base import TOOL_KINDS, ToolCall, Usage
from pytest_evalcases.agents.output import tool_input

#: The version this plugin writes (docs/trajectories.md, "The pinned version").
SCHEMA_VERSION = "ATIF-v1.7"
#: The versions it reads.
READ_VERSIONS = tuple(f"ATIF-v1.{minor}" for minor in range(8))
#: The variable that tells the ``command`` agent where to write its trajectory.
TRAJECTORY_VARIABLE = "EVALCASES_TRAJECTORY"
#: The name of a stored run's trajectory, beside its ``run.json``.
TRAJECTORY_FILE = "trajectory.json"


class Malformed(Exception):
    """A trajectory that is not ATIF: the message names the file and what is wrong."""


class _Object(BaseModel):
    # ATIF names a field `model_name`: pydantic before 2.10 warns of its `model_`
    # namespace, which `filterwarnings = error` would turn into an error.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, protected_namespaces=())


class ImageSource(_Object):
    """Where an image of a multimodal message is stored."""

    media_type: Literal["image/jpeg", "image/png", "image/gif", "image/webp"]
    path: str


class ContentPart(_Object):
    """One part of a multimodal message: text or an image."""

    type: Literal["text", "image"]
    text: str | None = None
    source: ImageSource | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> ContentPart:
        if self.type == "text" and (self.text is None or self.source is not None):
            raise ValueError("a text part has `text` and no `source`")
        if self.type == "image" and (self.source is None or self.text is not None):
            raise ValueError("an image part has `source` and no `text`")
        return self


class AtifToolCall(_Object):
    """One tool call of an agent step."""

    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]
    extra: dict[str, Any] | None = None


class SubagentTrajectoryRef(_Object):
    """A delegated sub-agent's trajectory: embedded (``trajectory_id``) or a file."""

    trajectory_id: str | None = None
    trajectory_path: str | None = None
    session_id: str | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _resolvable(self) -> SubagentTrajectoryRef:
        if self.trajectory_id is None and self.trajectory_path is None:
            raise ValueError("a sub-agent reference needs `trajectory_id` or `trajectory_path`")
        return self


class ObservationResult(_Object):
    """What one tool call or action gave back."""

    source_call_id: str | None = None
    content: str | list[ContentPart] | None = None
    subagent_trajectory_ref: list[SubagentTrajectoryRef] | None = None
    extra: dict[str, Any] | None = None


class Observation(_Object):
    """The environment's feedback to a step."""

    results: list[ObservationResult]


class Metrics(_Object):
    """One step's model usage; ``prompt_tokens`` counts the cached ones too."""

    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    cached_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    extra: dict[str, Any] | None = None


class FinalMetrics(_Object):
    """The whole trajectory's totals."""

    total_prompt_tokens: int | None = Field(default=None, ge=0)
    total_completion_tokens: int | None = Field(default=None, ge=0)
    total_cached_tokens: int | None = Field(default=None, ge=0)
    total_cost_usd: float | None = None
    total_steps: int | None = Field(default=None, ge=0)
    extra: dict[str, Any] | None = None


class AtifAgent(_Object):
    """The agent system that produced the trajectory."""

    name: str
    version: str
    model_name: str | None = None
    tool_definitions: list[dict[str, Any]] | None = None
    extra: dict[str, Any] | None = None


#: The fields only an agent step may have.
_AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")


class Step(_Object):
    """A system prompt, a user message, or one agent turn with its actions."""

    step_id: int = Field(ge=1)
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    message: str | list[ContentPart]
    reasoning_content: str | None = None
    tool_calls: list[AtifToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    llm_call_count: int | None = Field(default=None, ge=0)
    is_copied_context: bool | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Step:
        if self.source != "agent":
            given = [name for name in _AGENT_ONLY if getattr(self, name) is not None]
            if given:
                raise ValueError(f"a {self.source} step cannot have {', '.join(given)}")
        if self.llm_call_count == 0 and (
            self.metrics is not None or self.reasoning_content is not None
        ):
            raise ValueError("a step of no model call (llm_call_count 0) has no metrics")
        if self.timestamp is not None:
            try:
                datetime.fromisoformat(self.timestamp.replace("Z", "+00:00"))
            except ValueError:
                raise ValueError(f"timestamp {self.timestamp!r} is not ISO 8601") from None
        if self.observation is not None:
            ids = {call.tool_call_id for call in self.tool_calls or ()}
            for result in self.observation.results:
                if result.source_call_id is not None and result.source_call_id not in ids:
                    raise ValueError(
                        f"observation result names tool call {result.source_call_id!r}, "
                        "which the step does not make"
                    )
        return self


class Trajectory(_Object):
    """A whole trajectory: who acted, and every step."""

    schema_version: str
    session_id: str | None = None
    trajectory_id: str | None = None
    agent: AtifAgent
    steps: list[Step]
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    continued_trajectory_ref: str | None = None
    extra: dict[str, Any] | None = None
    subagent_trajectories: list[Trajectory] | None = None

    @model_validator(mode="after")
    def _ordered(self) -> Trajectory:
        if self.schema_version not in READ_VERSIONS:
            raise ValueError(
                f"schema_version {self.schema_version!r} is none of "
                f"{READ_VERSIONS[0]} to {READ_VERSIONS[-1]}"
            )
        for number, step in enumerate(self.steps, start=1):
            if step.step_id != number:
                raise ValueError(f"step {number} has step_id {step.step_id}: ids count from 1")
        embedded = [sub.trajectory_id for sub in self.subagent_trajectories or ()]
        if None in embedded:
            raise ValueError("an embedded sub-agent trajectory needs a `trajectory_id`")
        if len(set(embedded)) != len(embedded):
            raise ValueError("embedded sub-agent trajectories share a `trajectory_id`")
        return self


def parse(data: Any, where: str) -> Trajectory:
    """``data`` (a decoded JSON document) as a trajectory; :class:`Malformed` naming
    ``where`` and the first errors when it is not one."""
    try:
        return Trajectory.model_validate(data)
    except ValidationError as exc:
        raise Malformed(f"{where} is not an ATIF trajectory: {_errors(exc)}") from None


def read(path: Path) -> Trajectory:
    """The trajectory in the file at ``path``; :class:`Malformed` when it is not JSON or
    not ATIF, :class:`OSError` when it cannot be read."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise Malformed(f"{path} is not an ATIF trajectory: not JSON ({exc})") from None
    return parse(data, str(path))


def _errors(exc: ValidationError, shown: int = 3) -> str:
    found = exc.errors()
    said = []
    for error in found[:shown]:
        where = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        said.append(f"{where}: {message}" if where else message)
    more = len(found) - shown
    return "; ".join(said) + (f" (and {more} more)" if more > 0 else "")


#: Common tool names of agents that write ATIF, lower-cased, and their canonical kinds;
#: a tool call's ``extra.kind`` says it where the name does not.
_KINDS = {
    "bash": "shell",
    "shell": "shell",
    "exec_command": "shell",
    "run_shell_command": "shell",
    "execute_bash": "shell",
    "terminal": "shell",
    "read": "read",
    "read_file": "read",
    "read_many_files": "read",
    "write": "write",
    "write_file": "write",
    "file_write": "write",
    "edit": "edit",
    "multiedit": "edit",
    "replace": "edit",
    "str_replace_editor": "edit",
    "apply_patch": "edit",
    "grep": "search",
    "glob": "search",
    "search": "search",
    "search_file_content": "search",
    "list_directory": "search",
    "webfetch": "web",
    "web_fetch": "web",
    "websearch": "web",
    "web_search": "web",
}


def tool_kind(call: AtifToolCall) -> str:
    """The canonical kind of a call: its ``extra.kind`` where that is one, else by its
    name (``other`` for a name not known)."""
    given = (call.extra or {}).get("kind")
    if isinstance(given, str) and given in TOOL_KINDS:
        return given
    return _KINDS.get(call.function_name.lower(), "other")


def tool_calls(trajectory: Trajectory) -> tuple[ToolCall, ...]:
    """The tool calls of the trajectory's own agent steps, in order, as the tool checks
    read them: a shell call's input is its command, any other's its arguments as
    compact JSON. Steps copied from an earlier trajectory are not this run's."""
    found: list[ToolCall] = []
    for step in _own_steps(trajectory.steps):
        for call in step.tool_calls or ():
            kind = tool_kind(call)
            keys = ("command", "cmd") if kind == "shell" else ()
            found.append(ToolCall(call.function_name, kind, _input(call.arguments, keys)))
    return tuple(found)


def usage(trajectory: Trajectory) -> Usage:
    """The tokens the trajectory reports: its final metrics, else the sum of its own
    steps'. Input tokens count the cached ones, as ATIF's ``prompt_tokens`` do."""
    final = trajectory.final_metrics
    if final is not None and final.total_prompt_tokens is not None:
        return Usage(
            input_tokens=final.total_prompt_tokens,
            output_tokens=final.total_completion_tokens,
            cache_read_tokens=final.total_cached_tokens,
        )
    metrics = [s.metrics for s in _own_steps(trajectory.steps) if s.metrics is not None]

    def total(values: list[int | None]) -> int | None:
        known = [value for value in values if value is not None]
        return sum(known) if known else None

    return Usage(
        input_tokens=total([m.prompt_tokens for m in metrics]),
        output_tokens=total([m.completion_tokens for m in metrics]),
        cache_read_tokens=total([m.cached_tokens for m in metrics]),
    )


def models(trajectory: Trajectory) -> tuple[str, ...]:
    """The models the trajectory names, the agent's default first, each once."""
    named = [trajectory.agent.model_name, *(s.model_name for s in trajectory.steps)]
    return tuple(dict.fromkeys(name for name in named if name))


def _own_steps(steps: Sequence[Step]) -> list[Step]:
    return [s for s in steps if s.source == "agent" and not s.is_copied_context]


def _input(arguments: dict[str, Any], keys: tuple[str, ...]) -> str:
    given = tool_input(arguments, *keys)
    # A command given as its words (``["bash", "-lc", "ls"]``) reads as one line.
    command = next((arguments[k] for k in keys if k in arguments), None)
    if isinstance(command, list) and all(isinstance(word, str) for word in command):
        return " ".join(command)
    return given


def arguments(call: ToolCall) -> dict[str, Any]:
    """A house tool call's input as ATIF arguments: its JSON object where the input is
    one, a shell call's command as ``command``, anything else as ``input``."""
    try:
        data = json.loads(call.input)
    except ValueError:
        data = None
    if isinstance(data, dict):
        return data
    return {"command" if call.kind == "shell" else "input": call.input}
