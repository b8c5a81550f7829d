"""What part of the suite a run selected: the pytest side of the results file's
``selection`` and ``complete_suite`` (docs/results.md, "Runs of part of the suite").

Whatever deselects an eval run says so through ``pytest_deselected`` (``-k``, ``-m``,
``--deselect``, ``--lf``, ``--sw``, the ``--eval-*`` filters, a shard); what was
never collected is read from the arguments. The decision is
:func:`pytest_evalcases.session.selection.suite_selection`. Under xdist the workers
collect, not the controller: a worker sends it in its ``workeroutput``.

A broken case file is reported whatever ``-m``, ``-k`` or ``--eval-*`` would select,
except beside other tests only: there it is set aside, said in a section of the terminal
summary rather than as a warning, which ``filterwarnings = error`` would turn into an
internal error (docs/case-format.md, "What a broken file looks like").
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.plugin.nodes import BrokenFileItem, EvalItem
from pytest_evalcases.plugin.stash import is_worker
from pytest_evalcases.results.document import SuiteSelection
from pytest_evalcases.session.selection import WorkerOutput, selecting_arguments, suite_selection
from pytest_evalcases.session.state import EvalSession

#: The key of a worker's ``workeroutput``: its :class:`WorkerOutput`.
WORKER_OUTPUT = "evalcases"
#: What a broken case file set aside adds to its message.
NOT_COUNTED = "(no eval case selected: not counted in the exit status)"


class SuiteHooks:
    """Counts the eval runs collected and deselected; the session keeps the verdict."""

    def __init__(self, config: pytest.Config, state: EvalSession) -> None:
        self.config = config
        self.state = state
        self.deselected: list[EvalItem] = []
        #: The messages of the broken case files set aside, for the terminal summary.
        self.set_aside: list[str] = []

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselected.extend(item for item in items if isinstance(item, EvalItem))

    # The outermost wrapper: broken files stay out of every selection (the plugin's
    # and pytest's -k and -m), then come back unless the run selected other tests only.
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> Generator[None, None, None]:
        broken = [item for item in items if isinstance(item, BrokenFileItem)]
        if broken:
            items[:] = [item for item in items if not isinstance(item, BrokenFileItem)]
        collected = len(items)
        try:
            return (yield)
        finally:
            if broken and _other_tests_only(config, items, collected):
                config.hook.pytest_deselected(items=broken)
                self.set_aside = [f"{item.message} {NOT_COUNTED}" for item in broken]
            else:
                items[:0] = broken

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        config = self.config
        selected = [item for item in session.items if isinstance(item, EvalItem)]
        collected = [*selected, *self.deselected]
        selection = suite_selection(
            _runs(selected, self.deselected),
            arguments=arguments(config),
            paths=config.args,
            base=config.invocation_params.dir,
            roots={item.parent.evals_root for item in collected},
            eval_paths=self.state.settings.eval_paths,
            ignored=[Path(p) for p in config.getoption("ignore", None) or []],
            ignored_globs=[str(g) for g in config.getoption("ignore_glob", None) or []],
            last_failed=_last_failed(config),
        )
        self.state.selection = selection
        chosen = {item.entry.id for item in selected}
        self.state.perturb_gaps = [g for g in self.state.perturb_gaps if g[0] in chosen]
        if is_worker(config):
            config.workeroutput[WORKER_OUTPUT] = WorkerOutput(  # type: ignore[attr-defined]
                selection.to_dict(), tuple(self.set_aside), tuple(self.state.perturb_gaps)
            ).to_json()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object | None) -> None:
        # xdist's controller: every worker collected the same; the first to finish tells.
        output = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
        if output is None or self.state.selection is not None:
            return
        handed = WorkerOutput.from_json(output)
        self.state.selection = SuiteSelection.from_dict(handed.selection)
        self.set_aside = list(handed.set_aside)
        self.state.perturb_gaps = list(handed.perturb_gaps)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if is_worker(self.config) or not self.set_aside:
            return
        terminalreporter.section("case files not loaded", yellow=True)
        for message in self.set_aside:
            terminalreporter.write_line(message, yellow=True)


def _other_tests_only(config: pytest.Config, items: list[pytest.Item], collected: int) -> bool:
    """Whether a selection (``-k``, ``-m``, ``--deselect``, ``--eval-*``) kept other
    tests and no eval case: ``pytest tests evals -k test_unit`` beside case files, also
    when the broken file is the only one and nothing else was deselected."""
    narrowed = len(items) < collected or any(
        config.getoption(dest, None) for dest in ("keyword", "markexpr", "deselect")
    )
    return narrowed and bool(items) and not any(isinstance(item, EvalItem) for item in items)


def _runs(selected: list[EvalItem], deselected: list[EvalItem]) -> Iterator[tuple[str, bool]]:
    for items, chosen in ((selected, True), (deselected, False)):
        for item in items:
            yield f"{item.path}::{item.entry.id}", chosen


def arguments(config: pytest.Config) -> list[str]:
    """The selecting arguments of the run, as given (see
    :func:`pytest_evalcases.session.selection.selecting_arguments`)."""
    given = config.args if config.args_source == pytest.Config.ArgsSource.ARGS else []
    return selecting_arguments(
        given, lambda dest: config.getoption(dest, None), last_failed=_last_failed(config)
    )


def _last_failed(config: pytest.Config) -> bool:
    """Whether ``--lf`` narrows this run: it does when the cache holds failures."""
    if not config.getoption("lf", False) or config.cache is None:
        return False
    return bool(config.cache.get("cache/lastfailed", {}))
