"""pytest side of the authoring workflow: ``--eval-lint``, ``--eval-red-first`` and
``--eval-changed``. Small hook classes that :mod:`.hooks` registers only when their
option is given; the substance is in :mod:`.lint` and :mod:`.changed`."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.authoring import lint
from pytest_evalcases.plugin.nodes import BrokenFileItem, EvalFile, EvalItem
from pytest_evalcases.plugin.stash import is_worker, session_of
from pytest_evalcases.session.changed import ChangedFiles
from pytest_evalcases.text import plural

#: ``user_properties`` key under which the lint item sends its findings to the
#: controller (report attributes travel under xdist).
LINT_PROPERTY = "evalcases_lint"
LINT_ITEM = "eval-lint"
#: How many changed files the header names before "and N more".
SHOWN_FILES = 10


class LintFailure(Exception):
    """The lint found errors; the message lists them."""


class LintItem(pytest.Item):
    """``--eval-lint``: one item that lints every collected case file; it fails when
    the lint finds an error, and its findings are printed in the ``eval lint`` section."""

    def __init__(self, *, files: list[lint.CaseFile], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.files = files

    def runtest(self) -> None:
        state = session_of(self.config)
        root = state.settings.config_root or state.settings.rootdir
        findings = lint.lint_files(self.files, root, state.registry)
        base = self.config.invocation_params.dir
        lines = [f.format(base) for f in sorted(findings, key=_order)]
        self.user_properties.append((LINT_PROPERTY, lines))
        errors = [f.format(base) for f in findings if f.level == lint.ERROR]
        if errors:
            raise LintFailure(
                f"{plural(len(errors), 'lint error')} in case files:\n" + "\n".join(errors)
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, LintFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, "eval lint of the collected case files"


def _order(finding: lint.Finding) -> tuple[str, int]:
    return str(finding.path), finding.line or 0


def _case_files(items: list[pytest.Item], rootdir: Path) -> list[lint.CaseFile]:
    files: dict[Path, lint.CaseFile] = {}
    roots: set[Path] = set()
    for item in items:
        if isinstance(item, (EvalItem, BrokenFileItem)) and isinstance(item.parent, EvalFile):
            roots.add(item.parent.evals_root)
            files.setdefault(item.path, lint.CaseFile(item.path, item.parent.evals_root))
    suite = next(iter(roots)) if len(roots) == 1 else rootdir
    return [lint.CaseFile(f.path, f.evals_root, suite=suite) for f in files.values()]


class LintHooks:
    """Adds the lint item after selection (so ``-k``/``-m`` never drop it) and prints
    its findings on the controller."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> Generator[None, None, None]:
        files = _case_files(items, config.rootpath)
        try:
            return (yield)
        finally:
            if files:
                item = LintItem.from_parent(session, name=LINT_ITEM, nodeid=LINT_ITEM, files=files)
                items.insert(0, item)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key == LINT_PROPERTY and report.when == "call" and isinstance(value, list):
                self.lines.extend(str(line) for line in value)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if is_worker(terminalreporter.config):
            return
        terminalreporter.section("eval lint")
        for line in self.lines:
            terminalreporter.write_line(line)
        errors = sum(1 for line in self.lines if ": ERROR " in line)
        warnings = len(self.lines) - errors
        terminalreporter.write_line(
            f"eval lint: {plural(errors, 'error')}, {plural(warnings, 'warning')}"
        )


class RedFirstHooks:
    """``--eval-red-first``: says which cases are red, as they should be, and which pass
    on first write."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if is_worker(self.config):
            return
        records = [r for r in session_of(self.config).records if r.kind != "file"]
        red = sorted({r.case_id for r in records if r.outcome == "passed"})
        green = sorted({r.case_id for r in records if r.outcome == "failed"})
        if not red and not green:
            return
        terminalreporter.section("eval red-first")
        terminalreporter.write_line(
            f"{plural(len(red), 'case')} red, as they should be; "
            f"{len(green)} pass{'es' if len(green) == 1 else ''} on first write "
            "(they test nothing until the case is made stricter)"
        )
        for case_id in green:
            terminalreporter.write_line(f"  passes on first write: {case_id}")


class ChangedHooks:
    """``--eval-changed``: names the changed files in the header and, after collection,
    how many cases they select."""

    def __init__(self, changed: ChangedFiles) -> None:
        self.changed = changed
        self.before = 0
        self.after = 0

    def pytest_report_header(self) -> list[str]:
        paths = self.changed.paths
        shown = ", ".join(paths[:SHOWN_FILES])
        if len(paths) > SHOWN_FILES:
            shown += f" and {len(paths) - SHOWN_FILES} more"
        count = plural(len(paths), "changed file")
        return [
            f"evalcases: --eval-changed since {self.changed.describe()}: {count}"
            + (f": {shown}" if paths else "")
        ]

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(
        self, items: list[pytest.Item]
    ) -> Generator[None, None, None]:
        self.before = _cases(items)
        try:
            return (yield)
        finally:
            self.after = _cases(items)

    def pytest_report_collectionfinish(self) -> str:
        return (
            f"evalcases: --eval-changed selects {self.after} of {self.before} "
            f"case{'s' if self.before != 1 else ''} "
            "(those whose case file, fixture or defended file changed)"
        )


def _cases(items: list[pytest.Item]) -> int:
    return len({(i.path, i.entry.id) for i in items if isinstance(i, EvalItem)})
