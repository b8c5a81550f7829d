"""What an eval item says once its run is over: the text of a run that reached no
verdict, and how a run that ran ends its item (passed, failed or xfailed) with the text
of each. Plain Python: :class:`pytest_evalcases.plugin.nodes.EvalItem` raises or reports
what this decides."""

from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pytest_evalcases.report import messages
from pytest_evalcases.session.orchestration import (
    PlannedRun,
    RunOutcome,
    check_verdict,
    disposable,
    kept,
)
from pytest_evalcases.session.state import EvalSession

if TYPE_CHECKING:
    from pytest_evalcases.run.runner import RunReport

#: ``passed``: ``text`` is every check, shown as what the test printed; ``failed``:
#: ``text`` for the failure's section, ``line`` for the short test summary;
#: ``xfailed``: ``text`` is the reason.
EndingKind = Literal["passed", "failed", "xfailed"]


@dataclass(frozen=True)
class Ending:
    """How a run that ran ends its item; ``report`` is the run's, its workspace where
    it was kept."""

    kind: EndingKind
    report: RunReport
    text: str
    line: str = ""


def error_text(state: EvalSession, run: PlannedRun, outcome: RunOutcome) -> str:
    """The report of an ``errored`` run: the case, the error, where its workspace is."""
    assert outcome.report is not None
    assert outcome.error is not None
    return messages.error_text(
        messages.header(run.case, run.variant.name),
        outcome.error,
        outcome.report.workspace,
        state.redact,
        note=outcome.note,
    )


def ending(state: EvalSession, run: PlannedRun, report: RunReport) -> Ending:
    """What the checks of ``report`` make of its item; the workspace of a passed run
    goes (unless kept), a failed one's is kept (docs/agents.md, "Kept workspaces")."""
    verdict = check_verdict(state, run, report)
    if verdict in ("passed", "red"):
        text = messages.checks_text(report.checks, report.agent, state.redact)
        if verdict == "passed" and disposable(state, run, report):
            shutil.rmtree(report.workspace, ignore_errors=True)  # type: ignore[arg-type]
        return Ending("passed", report, text)
    workspace, note = kept(state, run, report.workspace)
    report = dataclasses.replace(report, workspace=workspace)
    checks, failed = report.checks, report.failed_checks
    header = messages.header(run.case, run.variant.name)
    if verdict == "green":
        text = messages.red_first_text(header, len(checks))
        return Ending("failed", report, text, messages.red_first_line(len(checks)))
    if verdict == "perturbed":
        text = messages.perturbed_text(run.perturbation or "", failed, state.redact)
        return Ending("xfailed", report, text)
    if verdict == "advisory":
        text = messages.advisory_text(failed, state.redact, run.case.severity)
        return Ending("xfailed", report, text)
    text = messages.failure_text(
        header,
        run.case.description,
        report,
        failed,
        graded=run.variant.graded_dir is not None,
        redact=state.redact,
        note=note,
    )
    return Ending("failed", report, text, messages.failure_line(failed, state.redact))
