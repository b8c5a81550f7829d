"""The record of one run, built from what the run left: the one place records are
made (docs/results.md describes them).

In ``session/`` rather than ``run/``: a record that stands for a case file that stopped
loading carries the case-file error text of :mod:`pytest_evalcases.report.messages`,
and ``report/`` sits above ``run/`` in the stack.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_evalcases import defaults
from pytest_evalcases.cases.parsecache import CaseEntry
from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.kinds import Outcome, Spent
from pytest_evalcases.report.messages import case_file_message
from pytest_evalcases.results import modes
from pytest_evalcases.results.record import RunRecord, TurnRecord
from pytest_evalcases.run.workspace import Variant

if TYPE_CHECKING:
    from pytest_evalcases.agents.base import AgentResult
    from pytest_evalcases.cases.loading import LoadedCase
    from pytest_evalcases.kinds import Replayed
    from pytest_evalcases.run.runner import RunReport


def run_record(
    entry: CaseEntry,
    case: LoadedCase | CaseFileError,
    variant: Variant,
    repetition: int,
    outcome: Outcome,
    result: RunReport | None,
    *,
    redact: Callable[[str], str],
    file: str,
    nodeid: str,
    invocation_dir: Path,
    loop_threshold: int = defaults.LOOP_THRESHOLD,
) -> RunRecord:
    """One run of ``entry`` as a record, with ``outcome`` as the controller counts it.

    ``case`` is the validated case, or the error of its file that stopped loading after
    collection; ``result`` is the run's report (its verdict, or the error that left it
    without one), or ``None`` when it did not run. Secrets quoted in check messages and
    errors are redacted here, before any report, file or terminal sees them. A failed
    run's failure mode is classified here (``loop_threshold``: ``eval_loop_threshold``).
    """
    rec = RunRecord(
        case_id=entry.id,
        file=file,
        line=entry.line,
        defends=entry.defends,
        severity=entry.severity,
        variant=variant.name,
        repetition=repetition,
        outcome=outcome,
        tags=list(entry.tags),
        nodeid=nodeid,
        graded_dir=variant.graded_dir is not None,
    )
    if isinstance(case, CaseFileError):
        rec.error_kind = "case-file"
        rec.error = case_file_message(case, invocation_dir)
        return rec
    rec.kind = case.kind
    rec.scripted = case.script is not None
    rec.description = case.description
    rec.quarantine = case.quarantine
    rec.min_pass_rate = case.min_pass_rate
    if case.fixture is not None:
        rec.fixture = str(case.fixture)
    if result is not None and result.error is not None:
        error = result.error
        rec.error_kind = error.kind
        rec.error = redact(str(error))
        rec.workspace = str(result.workspace) if result.workspace is not None else None
        rec.attempts = result.attempts
        rec.duration = result.duration
        rec.recording = result.recording
        rec.permission_denials = [redact(denied) for denied in error.denials]
        _replayed(rec, result.replayed)
        _spent(rec, result.spent)
    elif result is not None:
        rec.checks = [
            replace(
                c,
                message=redact(c.message),
                # The judge's reason quotes the run as the message does (docs/judge.md).
                judge=replace(c.judge, reason=redact(c.judge.reason)) if c.judge else None,
            )
            for c in result.checks
        ]
        if outcome in ("failed", "xfailed"):
            rec.failure_severity = case.failure_severity(result.failed_checks)
            calls = result.agent.tool_calls if result.agent is not None else None
            rec.failure_mode = modes.classify(result.checks, calls, loop_threshold)
        rec.duration = result.duration
        rec.attempts = result.attempts
        rec.did_nothing = result.did_nothing
        if result.workspace is not None:
            rec.workspace = str(result.workspace)
        rec.recording = result.recording
        _replayed(rec, result.replayed)
        _spent(rec, result.spent)
        if result.recorded_spent is not None:
            rec.recorded_tokens_in = result.recorded_spent.tokens_in
            rec.recorded_tokens_out = result.recorded_spent.tokens_out
            rec.recorded_cost_usd = result.recorded_spent.cost_usd
        agent = result.agent
        if agent is not None:
            rec.permission_denials = [redact(denied.named) for denied in agent.denials or ()]
            rec.refused_writes = [redact(path) for path in agent.refused_writes]
            rec.turns = agent.num_turns
            rec.model = redact(", ".join(agent.models)) or None
            rec.conversation = [_turn(turn, rec.scripted) for turn in agent.turns]
    return rec


def _turn(turn: AgentResult, scripted: bool) -> TurnRecord:
    """One turn of a conversation as stored; a scripted turn's tokens are the plugin's
    own answers', kept out as the run's are."""
    spent = None if scripted else turn.spent
    return TurnRecord(
        answer_chars=len(turn.text),
        tokens_in=spent.tokens_in if spent is not None else None,
        tokens_out=spent.tokens_out if spent is not None else None,
        cost_usd=spent.cost_usd if spent is not None else None,
        duration=turn.duration_ms / 1000 if turn.duration_ms is not None else None,
        calls=len(turn.tool_calls) if turn.tool_calls is not None else None,
    )


def _spent(rec: RunRecord, spent: Spent | None) -> None:
    """What the run's attempts reported together: each was paid for (docs/budget.md).
    A scripted run's CLI counted the plugin's own answers: nothing was paid, and its
    figures stay out of the live ones (docs/config-contract.md)."""
    if spent is not None and not rec.scripted:
        rec.tokens_in = spent.tokens_in
        rec.tokens_out = spent.tokens_out
        rec.cost_usd = spent.cost_usd


def _replayed(rec: RunRecord, replayed: Replayed | None) -> None:
    if replayed is not None:
        rec.replay = replayed.how
        rec.saved_tokens = replayed.saved_tokens
        rec.saved_usd = replayed.saved_usd


def file_record(
    error: CaseFileError, *, name: str, file: str, nodeid: str, message: str
) -> RunRecord:
    """A case file ``name`` that does not load, as an erroring record of kind ``file``."""
    return RunRecord(
        case_id=name,
        file=file,
        line=(error.line or 1) - 1,
        defends="",
        severity="normal",
        outcome="error",
        kind="file",
        error_kind="case-file",
        error=message,
        nodeid=nodeid,
    )


def json_metadata(record: RunRecord) -> dict[str, Any]:
    """An eval item's metadata in pytest-json-report's report: its case and usage
    (docs/reference.md, "Beside other pytest plugins")."""
    return {
        "evalcases": {
            "id": record.case_id,
            "file": record.file,
            "defends": record.defends,
            "severity": record.severity,
            "variant": record.variant,
            "repetition": record.repetition,
            "checks": [check.to_dict() for check in record.checks],
            "usage": {
                "tokens_in": record.tokens_in,
                "tokens_out": record.tokens_out,
                "cost_usd": record.cost_usd,
                "model": record.model,
            },
            "error_kind": record.error_kind,
            "workspace": record.workspace,
        }
    }
