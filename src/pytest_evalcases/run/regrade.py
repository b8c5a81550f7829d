"""``--eval-regrade``: a stored run graded again with the current checks, with no agent
(docs/replay.md, "Regrade").

The run's workspace is rebuilt from a fresh copy of the fixture, with the variant's
overlays, and the changes the run left (:mod:`pytest_evalcases.run.artifacts`); its
final answer and transcript are the stored ones, and so are the requests its CLI sent
its model (its recorded exchange), for the checks that read them. No process starts but those the
checks start themselves (command checks).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from pytest_evalcases.agents.base import ModelRequest, Usage
from pytest_evalcases.cases.loading import LoadedCase
from pytest_evalcases.cases.registry import CheckContext
from pytest_evalcases.errors import RunError
from pytest_evalcases.kinds import ErrorKind, error_kind
from pytest_evalcases.recording.recorded import RecordedSession
from pytest_evalcases.recording.sent import stored_requests
from pytest_evalcases.run import artifacts
from pytest_evalcases.run.changes import CorruptRecording
from pytest_evalcases.run.grading import refusal_error
from pytest_evalcases.run.judge import Judging
from pytest_evalcases.run.runner import RunContext, RunReport, case_env
from pytest_evalcases.run.workspace import Variant, populate

#: The error kind of a run with nothing stored to regrade or replay.
MISSING: ErrorKind = "replay-missing"
#: The error kind of a stored run that does not read back.
CORRUPT: ErrorKind = "replay-corrupt"


def regrade(
    case: LoadedCase,
    variant: Variant,
    repetition: int,
    ctx: RunContext,
    source: RecordedSession,
    new_workspace: Callable[[], Path],
    results_root: Path | None,
) -> RunReport:
    """The verdict of the current checks on the stored run of ``case`` (``variant``,
    ``repetition``) in ``source``, or the error that leaves it without one: a run with
    nothing stored is a ``replay-missing`` error naming the results file, and a run
    whose agent ended in an error reports that error again. ``results_root`` is the
    directory of the results file being written: the report's ``recording`` is
    relative to it."""
    began = time.monotonic()
    found = source.find(case.id, variant.name, repetition)
    where = f"case {case.id}" + (f", variant {variant.name}" if variant.name else "")
    where += f", repetition {repetition}"
    if found is None:
        missing = f"{source.path} has no run of {where} to regrade"
        return RunReport.failed(RunError(missing, kind=MISSING))
    if found.directory is None:
        missing = f"{source.path}: the run of {where} was not recorded (recording: null)"
        return RunReport.failed(RunError(missing, kind=MISSING))
    try:
        stored = artifacts.load(found.directory)
    except CorruptRecording as exc:
        return _failed(RunError(f"stored run unreadable: {exc}", kind=CORRUPT), began)
    if stored is None:
        missing = (
            f"{source.path}: the run of {where} stored no {artifacts.RUN_FILE} in "
            f"{found.directory} (recorded before regrade existed?)"
        )
        return RunReport.failed(RunError(missing, kind=MISSING))
    recording = _relative(found.directory, results_root)
    if stored.error is not None:
        kind, message = stored.error
        error = RunError(f"{message} (from the recording {found.directory})", kind=error_kind(kind))
        return _failed(error, began, recording=recording)
    workspace = new_workspace()
    try:
        populate(workspace, case.fixture, variant.overlays)
        artifacts.restore(stored, workspace)
    except CorruptRecording as exc:
        error = RunError(f"stored run unreadable: {exc}", kind=CORRUPT)
        return _failed(error, began, workspace=workspace)
    except RunError as exc:
        return _failed(exc, began, workspace=workspace)
    result = stored.result
    if result is None:
        path = found.directory / artifacts.RUN_FILE
        error = RunError(f"{path}: neither an answer nor an error", kind=CORRUPT)
        return _failed(error, began)
    # The judge of a regrade keeps the stored judgements and asks no one; a judge check
    # the stored run has none of is asked (docs/judge.md, "Replay and regrade").
    judging = None
    if case.judged:
        judging = Judging(
            case,
            ctx.judge,
            ctx.agent,
            stored.agent,
            repetition=repetition,
            stored={c.id: c.judge for c in found.record.checks if c.judge is not None},
            overlays=variant.overlays,
            sandbox=ctx.sandbox,
            env=case_env(ctx.base_env, case, variant, workspace),
            home=ctx.agent_home,
        )
    requests: tuple[ModelRequest, ...] | str | None = None
    if case.reads_requests:
        requests = stored_requests(found.directory)
    check_ctx = CheckContext(
        workspace=workspace,
        fixture=case.fixture,
        output=result.text,
        tool_calls=result.tool_calls,
        env=case_env(ctx.base_env, case, variant, workspace),
        tool_inputs=stored.tool_inputs,
        sandbox=ctx.sandbox,
        agent=stored.agent,
        denials=result.denials,
        requests=None if isinstance(requests, str) else requests,
        requests_unknown=f"its stored run cannot say: {requests}"
        if isinstance(requests, str)
        else "",
        hooks=result.hooks,
        turns=result.turns,
        mcp=result.mcp,
        mcp_connected=result.mcp_connected,
        judge=judging,
    )
    try:
        checks = [ctx.registry.evaluate(i, c, check_ctx) for i, c in enumerate(case.checks)]
        if judging is not None:
            checks = list(judging.attach(checks))
        refused = refusal_error(case, result)
        if refused is not None:
            raise refused
    except RunError as exc:
        return _failed(exc, began, workspace=workspace, recording=recording)
    return RunReport(
        checks=tuple(checks),
        # No agent ran: the run reports no tokens and no cost of its own, and what the
        # stored run reported is kept apart, so that it is never counted twice.
        agent=replace(
            result,
            usage=Usage(),
            cost_usd=None,
            turns=tuple(replace(turn, usage=Usage(), cost_usd=None) for turn in result.turns),
        ),
        workspace=workspace,
        duration=time.monotonic() - began,
        did_nothing=not result.text.strip() and stored.workspace_unchanged,
        recording=recording,
        recorded_spent=result.spent,
    )


def _failed(
    error: RunError, began: float, *, workspace: Path | None = None, recording: str | None = None
) -> RunReport:
    """The report of a regrade that ``error`` left without a verdict."""
    return RunReport(
        error=error,
        workspace=workspace,
        duration=time.monotonic() - began,
        recording=recording,
    )


def _relative(directory: Path, root: Path | None) -> str | None:
    """``directory`` relative to ``root`` with ``/`` between the parts (a results
    file's ``recording``); ``None`` without a results file."""
    if root is None:
        return None
    try:
        return Path(os.path.relpath(directory, root)).as_posix()
    except ValueError:
        return directory.as_posix()
