"""The registry of check types (``type`` -> model + evaluator) and the contract an
evaluator is written against.

The registry lives beside the schema because validating a case file needs it: its
``case_model`` is the ``Case`` model whose ``checks`` field accepts every registered
type. What an evaluator receives (:class:`CheckContext`) and returns
(:class:`Outcome`) is part of that contract, so it lives here too; the built-in
evaluators themselves run checks and live in :mod:`pytest_evalcases.run.checks`.
Check-type authors import these names from :mod:`pytest_evalcases.checks`
(docs/case-format.md, "Your own check types").
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic import Field, TypeAdapter, create_model

from pytest_evalcases.agents.base import AgentResult, Denial, HookRun, ModelRequest, ToolCall
from pytest_evalcases.agents.mcp import McpServed
from pytest_evalcases.cases import limits, schema
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.sandbox import Sandbox


@dataclass(frozen=True)
class CheckContext:
    """What a check can look at: the workspace after the agent ran, and its answer."""

    workspace: Path
    #: The fixture the workspace was copied from (for ``file_unchanged``).
    fixture: Path | None
    #: The agent's final answer; ``None`` when there is none (graded directory without
    #: ``.evalcases/output.txt``).
    output: str | None
    #: The agent's tool calls; ``None`` when the agent gave no transcript.
    tool_calls: tuple[ToolCall, ...] | None
    env: Mapping[str, str]
    #: Whether the agent reports tool inputs (``input:`` on a tool check needs them).
    tool_inputs: bool = True
    #: The run's sandbox (docs/sandbox.md); a command of a check runs in it.
    sandbox: Sandbox = field(default_factory=Sandbox)
    #: The name of the agent that ran (the skill checks read its transcript its way).
    agent: str | None = None
    #: The tool calls the agent refused; ``None`` when its output cannot show refusals.
    denials: tuple[Denial, ...] | None = None
    #: The requests the CLI sent its model, in order; ``None`` when they are not known,
    #: for the reason ``requests_unknown`` gives.
    requests: tuple[ModelRequest, ...] | None = None
    requests_unknown: str = ""
    #: The hooks the agent ran; ``None`` when its output cannot show them.
    hooks: tuple[HookRun, ...] | None = None
    #: Each turn of a conversation (docs/conversations.md); empty for one prompt.
    turns: tuple[AgentResult, ...] = ()

    def at_turn(self, number: int) -> CheckContext:
        """What turn ``number`` of the conversation shows: its answer, calls, refusals,
        hooks and requests (numbered within it); nothing of the agent's when the run
        kept no turns."""
        turn = self.turns[number - 1] if number <= len(self.turns) else None
        requests = self.requests
        if requests is not None:
            requests = tuple(request for request in requests if request.turn == number)
        return replace(
            self,
            output=turn.text if turn is not None else None,
            tool_calls=turn.tool_calls if turn is not None else None,
            denials=turn.denials if turn is not None else None,
            hooks=turn.hooks if turn is not None else None,
            requests=requests,
            turns=(),
            mcp=self.mcp.at_turn(number) if self.mcp is not None else None,
            mcp_connected=turn.mcp_connected if turn is not None else None,
        )

    #: What the case's mock MCP servers saw; ``None`` without one (docs/mcp.md).
    mcp: McpServed | None = None
    #: The MCP servers the agent's CLI reported connected; ``None`` where it does not say.
    mcp_connected: tuple[str, ...] | None = None
    #: The run's judge: answers a ``judge`` check (docs/judge.md); ``None``: no judge.
    judge: Callable[[schema.Judge, CheckContext], Outcome] | None = None

    @functools.cached_property
    def resolved_workspace(self) -> str:
        """The workspace with its symlinks resolved, once for the run's checks: every
        path they read must resolve below it."""
        return os.path.realpath(self.workspace)

    def command(self, args: Sequence[str] | str) -> Sequence[str] | str:
        """``args`` (a shell command line when a string) as it runs contained like the
        built-in command checks: writing only to the workspace, on the network only
        with ``eval_sandbox_network = shared``. Pass the result to :mod:`subprocess`
        with ``cwd=ctx.workspace``."""
        return self.sandbox.wrap(
            args,
            cwd=self.workspace,
            writable=(self.workspace,),
            network=self.sandbox.network == "shared",
        )


@dataclass(frozen=True)
class Outcome:
    """An evaluator's verdict on one check."""

    passed: bool
    message: str


C = TypeVar("C", bound=schema.CheckModel)
#: A check type's evaluator: the validated check model and the context to an outcome.
Evaluator = Callable[[Any, CheckContext], Outcome]


class CheckRegistry:
    """Check types by name; builds the pydantic models that validate case files."""

    def __init__(self) -> None:
        self._types: dict[str, tuple[type[schema.CheckModel], Evaluator]] = {}
        #: The names of the built-in types that no plugin replaced.
        self.builtin: frozenset[str] = frozenset()

    def register(self, model: type[C], evaluate: Callable[[C, CheckContext], Outcome]) -> None:
        """Add a check type; its name is the ``Literal`` of ``model.type``."""
        name = schema.check_type_name(model)
        self._types[name] = (model, evaluate)
        self.builtin = self.builtin - {name}
        self.__dict__.pop("case_model", None)
        self.__dict__.pop("check_adapter", None)

    @property
    def names(self) -> list[str]:
        """The registered type names, sorted."""
        return sorted(self._types)

    def models(self) -> tuple[type[schema.CheckModel], ...]:
        """The registered check models, in registration order."""
        return tuple(model for model, _ in self._types.values())

    @functools.cached_property
    def case_model(self) -> type[schema.CaseModelBase]:
        """The ``Case`` model whose ``checks`` is the tagged union of every type."""
        union = schema.check_union(self.models())
        return create_model(
            "Case",
            __base__=schema.CaseModelBase,
            checks=(
                list[union],  # type: ignore[valid-type]
                Field(min_length=1, max_length=limits.CHECKS),
            ),
        )

    @functools.cached_property
    def check_adapter(self) -> TypeAdapter[schema.CheckModel]:
        """Validates one check (the task-directory loader validates check by check)."""
        return TypeAdapter(schema.check_union(self.models()))

    def evaluate(self, index: int, check: schema.CheckModel, ctx: CheckContext) -> CheckRecord:
        """Run one check; ``index`` gives the default id ``<type>-<index>``."""
        _, evaluator = self._types[check.type]
        turn: int | None = getattr(check, "turn", None)
        outcome = evaluator(check, ctx if turn is None else ctx.at_turn(turn))
        return CheckRecord(
            id=check_id(check, index),
            type=check.type,
            description=check.description,
            passed=outcome.passed,
            message=outcome.message if turn is None else f"turn {turn}: {outcome.message}",
            skill=getattr(check, "skill", None) if check.type in schema.SKILL_CHECKS else None,
            mode=check.mode,
        )


def check_id(check: schema.CheckModel, index: int) -> str:
    """The check's own ``id`` or ``<type>-<index>``."""
    return check.id or f"{check.type}-{index}"
