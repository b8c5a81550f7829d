"""Grading a run: the checks' verdict on what the agent left (its workspace, its answer,
its transcript), or on a graded directory where no agent ran (``--eval-workspace``).
Plain Python, no pytest."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from pytest_evalcases.agents.base import AgentResult, ModelRequest
from pytest_evalcases.cases.loading import LoadedCase
from pytest_evalcases.cases.registry import CheckContext
from pytest_evalcases.errors import RunError
from pytest_evalcases.kinds import total_spent
from pytest_evalcases.results.reader import ResultsFileError
from pytest_evalcases.results.record import CheckRecord, JudgeRecord
from pytest_evalcases.run.budget import limit_checks
from pytest_evalcases.run.files import Unreadable, inside, read_text
from pytest_evalcases.run.judge import Judging
from pytest_evalcases.run.repository import check_tree
from pytest_evalcases.run.runner import AgentRun, RunContext, RunReport, case_env
from pytest_evalcases.run.workspace import Variant, snapshot
from pytest_evalcases.text import plural

OUTPUT_FILE = Path(".evalcases") / "output.txt"
#: Why a graded directory's checks know no request to a model.
_GRADED = "no agent ran (--eval-workspace grades a directory as it is)"


def grade(case: LoadedCase, variant: Variant, ctx: RunContext, ran: AgentRun) -> RunReport:
    """The checks' verdict on an agent run, and whether it left the repository alone."""
    assert ctx.agent is not None
    result, workspace = ran.result, ran.workspace
    assert result is not None
    judging = judging_for(case, variant, ctx, ran) if case.judged else None
    try:
        checks = _evaluate(
            case,
            ctx,
            workspace,
            result,
            ran.env,
            ctx.agent.tool_inputs,
            requests=ran.requests,
            judge=judging,
        )
    except RunError as exc:
        if judging is None or judging.spent is None:
            raise
        # A judge that answered out of format was paid for all the same.
        return RunReport(
            error=exc,
            agent=result,
            workspace=workspace,
            recording=ran.recording,
            replayed=ran.replayed,
            spends=(total_spent((result.spent, judging.spent)),),
            judge_spent=judging.spent,
        )
    judge_spent = None
    if judging is not None:
        checks = list(judging.attach(checks))
        judge_spent = judging.spent
    checks += limit_checks(case, ctx.agent.name, result)
    if ran.watch is not None:
        check_tree(ctx, ran.watch)
    refused = refusal_error(case, result)
    if refused is not None:
        raise refused
    # A workspace too big to walk is no idle one: the agent left it so, or its setup did.
    idle = (
        not result.text.strip() and ran.started is not None and snapshot(workspace) == ran.started
    )
    return RunReport(
        checks=tuple(checks),
        agent=result,
        workspace=workspace,
        did_nothing=idle,
        recording=ran.recording,
        replayed=ran.replayed,
        # The judge's run is the run's too: its tokens and cost count (docs/judge.md).
        spends=(total_spent((result.spent, judge_spent)),) if judge_spent is not None else (),
        judge_spent=judge_spent,
    )


def judging_for(case: LoadedCase, variant: Variant, ctx: RunContext, ran: AgentRun) -> Judging:
    """The judge of a live run: a run replayed in full keeps the judgements its
    recording's run stored, and asks nothing (docs/judge.md, "Replay and regrade"); a
    run that went live in part (``--eval-reuse``) gave another answer, and is judged."""
    stored: dict[str, JudgeRecord] = {}
    if ctx.replay is not None and ran.replayed is not None and ran.replayed.how == "full":
        with contextlib.suppress(ResultsFileError):
            found = ctx.replay.session().find(case.id, ran.variant, ran.repetition)
            if found is not None:
                stored = {c.id: c.judge for c in found.record.checks if c.judge is not None}
    return Judging(
        case,
        ctx.judge,
        ctx.agent,
        ctx.agent.name if ctx.agent is not None else None,
        repetition=ran.repetition,
        stored=stored,
        overlays=variant.overlays,
        sandbox=ctx.sandbox,
        env=ran.env,
        home=ctx.agent_home,
        recorder=ctx.recorder,
        name=ran.name,
    )


def refusal_error(case: LoadedCase, result: AgentResult) -> RunError | None:
    """The ``denied`` error of a run in which the agent was refused tool calls, naming
    them; ``None`` when it was refused none, or when a check of the case grades refusals
    (``tool_blocked`` / ``tool_not_blocked``). A check that held because the agent could
    not act says nothing of the configuration (docs/agents.md, "Refused tool calls")."""
    if not result.denials or case.grades_refusals:
        return None
    calls = "; ".join(denial.named for denial in result.denials[:10])
    more = f"; and {len(result.denials) - 10} more" if len(result.denials) > 10 else ""
    return RunError(
        f"the agent CLI refused {plural(len(result.denials), 'tool call')} (its permission "
        f"rules or a hook), so the checks cannot say whether the configuration held: "
        f"denied {calls}{more}\n  hint: eval_agent_args decides what the agent may do; a "
        "case that tests a refusal grades it with tool_blocked / tool_not_blocked "
        '(docs/agents.md, "Refused tool calls")',
        kind="denied",
        denials=tuple(denial.named for denial in result.denials),
    )


def grade_directory(case: LoadedCase, variant: Variant, ctx: RunContext) -> RunReport:
    """The checks' verdict on a graded directory (``--eval-workspace``): no agent runs."""
    assert variant.graded_dir is not None
    workspace = graded_workspace(variant.graded_dir, case.id, ctx.case_ids)
    output = _graded_output(workspace)
    env = case_env(ctx.base_env, case, variant, workspace)
    agent = AgentResult(text=output) if output is not None else None
    checks = _evaluate(case, ctx, workspace, agent, env, True, unknown=_GRADED)
    return RunReport(checks=tuple(checks), agent=agent, workspace=workspace)


def graded_workspace(graded: Path, case_id: str, case_ids: frozenset[str]) -> Path:
    """Where case ``case_id`` is graded in the graded directory ``graded``: in
    ``graded/<case-id>/`` when ``graded`` holds per-case directories (a subdirectory
    named like one of ``case_ids``, or like ``case_id``), else in ``graded`` itself
    (docs/agents.md, "No agent: grading existing directories"). A case without its
    directory beside those of others is an error, never graded against ``graded``."""
    if not graded.is_dir():
        raise RunError(f"graded directory {graded} does not exist", kind="workspace")
    own = graded / case_id
    if own.is_dir():
        return own
    try:
        names = [entry.name for entry in os.scandir(graded) if entry.is_dir()]
    except OSError as exc:
        raise RunError(
            f"graded directory {graded}: {exc.strerror or exc}", kind="workspace"
        ) from None
    others = sorted(name for name in names if name in case_ids)
    if not others:
        return graded
    shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    raise RunError(
        f"no directory for case {case_id} in {graded}: it holds per-case directories "
        f"({shown}), so each case is graded in its own {graded}/<case-id>/",
        kind="workspace",
    )


def _graded_output(workspace: Path) -> str | None:
    """The graded directory's final answer, ``None`` without one; read as checks read
    files (docs/case-format.md, "Paths, globs and symlinks"): a symlink out of the
    directory is an error, and so is a file that cannot be read."""
    if not os.path.lexists(workspace / OUTPUT_FILE):
        return None
    path = inside(workspace, str(OUTPUT_FILE), "the graded final answer")
    try:
        return read_text(path, str(workspace / OUTPUT_FILE))
    except Unreadable as exc:
        raise RunError(f"the graded final answer {exc}", kind="no-output") from None


def _evaluate(
    case: LoadedCase,
    ctx: RunContext,
    workspace: Path,
    result: AgentResult | None,
    env: Mapping[str, str],
    tool_inputs: bool,
    *,
    requests: tuple[ModelRequest, ...] | None = None,
    unknown: str = "",
    judge: Judging | None = None,
) -> list[CheckRecord]:
    check_ctx = CheckContext(
        workspace=workspace,
        fixture=case.fixture,
        output=result.text if result is not None else None,
        tool_calls=result.tool_calls if result is not None else None,
        env=env,
        tool_inputs=tool_inputs,
        sandbox=ctx.sandbox,
        agent=ctx.agent.name if ctx.agent is not None else None,
        denials=result.denials if result is not None else None,
        requests=requests,
        requests_unknown=unknown,
        hooks=result.hooks if result is not None else None,
        turns=result.turns if result is not None else (),
        mcp=result.mcp if result is not None else None,
        mcp_connected=result.mcp_connected if result is not None else None,
        judge=judge,
    )
    return [ctx.registry.evaluate(i, check, check_ctx) for i, check in enumerate(case.checks)]
