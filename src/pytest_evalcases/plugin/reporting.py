"""What the plugin reports: each eval item's record on its test report, the records
gathered on the controller, the ``eval gate`` terminal summary, the header line, the
results file and the HTML report when the session ends."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest

from pytest_evalcases.errors import UsageError
from pytest_evalcases.kinds import Outcome
from pytest_evalcases.plugin import cache
from pytest_evalcases.plugin.nodes import BrokenFileItem, EvalItem, NoVerdict, as_reason
from pytest_evalcases.plugin.signals import Interrupts
from pytest_evalcases.plugin.stash import is_first_worker_or_controller, is_worker, runs_cases
from pytest_evalcases.report import messages, summary
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.sandbox import INSTALL_HINT
from pytest_evalcases.session.state import EvalSession

#: The outcome pytest-rerunfailures gives an attempt it runs again.
RERUN = "rerun"

#: The verdict line in the colours of pytest's own outcomes (its final line's).
VERDICT_MARKUP: dict[str, dict[str, bool]] = {
    "PASS": {"green": True, "bold": True},
    "BLOCKED": {"red": True, "bold": True},
    "INCONCLUSIVE": {"yellow": True, "bold": True},
}


def make_report(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """The ``pytest_runtest_makereport`` wrapper: an eval item's report says why in the
    user's terms and carries the run's record."""
    report = yield
    if not isinstance(item, (EvalItem, BrokenFileItem)):
        return report
    excinfo = call.excinfo
    if (
        report.when == "setup"
        and report.failed
        and excinfo is not None
        and isinstance(excinfo.value, NoVerdict)
    ):
        # Its text alone, as pytest shows a pytest.fail(..., pytrace=False): no
        # traceback, no exception name; in the short summary, a run's error by its kind
        # and message, not by the case's header.
        line = item.error_line() if isinstance(item, EvalItem) else None
        shown = excinfo.getrepr(style="value", chain=False)
        report.longrepr = as_reason(shown, item, line or excinfo.value.text)
    if isinstance(item, EvalItem) and report.skipped and isinstance(report.longrepr, tuple):
        # Point skip reasons at the case, not at the plugin line that skipped it.
        report.longrepr = (str(item.path), item.entry.line + 1, report.longrepr[2])
    # A session that runs no case records none: no results file, no gate.
    outcome = outcome_of(report) if runs_cases(item.config) else None
    if outcome is not None:
        record = item.record(outcome) if isinstance(item, EvalItem) else item.record()
        # A plain dict: xdist sends report attributes from workers to the controller.
        report.evalcases = record.to_dict()  # type: ignore[attr-defined]
        # Shown with -rP / -rA; the eval gate section says it whatever the options.
        for line in summary.did_nothing_lines([record]) + summary.refused_lines([record]):
            report.sections.append(("evalcases", line))
    return report


def outcome_of(report: pytest.TestReport) -> Outcome | None:
    """The run's outcome as results files count it, from the phase that decides it."""
    if report.when == "setup":
        if report.failed:
            return "error"
        return "skipped" if report.skipped else None
    if report.when == "call":
        if hasattr(report, "wasxfail"):
            return "xfailed"
        return "passed" if report.passed else "failed"
    return None


def header(state: EvalSession) -> str:
    """The ``evalcases:`` line of pytest's header."""
    settings = state.settings
    # The first variant's agent: the session's, or the one every variant names.
    agent = state.agent.name if state.agent is not None else None
    agent = agent or (settings.agent.name if settings.agent else None)
    if settings.regrade is not None:
        # No agent runs: each run is graded from what the results file stored.
        agent = f"none (regrading {messages.display_path(settings.regrade.path, Path.cwd())})"
    sandbox = ""
    if state.agent is not None:
        try:
            sandbox = state.sandbox.describe()
        except UsageError:
            # eval_sandbox = bwrap where it cannot run, a missing path: the preflight
            # stops the session and says why.
            sandbox = "not usable"
    described = summary.described_variants(state.factors()) if settings.regrade is None else {}
    return messages.session_header(agent, settings.variants, sandbox, described)


class SessionHooks:
    """The hooks that feed and read the session object; registered per config."""

    def __init__(self, config: pytest.Config, state: EvalSession, interrupts: Interrupts) -> None:
        self.config = config
        self.state = state
        self.interrupts = interrupts
        self.is_worker = is_worker(config)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "evalcases", None)
        if report.outcome == RERUN:
            # pytest-rerunfailures runs the item again: the attempt it replaces counts
            # neither in the gate nor in the results file, as in pytest's own report.
            return
        if data is not None:
            self.state.records.append(RunRecord.from_dict(data))
        elif report.failed:
            # Setup, call or teardown of a normal test: pytest counts each as a failure.
            self.state.other_failures += 1

    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        # Under xdist, as the controller hears of each item a worker starts.
        if not self.state.cases_started and not self.is_worker:
            path = self.config.rootpath / location[0]
            self.state.cases_started = self.state.discovery.case_file(path) is not None

    def _ran_cases(self) -> bool:
        """Whether the session has records to report, or began a case it did not
        finish (interrupted in its first case)."""
        return bool(self.state.records) or self.state.cases_started

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # A module that does not import fails the run, whatever the gate says.
        if report.failed:
            self.state.other_failures += 1

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(
        self, session: pytest.Session, exitstatus: int
    ) -> Generator[None, None, None]:
        # Before every other plugin's sessionfinish: pytest-json-report (tryfirst) reads
        # session.exitstatus in its own, and must read the status the process exits with.
        self._finish(session, exitstatus)
        return (yield)

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
        writer = is_first_worker_or_controller(self.config)
        cache.save(self.config, self.state.parse_cache, writer=writer)
        if self.is_worker or not self._ran_cases():
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            # Also pytest.exit() and xdist's stop after -x, which no signal announced.
            self.state.interrupt()
        elif session.shouldfail or session.shouldstop:
            stopped = session.shouldfail or session.shouldstop
            self.state.incomplete.append(f"stopped early: {stopped}")
        # Imported only now: the results file, the pins and the baseline are for
        # sessions that ran a case.
        from pytest_evalcases.session import finish

        with self.interrupts.quiet():
            finish.finish(self.state, self.config.invocation_params.dir)
        session.exitstatus = self.state.exit_status(int(exitstatus))

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        # Once xdist's workers are down (its sessionfinish) and the runs started ahead
        # have stopped: nothing writes a recording any more.
        if not self.is_worker and self.state.results_file is not None:
            from pytest_evalcases.session import finish

            finish.sweep_recordings(self.state)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.is_worker:
            return
        # A plain `pytest` whose ini names an agent this machine lacks: one line each.
        skipped = [
            messages.skipped_unavailable(reason)
            for reason in dict.fromkeys(self.state.unavailable.values())
        ]
        if not self.state.records and not (self.state.cases_started and self.state.incomplete):
            for line in skipped:
                terminalreporter.write_line(line, yellow=True)
            return
        hint = ""
        if self.state.agent is None:
            hint = "no agent configured: --eval-agent, or --eval-workspace to grade directories"
        terminalreporter.section("eval gate")
        every_case = terminalreporter.verbosity > 0
        report = self.state.report()
        *body, verdict = summary.lines(report, hint, every_case=every_case)
        for line in body:
            terminalreporter.write_line(line)
        # pytest's terminal writer decides on colour (--color, NO_COLOR, FORCE_COLOR).
        terminalreporter.write_line(verdict, **VERDICT_MARKUP.get(report.verdict.status, {}))
        for line in summary.did_nothing_lines(self.state.records):
            terminalreporter.write_line(line, yellow=True)
        for line in summary.refused_lines(self.state.records):
            terminalreporter.write_line(line, yellow=True)
        if self.state.agent is not None and self.state.settings.agent_home == "inherit":
            terminalreporter.write_line(messages.INHERITED_HOME)
        for agent, files in self.state.machine_config().items():
            terminalreporter.write_line(messages.machine_config(agent, files), yellow=True)
        for line in self._sandbox_lines():
            terminalreporter.write_line(line)
        for line in skipped:
            terminalreporter.write_line(line, yellow=True)
        if self.state.results_line:
            terminalreporter.write_line(self.state.results_line)

    def _sandbox_lines(self) -> list[str]:
        """Once: that live runs were not contained; which runs were refused writes."""
        live = [r for r in self.state.records if r.kind != "file" and r.outcome != "skipped"]
        if not live or self.state.agent is None:
            return []
        lines = []
        try:
            sandbox = self.state.sandbox
        except UsageError:
            sandbox = None
        if sandbox is not None and not sandbox.contained:
            asked = self.state.settings.sandbox.mode == "none"
            hint = "eval_sandbox = auto contains them" if asked else INSTALL_HINT
            lines.append(messages.not_contained(sandbox.reason, hint))
        refused = [
            (f"{r.case_id}[{r.variant}]" if r.variant else r.case_id, r.refused_writes)
            for r in live
            if r.refused_writes
        ]
        return lines + messages.refused_writes(refused)


class HtmlHooks:
    """``--eval-html``: the controller writes the report when the session ends."""

    def __init__(self, config: pytest.Config, state: EvalSession, path: Path) -> None:
        self.config = config
        self.state = state
        self.path = path
        self.line = ""

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        from pytest_evalcases.report import html as html_report

        try:
            html_report.write(
                self.path,
                self.state.report(),
                html_report.read_trend(self.state.settings.results_dir),
                title=f"eval gate: {self.config.rootpath.name}",
                selection=self.state.selection,
                results_file=self._results_file(),
            )
        except OSError as exc:
            self.line = f"html report not written: {self.path}: {exc}"
        else:
            self.line = f"html report: {self.path}"

    def _results_file(self) -> Path | None:
        """The results file whose ``.runs`` directory holds this session's recordings."""
        if self.state.settings.record is None:
            return None
        return self.state.settings.results_file(self.state.started)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.line:
            terminalreporter.write_line(self.line)
