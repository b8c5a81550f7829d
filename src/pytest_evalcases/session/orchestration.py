"""One item's run, from the case to its outcome: whether it runs at all, the budget's
question before it starts, the run started ahead of its item (``--eval-concurrency``),
the attempts (``--eval-retry-errors``), a regrade instead of a run, and where the
workspace of a failed or errored run is kept. Plain Python: the pytest item maps the
:class:`RunOutcome` to pass, fail, skip, xfail or error.
"""

from __future__ import annotations

import dataclasses
import functools
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pytest_evalcases.errors import RunError, UsageError
from pytest_evalcases.kinds import Spent, total_spent
from pytest_evalcases.run import keep
from pytest_evalcases.run.perturb import perturb, split_label
from pytest_evalcases.run.workspace import Variant
from pytest_evalcases.session.settings import Settings
from pytest_evalcases.session.state import EvalSession

if TYPE_CHECKING:
    from pytest_evalcases.cases.loading import LoadedCase
    from pytest_evalcases.cases.parsecache import CaseEntry
    from pytest_evalcases.run.budget import Budget
    from pytest_evalcases.run.runner import AgentRun, OuterLimit, RunContext, RunReport
    from pytest_evalcases.run.scheduler import Scheduler

#: ``skipped``: the case does not run here (quarantined, another agent's, no agent);
#: ``not-run``: a session that shows what would run (``--setup-plan``); ``unrunnable``:
#: the session cannot run it (a sandbox that cannot start); ``errored``: the run reached
#: no verdict; ``ran``: the checks' verdict is in the report.
OutcomeKind = Literal["skipped", "not-run", "unrunnable", "errored", "ran"]
#: What the checks of a run that ran say: ``passed``; ``failed``; ``advisory``: failed,
#: but as an advisory case (or by its advisory checks alone); ``perturbed``: a perturbed
#: run failed, which blocks nothing; under ``--eval-red-first``, ``red``: a check failed
#: (the case tests something) and ``green``: every check held (the failure).
CheckVerdict = Literal["passed", "failed", "advisory", "perturbed", "red", "green"]


@dataclass(frozen=True)
class Slot:
    """One of the runs a case is collected as: its item's name, and what sets it apart
    from the case's other runs."""

    name: str
    variant: Variant
    perturbation: str | None
    repetition: int


def slots(entry: CaseEntry, settings: Settings) -> Iterator[Slot]:
    """Each run of a case, in collection order: each variant, the prompt as written then
    each perturbation of it that the case allows and that changes it, each repetition."""
    repeated = settings.repeat > 1
    plan = settings.perturb
    labels = plan.labels(entry.prompt, entry.paraphrases) if plan and entry.perturb else []
    for variant in settings.variants:
        # A graded directory has no prompt to perturb; `perturb: false` opts out.
        perturbed = labels if variant.graded_dir is None else []
        for perturbation in [None, *perturbed]:
            for rep in range(settings.repeat):
                name = item_name(entry.id, variant.name, rep if repeated else None, perturbation)
                yield Slot(name, variant, perturbation, rep)


def unperturbed(entry: CaseEntry, settings: Settings) -> list[tuple[str, str, str]]:
    """``(case id, class, why)`` of each class of ``--eval-perturb`` that makes no item
    of a case that allows perturbation (no paraphrases; a prompt it cannot change), for
    the summary (docs/perturbation.md)."""
    plan = settings.perturb
    if plan is None or not entry.perturb:
        return []
    if all(variant.graded_dir is not None for variant in settings.variants):
        return []
    return [(entry.id, cls, why) for cls, why in plan.gaps(entry.prompt, entry.paraphrases)]


def item_name(
    case_id: str, variant: str, repetition: int | None, perturbation: str | None = None
) -> str:
    """``case-id``, ``case-id[variant]``, ``case-id[r0]`` or ``case-id[variant-r0]``; a
    perturbed run has ``perturb-CLASS-K`` before the repetition (``case-id[perturb-typo-3]``,
    ``case-id[variant-perturb-typo-3-r0]``; docs/perturbation.md)."""
    perturbed = f"perturb-{perturbation}" if perturbation is not None else ""
    repeated = f"r{repetition}" if repetition is not None else ""
    params = [p for p in (variant, perturbed, repeated) if p]
    return f"{case_id}[{'-'.join(params)}]" if params else case_id


@dataclass(frozen=True)
class PlannedRun:
    """One run of one case, as collection planned it: a pytest item stands for it."""

    case: LoadedCase
    variant: Variant
    repetition: int
    #: ``CLASS-K`` of a perturbed run, ``None`` for the prompt as written.
    perturbation: str | None
    #: What its workspaces are named after (the item's name).
    label: str
    #: What the run started ahead is offered and taken under (the item's node id).
    key: str


@dataclass(frozen=True)
class RunOutcome:
    """What one run came to. ``reason``: why it was skipped or could not run;
    ``report``: the attempt record of a run that ``ran`` or ``errored`` (the workspace of
    an errored one kept, and ``note`` saying why it stayed where it was when it did)."""

    kind: OutcomeKind
    reason: str = ""
    report: RunReport | None = None
    note: str = ""

    @property
    def error(self) -> RunError | None:
        """Why an ``errored`` run reached no verdict."""
        return self.report.error if self.report is not None else None


def skip_reason(state: EvalSession, case: LoadedCase, variant: Variant) -> str:
    """Why ``case`` does not run for ``variant`` in this session; empty when it does."""
    if case.quarantine:
        return f"quarantined: {case.quarantine}"
    elsewhere = case.other_agent(state.agent_name(variant))
    if elsewhere:
        return elsewhere
    if state.needs_agent(variant):
        return "no agent configured (--eval-agent)"
    return state.unavailable.get(variant.name, "")


def runs_ahead(state: EvalSession, case: LoadedCase, variant: Variant) -> bool:
    """Whether the run starts an agent that can be started ahead of its item."""
    if variant.graded_dir is not None or state.settings.regrade is not None or case.prompt is None:
        return False
    if skip_reason(state, case, variant):
        return False
    try:
        state.sandbox  # noqa: B018 - an unusable sandbox errors in the item's setup
    except UsageError:
        return False
    return True


def run_case(state: EvalSession, run: PlannedRun) -> LoadedCase:
    """The case as the agent runs it: its prompt perturbed in a perturbed run."""
    plan = state.settings.perturb
    case = run.case
    if run.perturbation is None or plan is None or case.prompt is None:
        return case
    cls, k = split_label(run.perturbation)
    try:
        prompt = perturb(case.prompt, cls, k, plan.seed, case.paraphrases)
    except ValueError as exc:
        # The case file changed after collection: its item no longer has a perturbation.
        raise RunError(f"perturbation {run.perturbation}: {exc}", kind="case") from None
    return dataclasses.replace(case, prompt=prompt)


def run_name(state: EvalSession, run: PlannedRun) -> str:
    """The run's name in the directories beside the results file: its kept
    workspace's, and its recording's (docs/replay.md)."""
    repeated = state.settings.repeat > 1
    return keep.entry_name(
        run.case.id, run.variant.name, run.repetition if repeated else None, run.perturbation
    )


def kept(
    state: EvalSession, run: PlannedRun, workspace: Path | str | None
) -> tuple[Path | None, str]:
    """Where the workspace of a failed or errored run is kept (docs/agents.md, "Kept
    workspaces"), and why it stayed in pytest's temporary directory when it did. A
    graded directory stays where it is."""
    place = state.settings.keep
    path = Path(workspace) if workspace else None
    if path is None or place is None or run.variant.graded_dir is not None:
        return path, ""
    made = keep.keep(path, run_name(state, run), place, state.redact)
    return made.path, made.note


def disposable(state: EvalSession, run: PlannedRun, report: RunReport) -> bool:
    """Whether a passed run's workspace goes: not a graded directory's, nor a kept one."""
    return (
        report.workspace is not None
        and run.variant.graded_dir is None
        and not state.settings.keep_workspaces
    )


def check_verdict(state: EvalSession, run: PlannedRun, report: RunReport) -> CheckVerdict:
    """What the checks of a run that ran say, by the session's settings."""
    failed = report.failed_checks
    if state.settings.red_first:
        return "red" if failed else "green"
    if not failed:
        return "passed"
    plan = state.settings.perturb
    if run.perturbation is not None and (plan is None or not plan.blocking):
        # docs/perturbation.md: perturbed runs are advisory unless eval_perturb_blocking.
        return "perturbed"
    # As severe as its most severe failed check: a task directory's LOW checks
    # failing alone are an advisory failure (docs/case-format.md).
    if run.case.failure_severity(failed) == "advisory":
        return "advisory"
    return "failed"


def start_ahead(
    state: EvalSession, run: PlannedRun, budget: Budget | None
) -> Callable[[], AgentRun]:
    """The run's agent phase, as a job for a scheduler thread: everything it needs is
    read here, in the caller's thread. The budget is asked as the job starts, in its
    thread, so that the runs started before it count."""
    # The runner needs pydantic: imported with the first run, not at start-up.
    from pytest_evalcases.run.invoke import run_agent_phase

    case, variant = run_case(state, run), run.variant
    context = state.context(variant)
    workspace = state.workspaces.new(run.label)
    name = run_name(state, run)

    def work() -> AgentRun:
        if budget is not None:
            try:
                budget.admit()
            except RunError:
                shutil.rmtree(workspace, ignore_errors=True)
                raise
        spent: Spent | None = None
        try:
            ran = run_agent_phase(case, variant, context, workspace, record_as=name)
            spent = ran.spent
        finally:
            if budget is not None:
                budget.finished(spent)
        return ran

    return work


class CaseRun:
    """One item's run: :meth:`outcome` runs it (or takes the run started ahead, or
    regrades it) and says what it came to."""

    def __init__(
        self,
        state: EvalSession,
        run: PlannedRun,
        *,
        budget: Budget | None = None,
        ahead: Scheduler[AgentRun] | None = None,
        limit: OuterLimit | None = None,
    ) -> None:
        self.state = state
        self.run = run
        self.budget = budget
        self.ahead = ahead
        #: pytest-timeout's limit on the whole run, which the plugin enforces itself.
        self.limit = limit
        #: The workspaces made so far, the last attempt's last.
        self.workspaces: list[Path] = []

    def outcome(self, *, dry: bool = False) -> RunOutcome:
        """What the run came to; with ``dry`` (a session that shows what would run),
        nothing starts."""
        reason = skip_reason(self.state, self.run.case, self.run.variant)
        if reason:
            return RunOutcome("skipped", reason=reason)
        if dry:
            return RunOutcome("not-run")
        try:
            context = self.state.context(self.run.variant, sandboxed=self._needs_sandbox())
        except UsageError as exc:
            # eval_sandbox = bwrap where it cannot run, in a session without an agent
            # (with one, the preflight stopped the session before the first case).
            return RunOutcome("unrunnable", reason=str(exc))
        if self.state.settings.regrade is not None:
            report = self._regrade(context)
        else:
            try:
                report = self._execute(context)
            except RunError as exc:
                # Not started: the budget refused it.
                report = _failed(exc)
        if report.error is not None:
            return self.errored(report)
        return RunOutcome("ran", report=report)

    def stopped(self, why: str) -> RunOutcome:
        """The run stopped from outside while it ran (a signal handler's exception):
        a ``timeout`` error saying ``why``, naming the last workspace made."""
        error = RunError(why, kind="timeout")
        workspace = self.workspaces[-1] if self.workspaces else None
        return self.errored(_failed(error, workspace))

    def errored(self, report: RunReport) -> RunOutcome:
        """The run that reached no verdict (``report.error``): its workspace kept."""
        path, note = kept(self.state, self.run, report.workspace)
        return RunOutcome("errored", report=dataclasses.replace(report, workspace=path), note=note)

    def _new_workspace(self) -> Path:
        self.workspaces.append(self.state.workspaces.new(self.run.label))
        return self.workspaces[-1]

    def _needs_sandbox(self) -> bool:
        """Whether the run needs the sandbox: always, but in a regrade or a graded
        directory whose checks start no process (docs/replay.md, "Regrade";
        docs/agents.md, "No agent: grading existing directories")."""
        if self.state.settings.regrade is None and self.run.variant.graded_dir is None:
            return True
        return self.run.case.starts_processes

    def _regrade(self, context: RunContext) -> RunReport:
        # The regrade needs the runner (pydantic): imported when a session regrades.
        from pytest_evalcases.run.regrade import regrade

        assert self.state.settings.regrade is not None
        return regrade(
            self.run.case,
            self.run.variant,
            self.run.repetition,
            context,
            self.state.settings.regrade,
            self._new_workspace,
            self.state.results_root,
        )

    def _execute(self, context: RunContext) -> RunReport:
        """The attempts of a live run (or of a graded directory), counted by the
        budget: a run started ahead asked it in its own thread and counted its first
        attempt as it ended."""
        # The runner needs pydantic: imported with the first run, not at start-up.
        from pytest_evalcases.run.attempts import execute

        run, budget, key = self.run, self.budget, self.run.key
        first = None
        if self.ahead is not None and self.ahead.offered(key):
            first = functools.partial(self.ahead.take, key)
        counted = first is None and run.variant.graded_dir is None
        if counted and budget is not None:
            budget.admit()
        spends: tuple[Spent | None, ...] = ()
        # A first attempt started ahead was counted as its agent ended, before its judge.
        judged: Spent | None = None
        try:
            report = execute(
                run_case(self.state, run),
                run.variant,
                context,
                self._new_workspace,
                first,
                limit=self.limit,
                record_as=run_name(self.state, run),
            )
            spends = report.spends
            judged = report.judge_spent if report.attempts == 1 else None
        finally:
            if budget is not None and counted:
                budget.finished(total_spent(spends))
            elif budget is not None:
                more = total_spent((*spends[1:], judged))
                if more is not None:
                    budget.spent_more(more)
        return report


def _failed(error: RunError, workspace: Path | None = None) -> RunReport:
    """The report of a run that ``error`` left without a verdict outside the runner."""
    # The runner needs pydantic: imported with the first run, not at start-up.
    from pytest_evalcases.run.runner import RunReport

    return RunReport.failed(error, workspace=workspace)
