"""pytest side of the authoring workflow: ``--eval-lint``, ``--eval-red-first`` and
``--eval-changed``. Small hook classes that :mod:`.hooks` registers only when their
option is given; the substance is in :mod:`.lint` and :mod:`.changed`, what they say in
:mod:`pytest_evalcases.authoring.terminal`."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.authoring import lint, terminal
from pytest_evalcases.plugin.nodes import BrokenFileItem, EvalFile, EvalItem
from pytest_evalcases.plugin.stash import is_worker, session_of
from pytest_evalcases.session.changed import ChangedFiles
from pytest_evalcases.text import plural

#: ``user_properties`` key under which the lint item sends its findings to the
#: controller (report attributes travel under xdist).
LINT_PROPERTY = "evalcases_lint"
LINT_ITEM = "eval-lint"


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
        base = self.config.invocation_params.dir
        lines, errors = terminal.lint_lines(self.files, root, state.registry, base)
        self.user_properties.append((LINT_PROPERTY, lines))
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
        for line in [*self.lines, terminal.lint_total(self.lines)]:
            terminalreporter.write_line(line)


class RedFirstHooks:
    """``--eval-red-first``: says which cases are red, as they should be, and which pass
    on first write."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if is_worker(self.config):
            return
        lines = terminal.red_first_lines(session_of(self.config).records)
        if lines:
            terminalreporter.section("eval red-first")
        for line in lines:
            terminalreporter.write_line(line)


class ChangedHooks:
    """``--eval-changed``: names the changed files in the header and, after collection,
    how many cases they select."""

    def __init__(self, changed: ChangedFiles) -> None:
        self.changed = changed
        self.before = 0
        self.after = 0

    def pytest_report_header(self) -> list[str]:
        return [terminal.changed_header(self.changed)]

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
        return terminal.changed_selects(self.before, self.after)


def _cases(items: list[pytest.Item]) -> int:
    return len({(i.path, i.entry.id) for i in items if isinstance(i, EvalItem)})
