"""The attempts of one run of one case: a live run (:mod:`.invoke`) graded by its checks
(:mod:`.grading`), errored attempts retried with a fresh workspace, and the attempt
record (:class:`~pytest_evalcases.run.runner.RunReport`) returned: every check
evaluated (no stop at the first failure), or the error that left the run without a
verdict. Plain Python, no pytest."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from pytest_evalcases.cases.loading import LoadedCase
from pytest_evalcases.errors import RunError
from pytest_evalcases.kinds import ErrorKind, Spent
from pytest_evalcases.run.budget import runaway_checks
from pytest_evalcases.run.failfast import stops
from pytest_evalcases.run.grading import grade, grade_directory
from pytest_evalcases.run.runner import AgentRun, OuterLimit, RunContext, RunReport
from pytest_evalcases.run.workspace import Variant

#: Errors that another attempt cannot mend: a run that changed the repository (the next
#: attempt would start from the changed tree and might pass), and an account that cannot
#: log in or pay, which seconds later still cannot (docs/agents.md, "Failures and errors").
#: A replay that diverged, or had nothing to replay, would do the same again. A refused
#: tool call is the configuration's: another attempt that happens not to make it would
#: hide it. Nor is an API that could not be reached: the retry would not be started
#: (docs/agents.md, "Failing fast").
NOT_RETRIED: frozenset[ErrorKind] = frozenset(
    {
        "escaped-workspace",
        "denied",
        "authentication",
        "billing",
        "replay-diverged",
        "replay-missing",
        "no-usage",
        # Another attempt would run the agent again to ask the same judge the same.
        "judge",
    }
)


def execute(
    case: LoadedCase,
    variant: Variant,
    ctx: RunContext,
    new_workspace: Callable[[], Path],
    first: Callable[[], AgentRun] | None = None,
    *,
    limit: OuterLimit | None = None,
    record_as: str | None = None,
) -> RunReport:
    """Run ``case`` for ``variant``; retry errored attempts up to ``ctx.retries`` times,
    all within ``limit`` when there is one. The report holds the verdict, or the error
    of the last attempt.

    ``first``, when given, hands over the first attempt's agent run, made ahead of time
    by the scheduler (:mod:`pytest_evalcases.run.scheduler`), outside ``limit``; it
    raises only what refused to start it (the budget). The checks always run here, in
    the caller's thread. ``record_as`` names the run's recording
    (:func:`~pytest_evalcases.run.invoke.run_agent_phase`).
    """
    start = time.monotonic()
    # What each attempt so far reported spending.
    spends: list[Spent | None] = []
    for attempt in range(1, ctx.retries + 2):
        ahead = attempt == 1 and first is not None
        if variant.graded_dir is not None:
            one = _graded(case, variant, ctx)
        else:
            if ahead:
                assert first is not None
                try:
                    ran = first()
                except RunError as exc:
                    # Refused before it started, in its own thread (docs/budget.md).
                    return RunReport.failed(exc)
                # The run started ahead: its time counts from its own start.
                start = min(start, ran.began)
            else:
                # Graded directories run no agent: the drivers' path loads with a live run.
                from pytest_evalcases.run.invoke import run_agent_phase

                ran = run_agent_phase(
                    case, variant, ctx, new_workspace(), limit, record_as=record_as
                )
            one = _checked(case, variant, ctx, ran)
        error = one.error
        spends.append(one.spent)
        if error is None:
            return replace(
                one, spends=tuple(spends), attempts=attempt, duration=time.monotonic() - start
            )
        if not error.attempted:
            # Not started: no attempt, nothing to retry (docs/budget.md, docs/agents.md).
            return RunReport.failed(error)
        over = runaway_checks(case, error, one.spent)
        if over:
            # Over the case's own limits before it stopped: a verdict, not retried.
            return RunReport(
                checks=tuple(over),
                workspace=one.workspace,
                attempts=attempt,
                duration=time.monotonic() - start,
                recording=one.recording,
                replayed=one.replayed,
                spends=tuple(spends),
            )
        if attempt > ctx.retries or error.kind in NOT_RETRIED or stops(error):
            if ctx.retries:
                error = error.reworded(f"{error} (after {attempt} attempts)")
            return replace(
                one,
                error=error,
                attempts=attempt,
                duration=time.monotonic() - start,
                spends=tuple(spends),
            )
        # After a rate limit, the retry waits as every other start does.
        ctx.backoff.record(error)
        ctx.backoff.wait()
    raise AssertionError("unreachable")


def _graded(case: LoadedCase, variant: Variant, ctx: RunContext) -> RunReport:
    """One attempt at a graded directory: its verdict, or the error that prevented one."""
    try:
        return grade_directory(case, variant, ctx)
    except RunError as exc:
        return RunReport(error=exc)


def _checked(case: LoadedCase, variant: Variant, ctx: RunContext, ran: AgentRun) -> RunReport:
    """One live attempt: the checks' verdict on ``ran``, or the error that ended it or
    that kept its checks from grading it (the model was paid all the same)."""
    if ran.error is not None:
        return RunReport(
            error=ran.error,
            workspace=ran.workspace,
            recording=ran.recording,
            replayed=ran.replayed,
        )
    try:
        return grade(case, variant, ctx, ran)
    except RunError as exc:
        return RunReport(error=exc, agent=ran.result, workspace=ran.workspace)
