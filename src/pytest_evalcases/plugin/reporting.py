"""What the plugin reports: each eval item's record on its test report, the records
gathered on the controller, the ``eval gate`` terminal summary (its lines are
:mod:`pytest_evalcases.session.terminal`'s), the results file and the HTML report when
the session ends."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest

from pytest_evalcases.kinds import Outcome
from pytest_evalcases.plugin import cache
from pytest_evalcases.plugin.nodes import BrokenFileItem, EvalItem, NoVerdict, as_reason
from pytest_evalcases.plugin.stash import is_first_worker_or_controller, is_worker, runs_cases
from pytest_evalcases.report import summary
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.session import htmlfile, terminal
from pytest_evalcases.session.interrupts import Interrupts
from pytest_evalcases.session.state import EvalSession

#: The outcome pytest-rerunfailures gives an attempt it runs again.
RERUN = "rerun"


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
        if self.is_worker or not self.state.ran_cases():
            return
        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        self.state.stopped(interrupted=interrupted, early=session.shouldfail or session.shouldstop)
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
        said = terminal.gate_summary(self.state, every_case=terminalreporter.verbosity > 0)
        if said.section:
            terminalreporter.section(said.section)
        for line, markup in said.lines:
            # pytest's terminal writer decides on colour (--color, NO_COLOR, FORCE_COLOR).
            terminalreporter.write_line(line, **markup)
        # GitHub reads workflow commands on the real stdout, where the terminal writes.
        for command in self.state.workflow_commands:
            terminalreporter.write_line(command)


class HtmlHooks:
    """``--eval-html``: the controller writes the report when the session ends."""

    def __init__(self, config: pytest.Config, state: EvalSession, path: Path) -> None:
        self.config = config
        self.state = state
        self.path = path
        self.line = ""

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        title = f"eval gate: {self.config.rootpath.name}"
        self.line = htmlfile.write(self.state, self.path, title)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.line:
            terminalreporter.write_line(self.line)
