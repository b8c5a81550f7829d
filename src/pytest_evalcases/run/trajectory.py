"""A stored run's ``trajectory.json``: what the agent's output showed of the run, in
ATIF (docs/trajectories.md).

Built from what the agent's driver read of its output (:class:`AgentResult`): one user
step per prompt of the case (its ``prompt``, then each of its ``follow_ups``), and after
each the agent's step: its answer, the tool calls its transcript showed, with their
arguments, and the tokens and cost of the prompt's model calls. Plain Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_evalcases.agents import atif
from pytest_evalcases.agents.base import AgentResult, Usage

#: Agents whose input tokens leave the cache's out (Anthropic's API): ATIF counts them in.
_CACHE_APART = frozenset({"claude"})
#: What the notes of every trajectory say of its steps.
_NOTES = (
    "Written by pytest-evalcases from the agent's output: one agent step per prompt, its "
    "metrics the totals of the model calls the prompt took; tool results are not known."
)


@dataclass(frozen=True)
class About:
    """What a stored run's trajectory says besides the agent's result."""

    run: str
    case: str
    variant: str
    agent: str
    #: The agent's version as the session's preflight read it; ``None``: not known.
    agent_version: str | None
    #: The case's prompt and its follow-ups, in order.
    prompts: tuple[str, ...]


def build(
    about: About, result: AgentResult | None, error: tuple[str, str] | None
) -> atif.Trajectory:
    """The trajectory of a run that produced ``result``, or ended in ``error`` (kind,
    message): then its steps are the prompts it was given."""
    turns = (result.turns or (result,)) if result is not None else ()
    steps: list[dict[str, Any]] = []
    calls = 0
    # A run that ended in an error was given its first prompt at least.
    prompts = about.prompts if result is not None else about.prompts[:1]
    for number, prompt in enumerate(prompts):
        steps.append({"step_id": len(steps) + 1, "source": "user", "message": prompt})
        if number >= len(turns):
            continue
        turn = turns[number]
        step: dict[str, Any] = {
            "step_id": len(steps) + 1,
            "source": "agent",
            "message": turn.text,
        }
        if len(turn.models) == 1:
            step["model_name"] = turn.models[0]
        if turn.tool_calls:
            step["tool_calls"] = [
                {
                    "tool_call_id": f"call_{calls + index}",
                    "function_name": call.name,
                    "arguments": atif.arguments(call),
                    "extra": {"kind": call.kind},
                }
                for index, call in enumerate(turn.tool_calls, start=1)
            ]
            calls += len(turn.tool_calls)
        metrics = _metrics(about.agent, turn.usage, turn.cost_usd)
        if metrics:
            step["metrics"] = metrics
        extra = _step_extra(turn)
        if extra:
            step["extra"] = extra
        steps.append(step)
    document: dict[str, Any] = {
        "schema_version": atif.SCHEMA_VERSION,
        "session_id": about.run,
        "agent": {"name": about.agent, "version": about.agent_version or "unknown"},
        "steps": steps,
        "notes": _NOTES,
        "extra": {
            "producer": "pytest-evalcases",
            "case": about.case,
            "variant": about.variant,
            **({"agent_session": result.session} if result and result.session else {}),
            **({"error": {"kind": error[0], "message": error[1]}} if error else {}),
        },
    }
    if result is not None and len(result.models) == 1:
        document["agent"]["model_name"] = result.models[0]
    final = _metrics(about.agent, result.usage, result.cost_usd) if result is not None else {}
    document["final_metrics"] = {
        **{f"total_{name}": value for name, value in final.items() if name != "extra"},
        "total_steps": len(steps),
    }
    return atif.parse(document, f"the trajectory of run {about.run}")


def _metrics(agent: str, usage: Usage, cost_usd: float | None) -> dict[str, Any]:
    """ATIF metrics of ``usage``: ``prompt_tokens`` counts every input token, cached
    ones included, ``cached_tokens`` the cache's."""
    found: dict[str, Any] = {}
    cached = usage.cache_read_tokens or 0
    written = usage.cache_write_tokens or 0
    if usage.input_tokens is not None:
        apart = agent in _CACHE_APART
        found["prompt_tokens"] = usage.input_tokens + (cached + written if apart else 0)
    if usage.output_tokens is not None:
        found["completion_tokens"] = usage.output_tokens
    if usage.cache_read_tokens is not None:
        found["cached_tokens"] = usage.cache_read_tokens
    if cost_usd is not None:
        found["cost_usd"] = cost_usd
    if usage.cache_write_tokens:
        found["extra"] = {"cache_creation_input_tokens": usage.cache_write_tokens}
    return found


def _step_extra(turn: AgentResult) -> dict[str, Any]:
    """What ATIF has no field for: that the transcript was not known, the calls the CLI
    refused, the hooks it ran."""
    extra: dict[str, Any] = {}
    if turn.tool_calls is None:
        extra["tool_calls_known"] = False
    if turn.denials:
        extra["refused"] = [{"tool": d.name, "input": d.input, "by": d.by} for d in turn.denials]
    if turn.hooks:
        extra["hooks"] = [
            {"event": h.event, "hook": h.shown, "blocked": h.blocked} for h in turn.hooks
        ]
    return extra
