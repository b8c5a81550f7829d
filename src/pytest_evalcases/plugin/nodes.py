"""Collection and run-time nodes: a case file becomes one item per case, variant and
repetition; a broken case file becomes one erroring item."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_evalcases.cases.limits import shown_path
from pytest_evalcases.cases.parsecache import CaseEntry
from pytest_evalcases.errors import CaseFileError, RunError
from pytest_evalcases.kinds import Outcome
from pytest_evalcases.plugin.stash import AHEAD_KEY, BUDGET_KEY, runs_cases, session_of
from pytest_evalcases.report import messages
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.run.workspace import Variant
from pytest_evalcases.session import ending, orchestration
from pytest_evalcases.session.casefile import CaseFileCases
from pytest_evalcases.session.orchestration import CaseRun, PlannedRun
from pytest_evalcases.session.record import file_record, run_record

if TYPE_CHECKING:
    # Loading and running need pydantic and PyYAML; they are imported when the first
    # case file is collected, so that pytest runs without eval cases start fast.
    from pytest_evalcases.cases.loading import LoadedCase
    from pytest_evalcases.run.runner import OuterLimit, RunReport


class CheckFailure(AssertionError):
    """Raised by :meth:`EvalItem.runtest` when checks did not hold: ``text`` for the
    failure's section, ``line`` for the short test summary. An ``AssertionError``, as a
    failed ``assert`` is: reporters that tell a failure from a broken test by the
    exception (allure-pytest) call it failed."""

    def __init__(self, text: str, line: str) -> None:
        super().__init__(text)
        self.text = text
        self.line = line


class NoVerdict(Exception):
    """Raised in an item's ``setup`` when something prevented a verdict (the run's
    error, a case file that does not load, a sandbox that cannot run): a pytest error,
    and neither an ``AssertionError`` nor ``pytest.fail``'s exception, which reporters
    such as allure-pytest count as the test's failure rather than as broken.
    ``text`` is all the report shows."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class EvalFile(pytest.File):
    """A ``.yaml`` / ``.yml`` / ``.json`` case file under an evals root.

    An unchanged file that validated in an earlier run is collected from the parse
    cache's index, without loading it; its cases are loaded, once per file, when the
    first of its items runs (``--collect-only`` and IDE discovery never load them).
    """

    #: A task directory's ``checks.yaml``: one case, never in the parse cache's index.
    task = False

    def __init__(self, *, evals_root: Path, **kwargs: Any) -> None:
        path, parent = kwargs.get("path"), kwargs.get("parent")
        if path is not None and parent is not None and shown_path(path) != str(path):
            # A name that is not UTF-8 would reach pytest's own cache and every report
            # as it is, and none of them could write it: the node shows it escaped.
            relative = os.path.relpath(path, parent.config.rootpath).replace(os.sep, "/")
            kwargs.setdefault("name", shown_path(path.name))
            kwargs.setdefault("nodeid", shown_path(relative))
        super().__init__(**kwargs)
        self.evals_root = evals_root
        #: The file's cases, loaded when the first of its items runs.
        self.cases = CaseFileCases(self.path, evals_root, task=self.task)

    def case(self, case_id: str) -> LoadedCase:
        """The validated case ``case_id`` (see :meth:`CaseFileCases.case`)."""
        base = self.config.invocation_params.dir
        return self.cases.case(session_of(self.config), case_id, base)

    def collect(self) -> Iterator[pytest.Item]:
        session = session_of(self.config)
        try:
            entries = self.cases.entries(session)
        except CaseFileError as exc:
            yield BrokenFileItem.from_parent(self, name=shown_path(self.path.name), error=exc)
            return
        for entry in entries:
            session.ids.setdefault(entry.id, {}).setdefault(self.path, entry.line + 1)
        for entry in entries:
            session.perturb_gaps += orchestration.unperturbed(entry, session.settings)
            for run in orchestration.slots(entry, session.settings):
                yield EvalItem.from_parent(
                    self,
                    name=run.name,
                    entry=entry,
                    variant=run.variant,
                    repetition=run.repetition,
                    perturbation=run.perturbation,
                )


class TaskDirFile(EvalFile):
    """A task directory's ``checks.yaml``: one case named after the directory
    (docs/case-format.md)."""

    task = True


def passed_over(directory: pytest.Directory) -> list[EvalFile]:
    """Collectors for the case files of ``directory`` that pytest's walk passes over
    without a word (a dangling or looping symlink, a FIFO, a device): each becomes one
    case-file error, and none is opened (docs/case-format.md)."""
    config = directory.config
    found = []
    for path, kind in session_of(config).discovery.passed_over(directory.path):
        if directory.ihook.pytest_ignore_collect(collection_path=path, config=config):
            continue
        node = TaskDirFile if kind.kind == "task" else EvalFile
        found.append(node.from_parent(directory, path=path, evals_root=kind.evals_root))
    return found


def _display(config: pytest.Config, path: Path | str) -> str:
    return messages.display_path(path, config.invocation_params.dir)


def case_file_message(config: pytest.Config, error: CaseFileError) -> str:
    """``case file error: FILE:LINE: FIELD: reason``, the file relative to the
    invocation directory."""
    return messages.case_file_message(error, config.invocation_params.dir)


def as_reason(longrepr: Any, item: pytest.Item, text: str) -> Any:
    """A report's ``longrepr`` of pytest's own (an exception shown by its value alone),
    its crash line made ``text`` at the case's place: the short test summary and
    ``--tb=line`` then give the reason as the user should read it, with no exception
    name and no line of the plugin, on every pytest version. Both show the first line
    of ``text`` only, cut to the terminal's width: it says what failed first."""
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        path, line, _ = item.reportinfo()
        crash.path = str(path)
        crash.lineno = (line or 0) + 1
        crash.message = text
    return longrepr


class _Reported(pytest.Item):
    """An item whose errors are reported in its own words (:class:`NoVerdict`)."""

    def _repr_failure_py(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> Any:
        # pytest formats a setup error's traceback, source lines of every frame, before
        # make_report (plugin/reporting.py) replaces it with the text: about 0.1 s of
        # CPU per errored case, for nothing.
        if isinstance(excinfo.value, NoVerdict):
            return excinfo.value.text
        return super()._repr_failure_py(excinfo, style)


class BrokenFileItem(_Reported):
    """Stands for a case file that does not load: it errors with the reason.

    An item rather than a collection error, so that the other case files still run.
    """

    def __init__(self, *, error: CaseFileError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.message = self._message()

    def _message(self) -> str:
        return case_file_message(self.config, self.error)

    def record(self) -> RunRecord:
        return file_record(
            self.error,
            name=shown_path(self.path.name),
            file=shown_path(_display(self.config, self.path)),
            nodeid=self.nodeid,
            message=self.message,
        )

    def setup(self) -> None:
        raise NoVerdict(self.message)

    def runtest(self) -> None:  # pragma: no cover - setup always fails
        raise NoVerdict(self.message)

    def reportinfo(self) -> tuple[Path, int, str]:
        return (
            Path(shown_path(self.path)),
            (self.error.line or 1) - 1,
            f"case file {shown_path(self.path.name)}",
        )


class EvalItem(_Reported):
    """One run of one case: the agent runs in ``setup`` (so that anything preventing a
    verdict is a pytest *error*), the checks' verdict is raised in ``runtest``."""

    parent: EvalFile

    def __init__(
        self,
        *,
        entry: CaseEntry,
        variant: Variant,
        repetition: int,
        perturbation: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        #: What collection knew of the case; :attr:`case` is the validated case.
        self.entry = entry
        self.variant = variant
        self.repetition = repetition
        #: ``CLASS-K`` of a perturbed run, ``None`` for the prompt as written.
        self.perturbation = perturbation
        self.add_marker(entry.severity)
        # Tags are keywords (in reports too): `-k deploy` selects the cases tagged deploy.
        for tag in entry.tags:
            self.keywords[tag] = True
        self.extra_keyword_matches.update(entry.tags)
        self.run_report: RunReport | None = None
        self.run_error: RunError | None = None
        #: pytest-timeout's limit on this item, which the plugin enforces itself.
        self.limit: OuterLimit | None = None

    @property
    def case(self) -> LoadedCase:
        """The validated case, loaded with its file when first needed."""
        return self.parent.case(self.entry.id)

    def planned(self) -> PlannedRun:
        """The run this item stands for; :class:`CaseFileError` when its case file no
        longer loads."""
        return PlannedRun(
            case=self.case,
            variant=self.variant,
            repetition=self.repetition,
            perturbation=self.perturbation,
            label=self.name,
            key=self.nodeid,
        )

    def setup(self) -> None:
        # A rerun (pytest-rerunfailures) sets the item up again: nothing of the attempt
        # it replaces may decide this one.
        self.run_report = None
        self.run_error = None
        state = session_of(self.config)
        load_error = None
        try:
            run = self.planned()
        except CaseFileError as exc:
            load_error = exc
        if load_error is not None:
            # Outside the except block, so that no exception chain is shown.
            raise NoVerdict(case_file_message(self.config, load_error))
        stash = self.config.stash
        case_run = CaseRun(
            state,
            run,
            budget=stash.get(BUDGET_KEY, None),
            ahead=stash.get(AHEAD_KEY, None),
            limit=self.limit,
        )
        try:
            # --setup-plan and --setup-only call setup, where the agent would run.
            outcome = case_run.outcome(dry=not runs_cases(self.config))
        except pytest.fail.Exception as exc:
            # A SIGALRM handler failed the test in the middle of the run: pytest-timeout
            # before 2.1, which has no hook to leave eval items to the plugin. The run's
            # processes were killed on the way out (docs/agents.md, "pytest-timeout").
            outcome = case_run.stopped(
                f"stopped by {exc.msg or 'pytest.fail'!r} while the case ran (its "
                "processes were killed); pytest-timeout 2.1 or later lets the case's "
                "own timeout stop it with a report"
            )
        if outcome.kind == "skipped":
            pytest.skip(outcome.reason)
        if outcome.kind == "unrunnable":
            raise NoVerdict(outcome.reason)
        self.run_report = outcome.report
        self.run_error = outcome.error
        if outcome.error is not None:
            raise NoVerdict(ending.error_text(state, run, outcome))

    def runtest(self) -> None:
        report = self.run_report
        assert report is not None
        end = ending.ending(session_of(self.config), self.planned(), report)
        self.run_report = end.report
        if end.kind == "passed":
            # Every check, as pytest reports what a test printed: shown with `-rP` /
            # `-rA`, in JUnit's `system-out` with `junit_logging`, never by default.
            self.add_report_section("call", "stdout", end.text)
        elif end.kind == "xfailed":
            pytest.xfail(end.text)
        else:
            raise CheckFailure(end.text, end.line)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CheckFailure):
            return as_reason(excinfo.getrepr(style="value"), self, excinfo.value.line)
        if isinstance(excinfo.value, pytest.xfail.Exception):
            # An advisory case's failed checks: pytest shows the reason, never this text,
            # and formatting the traceback costs about 0.1 s of CPU per case.
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.entry.line, f"eval case {self.name}"

    def error_line(self) -> str | None:
        """The one line of why the run reached no verdict; ``None`` when it did."""
        if self.run_error is None:
            return None
        return messages.error_line(self.run_error, session_of(self.config).redact)

    def record(self, outcome: Outcome = "error") -> RunRecord:
        """This run as a record, with ``outcome`` as the controller will count it."""
        case: LoadedCase | CaseFileError
        try:
            case = self.case
        except CaseFileError as exc:
            # The case file stopped loading after collection.
            case = exc
        record = run_record(
            self.entry,
            case,
            self.variant,
            self.repetition,
            outcome,
            self.run_report,
            redact=session_of(self.config).redact,
            file=_display(self.config, self.path),
            nodeid=self.nodeid,
            invocation_dir=self.config.invocation_params.dir,
            loop_threshold=session_of(self.config).settings.loop_threshold,
        )
        record.perturbation = self.perturbation
        return record
