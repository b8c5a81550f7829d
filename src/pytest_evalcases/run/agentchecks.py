"""The built-in checks of what the agent did, as its transcript tells: the tools it
called (``tool_called``, ``tool_not_called``), the calls its CLI refused
(``tool_blocked``, ``tool_not_blocked``), the hooks it ran (``hook_fired``,
``hook_not_fired``), the skills it loaded (``skill_used``, ``skill_not_used``) and its
MCP calls (``mcp_called``, ``mcp_not_called``: a mock server's own log when the server
is one of the case's mocks, docs/mcp.md).
Without a transcript there is no verdict: a ``RunError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pytest_evalcases.agents.base import Denial, HookRun, ToolCall
from pytest_evalcases.agents.mcp import McpCall, transcript_calls
from pytest_evalcases.agents.skills import SkillLoads, skill_loads
from pytest_evalcases.cases import schema
from pytest_evalcases.cases.registry import CheckContext, Outcome
from pytest_evalcases.errors import RunError
from pytest_evalcases.run.deadline import search, tick
from pytest_evalcases.run.quoting import quote, regex, shown


def _matching_calls(
    check: schema.ToolCalled | schema.ToolNotCalled, ctx: CheckContext
) -> list[ToolCall]:
    if ctx.tool_calls is None:
        raise RunError(
            f"{check.type} needs a transcript of tool calls, and the agent gave none "
            "(use an agent that reports tool calls, e.g. --eval-agent claude or codex)",
            kind="no-transcript",
        )
    if check.input is not None and not ctx.tool_inputs:
        raise RunError(
            f"{check.type} with `input:` needs tool inputs, and this agent reports only tool names",
            kind="no-transcript",
        )
    return _matching(check.tool, check.input, ctx.tool_calls)


Called = TypeVar("Called", ToolCall, Denial)


def _matching(tool: str, input: str | None, calls: Sequence[Called]) -> list[Called]:
    """The ``calls`` whose name or kind matches ``tool`` and whose input ``input``."""
    # Searched, as every pattern is (`Write` also finds `TodoWrite`; `^Write$` does not).
    tick(f"searching {shown(tool)} in the tool names")
    rx = regex(tool)
    names = search(rx, [call.name for call in calls])
    kinds = search(rx, [call.kind for call in calls])
    inputs: list[tuple[int, int] | None] = [(0, 0)] * len(calls)
    if input is not None:
        tick(f"searching {shown(input)} in the tool inputs")
        inputs = search(regex(input), [call.input for call in calls])
    return [
        call
        for call, name, kind, inp in zip(calls, names, kinds, inputs, strict=True)
        if (name or kind) and inp
    ]


def _describe_check(
    check: schema.ToolCalled | schema.ToolNotCalled | schema.ToolBlocked | schema.ToolNotBlocked,
) -> str:
    return f"tool {shown(check.tool)}" + (
        f" with input {shown(check.input)}" if check.input else ""
    )


def tool_called(check: schema.ToolCalled, ctx: CheckContext) -> Outcome:
    calls = _matching_calls(check, ctx)
    if calls:
        return Outcome(True, f"{_describe_check(check)} called {len(calls)} time(s)")
    seen = ", ".join(sorted({c.name for c in ctx.tool_calls or ()})) or "none"
    return Outcome(False, f"no call of {_describe_check(check)} (tools called: {seen})")


def _and_more(found: Sequence[object]) -> str:
    """What a failure that quotes the first of ``found`` adds about the others."""
    return f" (and {len(found) - 1} more)" if len(found) > 1 else ""


def tool_not_called(check: schema.ToolNotCalled, ctx: CheckContext) -> Outcome:
    calls = _matching_calls(check, ctx)
    if not calls:
        return Outcome(True, f"no call of {_describe_check(check)}")
    first = calls[0]
    return Outcome(
        False,
        f"{_describe_check(check)} must not be called; call {first.name}: {quote(first.input)}"
        + _and_more(calls),
    )


#: Where a refusal's error sends the reader.
_REFUSALS_DOC = 'docs/agents.md, "Refused tool calls"'


def _blocked_calls(
    check: schema.ToolBlocked | schema.ToolNotBlocked, ctx: CheckContext
) -> list[Denial]:
    """The refused calls that ``check`` names; an error where the agent's output cannot
    show them, or cannot say what refused one of them when the check asks."""
    agent = ctx.agent or "(unknown)"
    if ctx.denials is None:
        raise RunError(
            f"{check.type} needs the tool calls the agent refused, and the {agent} agent's "
            f"output cannot show refusals, so the check reached no verdict ({_REFUSALS_DOC})",
            kind="no-transcript",
        )
    if check.input is not None and not ctx.tool_inputs:
        raise RunError(
            f"{check.type} with `input:` needs tool inputs, and the {agent} agent reports "
            "only the names of the tools it refused",
            kind="no-transcript",
        )
    found = _matching(check.tool, check.input, ctx.denials)
    if check.input is not None and not found:
        # A refused call whose input is not shown may be the one the check names.
        unnamed = [d for d in _matching(check.tool, None, ctx.denials) if not d.input]
        if unnamed:
            raise RunError(
                f"{check.type} with `input:`: the {agent} agent's output does not name the "
                f"input of a call it refused ({quote(unnamed[0].named)}), so the check "
                f"reached no verdict ({_REFUSALS_DOC})",
                kind="no-transcript",
            )
    if check.by == "any":
        return found
    unknown = [denial for denial in found if denial.by is None]
    if unknown:
        raise RunError(
            f"{check.type} by: {check.by}: the {agent} agent's output does not say whether "
            f"a permission rule or a hook refused {quote(unknown[0].shown)}, so the check "
            f"reached no verdict ({_REFUSALS_DOC})",
            kind="no-transcript",
        )
    return [denial for denial in found if denial.by == check.by]


def _by(check: schema.ToolBlocked | schema.ToolNotBlocked) -> str:
    return {"any": "", "permission": " by a permission rule", "hook": " by a hook"}[check.by]


def _refused(ctx: CheckContext) -> str:
    shown = sorted({denial.named for denial in ctx.denials or ()})
    return "; ".join(quote(s) for s in shown[:5]) or "none"


def tool_blocked(check: schema.ToolBlocked, ctx: CheckContext) -> Outcome:
    denials = _blocked_calls(check, ctx)
    if denials:
        return Outcome(
            True,
            f"{_describe_check(check)} refused{_by(check)} {len(denials)} time(s): "
            f"{quote(denials[0].shown)}",
        )
    return Outcome(
        False, f"no call of {_describe_check(check)} refused{_by(check)} (refused: {_refused(ctx)})"
    )


def tool_not_blocked(check: schema.ToolNotBlocked, ctx: CheckContext) -> Outcome:
    denials = _blocked_calls(check, ctx)
    if not denials:
        return Outcome(True, f"no call of {_describe_check(check)} refused{_by(check)}")
    return Outcome(
        False,
        f"{_describe_check(check)} must not be refused{_by(check)}; refused "
        f"{quote(denials[0].shown)}" + _and_more(denials),
    )


#: Where a hook check's error sends the reader.
_HOOKS_DOC = 'docs/config-contract.md, "Hooks and refusals: what each CLI shows"'


def _hooks_run(check: schema.HookFired | schema.HookNotFired, ctx: CheckContext) -> list[HookRun]:
    """The hooks the agent ran for the check's event (and, with ``hook:``, whose command
    matches); an error where its output cannot show hooks, or cannot name the command of
    a hook it ran for that event when the check asks."""
    agent = ctx.agent or "(unknown)"
    if ctx.hooks is None:
        raise RunError(
            f"{check.type} {check.event}: the {agent} agent's output cannot show the hooks "
            f"it ran, so the check reached no verdict ({_HOOKS_DOC})",
            kind="no-transcript",
        )
    runs = [run for run in ctx.hooks if run.event == check.event]
    if check.hook is None:
        return runs
    unnamed = [run for run in runs if run.command is None]
    tick(f"searching {shown(check.hook)} in the hook commands")
    found = search(regex(check.hook), [run.command or "" for run in runs])
    matching = [run for run, hit in zip(runs, found, strict=True) if run.command and hit]
    if unnamed and not matching:
        raise RunError(
            f"{check.type} {check.event} hook {shown(check.hook)}: the {agent} agent ran "
            f"{len(unnamed)} {check.event} hook(s) and its output does not name their "
            f"commands ({quote(unnamed[0].shown)}), so the check reached no verdict "
            f"({_HOOKS_DOC})",
            kind="no-transcript",
        )
    return matching


def _describe_hook(check: schema.HookFired | schema.HookNotFired) -> str:
    return f"{check.event} hook" + (f" {shown(check.hook)}" if check.hook else "")


def _hooks_seen(ctx: CheckContext) -> str:
    events = sorted({run.event for run in ctx.hooks or ()})
    return ", ".join(events) or "none"


def hook_fired(check: schema.HookFired, ctx: CheckContext) -> Outcome:
    runs = _hooks_run(check, ctx)
    if runs:
        blocked = sum(run.blocked for run in runs)
        return Outcome(
            True,
            f"{_describe_hook(check)} ran {len(runs)} time(s)"
            + (f", {blocked} of them refusing" if blocked else "")
            + f": {quote(runs[0].shown)}",
        )
    return Outcome(
        False, f"no {_describe_hook(check)} ran (hooks that ran, by event: {_hooks_seen(ctx)})"
    )


def hook_not_fired(check: schema.HookNotFired, ctx: CheckContext) -> Outcome:
    runs = _hooks_run(check, ctx)
    if not runs:
        return Outcome(True, f"no {_describe_hook(check)} ran")
    return Outcome(
        False,
        f"{_describe_hook(check)} must not run; ran {quote(runs[0].shown)}" + _and_more(runs),
    )


def _loads(check: schema.SkillUsed | schema.SkillNotUsed, ctx: CheckContext) -> SkillLoads:
    """The skill loads of the run's transcript; an error where it cannot show the one
    the check names (docs/skills.md, "What counts as using a skill")."""
    agent = ctx.agent or "(unknown)"
    if ctx.tool_calls is None:
        raise RunError(
            f"{check.type} needs a transcript of tool calls, and the {agent} agent gave none "
            "(docs/skills.md)",
            kind="no-transcript",
        )
    loads = skill_loads(ctx.agent, ctx.tool_calls)
    if loads is None:
        raise RunError(
            f"{check.type} {check.skill!r}: the {agent} agent's transcript cannot show skills "
            "being loaded, so the check reached no verdict (docs/skills.md lists the agents "
            "that can)",
            kind="no-transcript",
        )
    if loads.unnamed and not loads.count(check.skill):
        raise RunError(
            f"{check.type} {check.skill!r}: the {agent} agent loaded {loads.unnamed} skill(s) "
            "and its transcript does not say which, so the check reached no verdict "
            "(docs/skills.md)",
            kind="no-transcript",
        )
    return loads


def _loaded(loads: SkillLoads) -> str:
    return ", ".join(sorted(set(loads.names))) or "none"


def skill_used(check: schema.SkillUsed, ctx: CheckContext) -> Outcome:
    loads = _loads(check, ctx)
    times = loads.count(check.skill)
    if times:
        return Outcome(True, f"skill {check.skill!r} loaded {times} time(s)")
    return Outcome(False, f"skill {check.skill!r} not loaded (skills loaded: {_loaded(loads)})")


def skill_not_used(check: schema.SkillNotUsed, ctx: CheckContext) -> Outcome:
    loads = _loads(check, ctx)
    times = loads.count(check.skill)
    if not times:
        return Outcome(True, f"skill {check.skill!r} not loaded (skills loaded: {_loaded(loads)})")
    return Outcome(False, f"skill {check.skill!r} must not be loaded; loaded {times} time(s)")


#: Where an MCP check's error sends the reader.
_MCP_DOC = 'docs/mcp.md, "The checks"'


def _mcp_calls(check: schema.McpCalled | schema.McpNotCalled, ctx: CheckContext) -> list[McpCall]:
    """The calls of the check's server: what its mock answered, else what the
    transcript shows. A mock that never listed its tools reached no agent, so a check
    that it was not called reaches no verdict."""
    served = ctx.mcp
    agent = ctx.agent or "(unknown)"
    if served is not None and check.server in served.mocks:
        if check.server not in served.listed and check.type == "mcp_not_called":
            raise _unreached(
                check,
                f"the mock server never listed its tools to the {agent} agent (it did not "
                "start, or the CLI did not ask)",
            )
        found = [call for call in served.every_call if call.server == check.server]
    else:
        if ctx.tool_calls is None:
            raise RunError(
                f"{check.type} needs a transcript of tool calls, and the {agent} agent gave "
                f"none ({_MCP_DOC})",
                kind="no-transcript",
            )
        connected = ctx.mcp_connected
        # A server the CLI says it did not connect to could not have been called.
        unreached = connected is not None and check.server not in connected
        if unreached and check.type == "mcp_not_called":
            raise _unreached(
                check,
                f"the {agent} agent did not connect to the server (connected: "
                f"{', '.join(connected or ()) or 'none'})",
            )
        known = served.mocks if served is not None else ()
        mcp_calls = transcript_calls(ctx.agent, ctx.tool_calls, known)
        found = [call for call in mcp_calls if call.server == check.server]
    if check.tool is not None:
        tick(f"searching {shown(check.tool)} in the MCP tool names")
        hits = search(regex(check.tool), [call.tool for call in found])
        found = [call for call, hit in zip(found, hits, strict=True) if hit]
    if check.input is not None:
        tick(f"searching {shown(check.input)} in the MCP calls' inputs")
        hits = search(regex(check.input), [call.input for call in found])
        found = [call for call, hit in zip(found, hits, strict=True) if hit]
    return found


def _unreached(check: schema.McpCalled | schema.McpNotCalled, why: str) -> RunError:
    """The error of a negative check of a server the agent could not reach: no pass."""
    return RunError(
        f"{check.type} {check.server}: {why}, so the agent could not have called it and the "
        f"check reached no verdict ({_MCP_DOC})",
        kind="no-transcript",
    )


def _described(check: schema.McpCalled | schema.McpNotCalled) -> str:
    return (
        f"MCP server {check.server!r}"
        + (f" tool {shown(check.tool)}" if check.tool else "")
        + (f" with input {shown(check.input)}" if check.input else "")
    )


def _mcp_outcome(
    check: schema.McpCalled | schema.McpNotCalled, wanted: bool, ctx: CheckContext
) -> Outcome:
    """Whether the server's tool was called as ``wanted``, quoting the first call."""
    found = _mcp_calls(check, ctx)
    if not found:
        return Outcome(not wanted, f"no call of {_described(check)}")
    first = f"{found[0].tool} {quote(found[0].input)}"
    if wanted:
        return Outcome(True, f"{_described(check)} called {len(found)} time(s): {first}")
    said = f"{_described(check)} must not be called; called {first}{_and_more(found)}"
    return Outcome(False, said)


def mcp_called(check: schema.McpCalled, ctx: CheckContext) -> Outcome:
    return _mcp_outcome(check, True, ctx)


def mcp_not_called(check: schema.McpNotCalled, ctx: CheckContext) -> Outcome:
    return _mcp_outcome(check, False, ctx)
