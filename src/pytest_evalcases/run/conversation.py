"""A case's conversation: its ``prompt`` and each of its ``follow_ups`` as one turn of
the same session, in the same workspace and agent home (docs/conversations.md).

Each turn is one run of the agent (:func:`~pytest_evalcases.agents.base.run_agent`)
that continues the session the first one started; the run's result holds every turn's
own (:attr:`AgentResult.turns`) and their totals. The case's timeout covers the whole
conversation: each turn gets what is left of it. A turn that ends in an error ends the
conversation with it. Plain Python, no pytest.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TypeVar

from pytest_evalcases.agents.base import Agent, AgentResult, RunRequest, Usage, run_agent
from pytest_evalcases.errors import RunError

_N = TypeVar("_N", int, float)
_T = TypeVar("_T")


def cannot_continue(agent: Agent) -> RunError | None:
    """The error of a case with ``follow_ups`` whose agent cannot continue a session,
    before anything runs; ``None`` when it can."""
    if agent.continues:
        return None
    return RunError(
        f"agent {agent.name!r} cannot continue a session, which `follow_ups:` needs "
        "(claude, codex, gemini, or an eval_agent_command with {session}: "
        "docs/conversations.md)",
        kind="case",
    )


def cannot_show(agent: Agent, checks: Sequence[str]) -> RunError | None:
    """The error of a case whose ``checks`` (their types) read the agent's transcript,
    on an agent whose output cannot show one, before anything runs; ``None`` when it
    can, or no check needs it (docs/trajectories.md)."""
    if agent.transcript or not checks:
        return None
    return RunError(
        f"{', '.join(checks)} read(s) the agent's transcript, and agent {agent.name!r} "
        "shows none, so the agent was not run (claude, codex, gemini, or an "
        "eval_agent_command that writes its trajectory in ATIF to $EVALCASES_TRAJECTORY "
        "and says so with eval_agent_trajectory = true: docs/trajectories.md)",
        kind="case",
    )


def converse(
    agent: Agent,
    request: RunRequest,
    follow_ups: Sequence[str],
    begin: Callable[[int], None] | None = None,
) -> AgentResult:
    """Run ``request``'s prompt, then each of ``follow_ups`` on the session it started;
    ``begin(turn)`` is told before each turn (1 = the first) starts. Without follow-ups,
    the one run as it is."""
    if not follow_ups:
        return run_agent(agent, request)
    prompts = (request.prompt, *follow_ups)
    ends = time.monotonic() + request.timeout
    # Claude Code and Gemini CLI take the id up front; the others report their own.
    session: str | None = str(uuid.uuid4())
    turns: list[AgentResult] = []
    for number, prompt in enumerate(prompts, 1):
        where = f"turn {number} of {len(prompts)}"
        if session is None:
            raise RunError(
                f"agent {agent.name!r}: {where} cannot continue the session: its first run "
                "named none (a command prints a line EVALCASES_SESSION=<id>: "
                "docs/conversations.md)",
                kind="case",
            )
        left = max(int((ends - time.monotonic()) * 10) / 10, 0.0)
        if left <= 0:
            raise RunError(
                f"agent {agent.name!r}: the case's timeout of {request.timeout:g}s ran out "
                f"before {where} started; {request.timeout_hint}",
                kind="timeout",
            )
        if begin is not None:
            begin(number)
        this = replace(
            request,
            prompt=prompt,
            timeout=left,
            session=session,
            follow_up=number > 1,
            earlier=total_usage(turn.usage for turn in turns),
        )
        try:
            ran = run_agent(agent, this)
        except RunError as exc:
            raise exc.reworded(f"{where}: {exc}") from None
        turns.append(ran)
        session = ran.session
    return combined(turns)


def combined(turns: Sequence[AgentResult]) -> AgentResult:
    """A conversation's result: its last answer, the calls, refusals and hooks of every
    turn in order, and the sums of their tokens, cost and duration; each turn's own in
    :attr:`AgentResult.turns`."""
    last = turns[-1]
    return AgentResult(
        text=last.text,
        tool_calls=_joined(turn.tool_calls for turn in turns),
        usage=total_usage(turn.usage for turn in turns),
        cost_usd=_sum(turn.cost_usd for turn in turns),
        models=tuple(dict.fromkeys(model for turn in turns for model in turn.models)),
        duration_ms=_sum(turn.duration_ms for turn in turns),
        num_turns=_sum(turn.num_turns for turn in turns),
        exit_code=last.exit_code,
        truncated=any(turn.truncated for turn in turns),
        denials=_joined(turn.denials for turn in turns),
        refused_writes=tuple(path for turn in turns for path in turn.refused_writes),
        hooks=_joined(turn.hooks for turn in turns),
        session=last.session,
        mcp_connected=_connected(turns),
        turns=tuple(turns),
    )


def _connected(turns: Sequence[AgentResult]) -> tuple[str, ...] | None:
    """The MCP servers every turn that says connected to: a check that a server was
    never called reaches a verdict over the whole conversation only where the agent
    could have called it in each turn (docs/mcp.md, "The checks")."""
    said = [turn.mcp_connected for turn in turns if turn.mcp_connected is not None]
    if not said:
        return None
    return tuple(name for name in said[0] if all(name in names for names in said[1:]))


def total_usage(usages: Iterable[Usage]) -> Usage:
    """The sums of ``usages``' counts; ``None`` where none reported one."""
    them = list(usages)
    return Usage(
        input_tokens=_sum(u.input_tokens for u in them),
        output_tokens=_sum(u.output_tokens for u in them),
        cache_read_tokens=_sum(u.cache_read_tokens for u in them),
        cache_write_tokens=_sum(u.cache_write_tokens for u in them),
    )


def _sum(values: Iterable[_N | None]) -> _N | None:
    known = [value for value in values if value is not None]
    return sum(known[1:], known[0]) if known else None


def _joined(parts: Iterable[tuple[_T, ...] | None]) -> tuple[_T, ...] | None:
    """The parts one after the other; ``None`` when no turn's output could show them."""
    known = [part for part in parts if part is not None]
    return tuple(item for part in known for item in part) if known else None
