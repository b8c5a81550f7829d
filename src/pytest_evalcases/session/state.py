"""Session state: the run's settings (:mod:`.settings`), the cases seen at collection,
and the records that reports carry back to the controller. One object, kept in
``config.stash`` by the plugin."""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_evalcases.cases.discovery import Discovery
from pytest_evalcases.redact import Redactor
from pytest_evalcases.results import gate
from pytest_evalcases.results.policy import BaselinePolicy, GatePolicy
from pytest_evalcases.run.workspace import Variant, WorkspaceDirs
from pytest_evalcases.sandbox import Sandbox, choose
from pytest_evalcases.session.settings import Settings

if TYPE_CHECKING:
    # Imported where they are used, so that a pytest run without eval cases does not
    # pay for them: the check registry and the runner (pydantic) when a case file is
    # first loaded, the agent's side when an agent is named, the baseline with
    # --eval-baseline.
    from pytest_evalcases.agents.base import Agent
    from pytest_evalcases.agents.preflight import Checked
    from pytest_evalcases.cases.parsecache import ParseCache
    from pytest_evalcases.cases.registry import CheckRegistry
    from pytest_evalcases.recording.recorder import Recorder
    from pytest_evalcases.recording.source import ReplaySource
    from pytest_evalcases.results import baseline
    from pytest_evalcases.results.document import ResultsDocument, SuiteSelection
    from pytest_evalcases.results.factors import Factors
    from pytest_evalcases.results.record import RunRecord
    from pytest_evalcases.run.failfast import Stops
    from pytest_evalcases.run.judge import JudgeSetup
    from pytest_evalcases.run.runner import RunContext
    from pytest_evalcases.run.scheduler import Backoff


#: The reason in ``incomplete_reasons`` of a run cut short by Ctrl-C or a signal.
INTERRUPTED = "interrupted"


def relative_path(path: Path, start: Path) -> str:
    """``path`` relative to ``start``, with ``/`` between the parts."""
    try:
        return Path(os.path.relpath(path, start)).as_posix()
    except ValueError:
        return path.as_posix()


@dataclass
class EvalSession:
    """What the plugin knows during one pytest session."""

    settings: Settings
    #: The agent of the session: the first variant's that runs one (the baseline's).
    agent: Agent | None
    #: Called once with the registry of check types, for plugins to add theirs.
    register_checks: Callable[[CheckRegistry], None] = lambda registry: None
    #: case id -> {file: 1-based line} of every collected case with that id: an id
    #: in two files makes each of those cases an error (docs/case-format.md).
    ids: dict[str, dict[Path, int]] = field(default_factory=dict)
    #: :attr:`ids`' keys frozen, made again when an id was added (ids are never removed).
    _case_ids: frozenset[str] = field(default=frozenset(), repr=False)
    records: list[RunRecord] = field(default_factory=list)
    #: Secrets of the environment as the session started, redacted from everything.
    redact: Redactor = field(default_factory=Redactor)
    #: Parsed case files of earlier runs (pytest's cache); ``None`` without a cache.
    parse_cache: ParseCache | None = None
    #: failed or errored items that are not eval cases (normal tests)
    other_failures: int = 0
    started: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    #: Why the run did not finish (interrupted, a worker crashed); empty when it did.
    incomplete: list[str] = field(default_factory=list)
    #: Whether an eval item began (on the controller, under xdist too): a run
    #: interrupted in its first case, which finished none, still writes its incomplete
    #: results file and the summary.
    cases_started: bool = False
    #: ``--eval-baseline``: the stored document, and this run compared with it.
    baseline_doc: ResultsDocument | None = None
    baseline_result: baseline.BaselineResult | None = None
    #: What the summary says about the results file.
    results_line: str = ""
    #: Why the results file could not be written (``results file not written: PATH:
    #: why``); empty when it was, or none was to be. Such a run is never PASS.
    unsaved: str = ""
    #: The results file this session wrote; ``None`` before, or when it wrote none.
    results_file: Path | None = None
    #: GitHub Actions' workflow commands for the results file, to print at the end of
    #: the summary (docs/ci.md, "Job summary and annotations"); empty elsewhere.
    workflow_commands: list[str] = field(default_factory=list)
    #: Where this process makes the workspaces of its runs.
    workspaces: WorkspaceDirs = field(default_factory=WorkspaceDirs)
    #: The agent as the preflight found it (its version); ``None`` when none ran.
    preflight: Checked | None = None
    #: Each variant's agent, by variant name, where the variants run different agents,
    #: models or arguments (docs/variants.md); a variant not named here runs ``agent``.
    agents: dict[str, Agent | None] = field(default_factory=dict)
    #: What the preflight found of each variant's agent, by variant name.
    preflights: dict[str, Checked] = field(default_factory=dict)
    #: Why a variant's agent cannot run, by variant name, in a run that did not ask
    #: for eval cases: its cases are skipped with this reason (docs/agents.md,
    #: "Beside your other tests").
    unavailable: dict[str, str] = field(default_factory=dict)
    #: What part of the suite the run selected, once collection said (under xdist, as
    #: a worker reported it); ``None`` before.
    selection: SuiteSelection | None = None
    #: ``(case id, class, why)`` of each perturbation class that makes no item of a
    #: selected case (docs/perturbation.md); under xdist, as the first worker found them.
    perturb_gaps: list[tuple[str, str, str]] = field(default_factory=list)
    #: The gate's report (:meth:`report`) and what it was decided on: the number of
    #: records, why the run is incomplete, whether a case began, the baseline
    #: comparison; ``None`` before.
    decided: tuple[tuple[object, ...], gate.GateReport] | None = None

    @functools.cached_property
    def discovery(self) -> Discovery:
        """Which files are case files, by the settings' rootdir and ini options."""
        s = self.settings
        return Discovery(s.rootdir, s.eval_paths, s.ignore)

    @functools.cached_property
    def registry(self) -> CheckRegistry:
        """The check types: built-in, entry points, and the plugins' hook."""
        from pytest_evalcases.run.checks import default_registry

        registry = default_registry()
        self.register_checks(registry)
        return registry

    @functools.cached_property
    def sandbox(self) -> Sandbox:
        """The sandbox in force, chosen once per process (``auto`` tries bubblewrap);
        :class:`~pytest_evalcases.errors.UsageError` when ``bwrap`` cannot run."""
        given = self.settings.sandbox
        root = self.settings.rootdir
        return choose(
            given.mode,
            read_only=[root / p for p in given.read_only],
            writable=[root / p for p in given.writable],
            network=given.network,
            # The rootdir stays visible (an agent script or a check's helper in the
            # repository) even where it is below /tmp, read-only.
            visible=[root],
        )

    @functools.cached_property
    def repository(self) -> Path | None:
        """The git work tree of the rootdir, which runs without a sandbox must leave as
        they found it; ``None`` outside one."""
        from pytest_evalcases.containment import tree_state

        state = tree_state(self.settings.rootdir)
        return state.root if state is not None else None

    @functools.cached_property
    def backoff(self) -> Backoff:
        """When the next agent run may start after rate limits: one for the process,
        shared by the scheduler and the retries."""
        from pytest_evalcases.run.scheduler import Backoff

        return Backoff()

    @functools.cached_property
    def stops(self) -> Stops:
        """The agents and credentials whose runs are not started any more after an
        authentication or unreachable-API failure: one for the process."""
        from pytest_evalcases.run.failfast import Stops

        return Stops()

    @functools.cached_property
    def recorder(self) -> Recorder:
        """The recorder of this process's live runs; its proxy starts with the first
        run that needs it (docs/replay.md, "Recording"). A session that records nothing
        has one too: its proxy answers from the recordings when it replays, and from a
        case's script (docs/config-contract.md), and sees what the CLI sent its model for
        the cases whose checks read it."""
        from pytest_evalcases.recording.recorder import Recorder

        return Recorder(self.settings.record, self.redact)

    @functools.cached_property
    def replay_source(self) -> ReplaySource | None:
        """The recordings this process's runs replay (docs/replay.md, "Replay")."""
        if self.settings.replay is None:
            return None
        from pytest_evalcases.recording.source import ReplaySource

        return ReplaySource(self.settings.replay, self.redact)

    @functools.cached_property
    def judge(self) -> JudgeSetup:
        """Who answers the judge checks (``eval_judge_agent``, ``eval_judge_model``;
        the run's own agent by default) and their calibration, read from the report
        beside ``eval_judge_calibration`` (docs/judge.md)."""
        from pytest_evalcases.errors import UsageError
        from pytest_evalcases.results.calibration import (
            CalibrationError,
            read_report,
            report_path,
        )
        from pytest_evalcases.run.judge import JudgeSetup

        settings = self.settings
        calibration = {}
        if settings.judge_calibration is not None:
            try:
                calibration = read_report(report_path(settings.judge_calibration))
            except CalibrationError as exc:
                raise UsageError(f"eval_judge_calibration: {exc}") from None
        agent = None
        base = settings.agent
        name = settings.judge_agent or (base.name if base is not None else "")
        # A regrade asked to re-judge has no agent of its own to ask.
        if name and (settings.judge_agent or settings.judge_model or settings.judge_reask):
            from pytest_evalcases.agents import make_agent
            from pytest_evalcases.agents.base import AgentSettings

            own = base is not None and base.name == name
            agent = make_agent(
                AgentSettings(
                    name=name,
                    command=base.command if own and base is not None else None,
                    model=settings.judge_model or (base.model if own and base else None),
                    placeholders=base.placeholders if base is not None else {},
                )
            )
        return JudgeSetup(agent, calibration, reask=settings.judge_reask)

    def stop_recording(self) -> None:
        """Stop the recording proxy, when a run started it."""
        recorder = self.__dict__.get("recorder")
        if recorder is not None:
            recorder.close()

    def agent_for(self, variant: Variant) -> Agent | None:
        """The agent that runs ``variant``'s cases."""
        return self.agents.get(variant.name, self.agent)

    def agent_name(self, variant: Variant) -> str | None:
        """The name of the agent ``variant``'s cases run on, as configured (also when a
        regrade runs none); ``None`` for a graded directory or no agent."""
        if variant.graded_dir is not None:
            return None
        given = self.settings.agents.get(variant.name, self.settings.agent)
        return given.name if given is not None and given.name else None

    def machine_config(self) -> dict[str, tuple[Path, ...]]:
        """Each agent's machine-wide configuration files, found by its preflight, by
        agent name, in the variants' order; agents that read none are left out."""
        found: dict[str, tuple[Path, ...]] = {}
        for variant in self.settings.variants:
            checked = self.preflights.get(variant.name)
            name = self.agent_name(variant)
            if checked is not None and checked.machine_config and name:
                found.setdefault(name, checked.machine_config)
        return found

    def factors(self) -> dict[str, Factors]:
        """What each variant that runs an agent is made of, by name (docs/variants.md)."""
        from pytest_evalcases.results.factors import WORKING_TREE, Factors

        found: dict[str, Factors] = {}
        for variant in self.settings.variants:
            if variant.graded_dir is not None:
                continue
            given = self.settings.agents.get(variant.name, self.settings.agent)
            found[variant.name] = Factors(
                agent=given.name if given is not None else "",
                model=(given.model or "") if given is not None else "",
                args=tuple(given.args) if given is not None else (),
                config=variant.source or WORKING_TREE,
            )
        return found

    def context(self, variant: Variant | None = None, *, sandboxed: bool = True) -> RunContext:
        """The inputs of a run of ``variant`` (the session's agent without one); without
        ``sandboxed``, for a regrade whose checks start no process, no sandbox is chosen
        (choosing one may try bubblewrap)."""
        from pytest_evalcases.run.runner import RunContext

        sandbox = self.sandbox if sandboxed else Sandbox(reason="no check starts a process")
        results = self.settings.results
        record = self.settings.record
        # A regrade and a graded directory start no agent: nothing of theirs is recorded
        # or replayed (nor the recorder's modules imported), no repository watched.
        agent_runs = self.settings.regrade is None and (
            variant is None or variant.graded_dir is None
        )
        checked = self.preflights.get(variant.name, self.preflight) if variant else self.preflight
        return RunContext(
            registry=self.registry,
            agent=self.agent if variant is None else self.agent_for(variant),
            default_timeout=self.settings.timeout,
            retries=self.settings.retries,
            transcript=self.settings.transcript,
            agent_home=self.settings.agent_home,
            sandbox=sandbox,
            # Watched around agent runs only (a run that starts none starts no git).
            repository=self.repository if agent_runs and not sandbox.contained else None,
            session_paths=tuple(
                p
                for p in (
                    results.results_dir,
                    results.save_path,
                    record.directory if record is not None else None,
                )
                if p is not None
            ),
            case_ids=self.case_ids(),
            backoff=self.backoff,
            stops=self.stops,
            agent_version=checked.version if checked is not None else None,
            recorder=self.recorder if agent_runs else None,
            replay=self.replay_source if agent_runs else None,
            judge=self.judge,
        )

    def case_ids(self) -> frozenset[str]:
        """Every collected case's id; made once, not once a run (a suite of N cases
        would make N sets of N ids)."""
        if len(self._case_ids) != len(self.ids):
            self._case_ids = frozenset(self.ids)
        return self._case_ids

    @property
    def interrupted(self) -> bool:
        return INTERRUPTED in self.incomplete

    def interrupt(self) -> None:
        """Record that the run was interrupted. Called by the signal handler the moment
        a signal arrives, before pytest sees its ``KeyboardInterrupt``: whatever cuts
        the session short afterwards (a second Ctrl-C while pytest reports the first
        lets it finish as if nothing had happened), the run is not complete."""
        if not self.interrupted:
            self.incomplete.append(INTERRUPTED)

    def ran_cases(self) -> bool:
        """Whether the session has records to report, or began a case it did not
        finish (interrupted in its first case)."""
        return bool(self.records) or self.cases_started

    def stopped(self, *, interrupted: bool, early: object) -> None:
        """How the session ended, before its results are written: ``interrupted`` (also
        by ``pytest.exit()`` and xdist's stop after ``-x``, which no signal announced),
        else stopped ``early`` (``-x``, ``--maxfail``: pytest's reason) when it was."""
        if interrupted:
            self.interrupt()
        elif early:
            self.incomplete.append(f"stopped early: {early}")

    def needs_agent(self, variant: Variant) -> bool:
        """Whether ``variant`` would run an agent, but none is configured for it."""
        return (
            variant.graded_dir is None
            and self.agent_for(variant) is None
            and self.settings.regrade is None
        )

    @property
    def results_root(self) -> Path | None:
        """The directory of the results file this session writes; ``None`` without one."""
        written = self.settings.results_file(self.started)
        return written.parent if written is not None else None

    def policy(self) -> GatePolicy:
        """The gate policy of the settings (docs/results.md, "The gate policy"), its
        baseline's file relative to the directory of the results file."""
        s = self.settings
        plan = s.perturb
        given = s.results.baseline
        root = self.results_root
        return GatePolicy(
            min_pass_rate=s.min_pass_rate,
            red_first=s.red_first,
            skill_limits=s.skill_limits,
            perturbed_block=plan is not None and plan.blocking,
            perturb_max_delta=plan.max_delta if plan is not None else None,
            baseline=BaselinePolicy(
                relative_path(given, root) if root is not None else given.as_posix(),
                s.results.tolerance,
            )
            if given is not None
            else None,
            override=s.override,
        )

    def report(self) -> gate.GateReport:
        """The gate's report of the session (:func:`gate.decide
        <pytest_evalcases.results.gate.decide>`), decided once when first asked for
        (once every record arrived and the run was compared with its baseline), and
        again only if a record, an interrupt or the comparison came after. Its verdict
        is the results file's, the summary's and the exit status's; never PASS, though,
        when the results file could not be written (``unsaved``)."""
        inputs = (
            len(self.records),
            tuple(self.incomplete),
            self.cases_started,
            self.baseline_result,
        )
        if self.decided is None or self.decided[0] != inputs:
            report = gate.decide(
                self.records,
                self.policy(),
                order=[v.name for v in self.settings.variants],
                factors=self.factors(),
                incomplete=tuple(self.incomplete),
                started=self.cases_started,
                baseline=self.baseline_result,
            )
            self.decided = (inputs, report)
        report = self.decided[1]
        if self.unsaved:
            report = dataclasses.replace(report, verdict=gate.unsaved(report.verdict, self.unsaved))
        return report

    def exit_status(self, pytest_status: int) -> int:
        """The run's exit status: the gate's, never hiding a failure pytest saw (a
        normal test that failed makes it 1, also beside errored cases or a run that
        ``-x`` stopped, which the gate calls INCONCLUSIVE); 2 for an interrupted run, as
        pytest's own, also when a second interrupt kept pytest from noticing the first."""
        if pytest_status not in (0, 1):
            return pytest_status
        if self.interrupted:
            return gate.EXIT_INCONCLUSIVE
        code = self.report().verdict.exit_code
        if code is None:
            return pytest_status
        if self.other_failures and code != gate.EXIT_BLOCKED:
            return 1
        return code
