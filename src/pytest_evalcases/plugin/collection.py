"""What the ``pytest11`` module's collection and report hooks do in a session the plugin
started: which paths pytest must not walk, which files are case files, which cases the
filters and the shard select, each item's report, and the header line.

The hook functions stay in :mod:`.hooks`, where pytest finds them in every session; they
hand the work to the :class:`Collection` that :mod:`.session_setup` keeps in the stash,
so that a session without eval cases never imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pytest

from pytest_evalcases.cases.parsecache import CaseEntry
from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.plugin import reporting
from pytest_evalcases.plugin.nodes import EvalFile, EvalItem, TaskDirFile, passed_over
from pytest_evalcases.run import keep
from pytest_evalcases.session import terminal
from pytest_evalcases.session.selection import Selection
from pytest_evalcases.session.state import EvalSession


class Collection:
    """The collection and report hooks' work for one session."""

    def __init__(self, config: pytest.Config, state: EvalSession) -> None:
        self.config = config
        self.state = state

    def ignores(self, collection_path: Path) -> bool:
        """Whether pytest must not walk ``collection_path`` (docs/case-format.md)."""
        return self.state.discovery.skip_dir(collection_path) or keep.is_kept_dir(collection_path)

    def collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        """The node of a case file, or ``None`` for any other file."""
        found = self.state.discovery.case_file(file_path)
        if found is None:
            return None
        node = TaskDirFile if found.kind == "task" else EvalFile
        return node.from_parent(parent, path=file_path, evals_root=found.evals_root)

    def passed_over(self, collector: pytest.Collector) -> list[EvalFile]:
        """The case files of a directory that pytest, which collects regular files
        only, passes over: each is said as a node of its own."""
        return passed_over(collector) if isinstance(collector, pytest.Directory) else []

    def select(self, items: list[pytest.Item]) -> None:
        """Deselect the cases the filters leave out, then those of other shards."""
        settings = self.state.settings
        selection = Selection.of(settings)
        # Two steps, as two -k would: the filters, then the shard of what is left.
        _deselect(self.config, items, lambda item: selection.selects(_entry(item), _sources(item)))
        if selection.part is not None:
            ids = [entry.id for entry in map(_entry, items) if entry is not None]
            selection = selection.balanced(ids, settings.results.results_dir)
            _deselect(self.config, items, lambda item: selection.in_shard(_entry(item)))

    def collected(self, session: pytest.Session) -> None:
        """Start the progress line once the items are known."""
        if any(isinstance(item, EvalItem) for item in session.items):
            # Only sessions that run eval cases: no thread for the others.
            from pytest_evalcases.plugin import progress

            progress.install(session.config, len(session.items))

    def make_report(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """The report of an eval item's phase (see :func:`.reporting.make_report`)."""
        return reporting.make_report(item, call)

    def header(self) -> str:
        """The ``evalcases:`` line of pytest's header."""
        return terminal.header(self.state)


def _deselect(
    config: pytest.Config, items: list[pytest.Item], keep: Callable[[pytest.Item], bool]
) -> None:
    """Keep the items ``keep`` accepts; report the others deselected."""
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (kept if keep(item) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _entry(item: pytest.Item) -> CaseEntry | None:
    """The case of an eval item; ``None`` for a normal test, which every filter keeps."""
    return item.entry if isinstance(item, EvalItem) else None


def _sources(item: pytest.Item) -> Callable[[], Iterator[Path]] | None:
    """The case's own files for ``--eval-changed``: its case file (with a task
    directory's ``task.md``), then its fixture directory."""
    if not isinstance(item, EvalItem):
        return None

    def sources() -> Iterator[Path]:
        yield item.path
        if isinstance(item.parent, TaskDirFile):
            yield item.path.parent / "task.md"
        try:
            # Only now is the file loaded: the index of the parse cache has no fixture.
            fixture = item.case.fixture
        except CaseFileError:
            return  # its error is reported when it runs, as without the option
        if fixture is not None:
            yield fixture

    return sources
