"""The cases of one collected case file (or task directory): what collection reads of
it, from the parse cache's index when it can, and its validated cases, loaded once
when the first of its items runs (docs/case-format.md). Plain Python:
:class:`pytest_evalcases.plugin.nodes.EvalFile` is the pytest node that holds one."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_evalcases.cases.parsecache import CaseEntry
from pytest_evalcases.errors import CaseFileError, UsageError
from pytest_evalcases.report import messages
from pytest_evalcases.session.state import EvalSession

if TYPE_CHECKING:
    # Loading needs pydantic and PyYAML; they are imported when the first case file is
    # loaded, so that pytest runs without eval cases start fast.
    from pytest_evalcases.cases.loading import LoadedCase


class CaseFileCases:
    """The cases of the case file at ``path`` under ``evals_root`` (``task``: a task
    directory's ``checks.yaml``, one case named after the directory, never indexed)."""

    def __init__(self, path: Path, evals_root: Path, *, task: bool = False) -> None:
        self.path = path
        self.evals_root = evals_root
        self.task = task
        self._cases: dict[str, LoadedCase] | None = None
        self._error: CaseFileError | None = None

    def load(self, session: EvalSession) -> list[LoadedCase]:
        from pytest_evalcases.cases.loading import load_case_file, load_task_dir

        if self.task:
            return [load_task_dir(self.path, session.registry)]
        return load_case_file(self.path, self.evals_root, session.registry, session.parse_cache)

    def _load_all(self, session: EvalSession) -> dict[str, LoadedCase]:
        """The file's cases by id, loaded once (a file that does not load, tried once)."""
        if self._cases is None:
            if self._error is not None:
                raise self._error
            try:
                self._cases = {case.id: case for case in self.load(session)}
            except CaseFileError as exc:
                self._error = exc
                raise
            except UsageError as exc:
                # A check-type entry point that does not load: every file says so.
                self._error = CaseFileError(str(self.path), str(exc))
                raise self._error from None
        return self._cases

    def entries(self, session: EvalSession) -> Sequence[CaseEntry]:
        """The cases to collect: from the cache's index when it has the file, else
        from loading (and validating) it."""
        cache = session.parse_cache
        if not self.task and cache is not None:
            index = cache.index(self.path, self.evals_root)
            if index is not None:
                return index.entries
        return [case.entry for case in self._load_all(session).values()]

    def case(self, session: EvalSession, case_id: str, base: Path) -> LoadedCase:
        """The validated case ``case_id``; :class:`CaseFileError` when a file collected
        before has a case with the same id (named relative to ``base``), when the file
        no longer loads, or no longer holds it (it changed after collection)."""
        duplicate = self._duplicate(session, case_id, base)
        if duplicate is not None:
            raise duplicate
        case = self._load_all(session).get(case_id)
        if case is None:
            raise CaseFileError(
                str(self.path),
                f"case {case_id!r} is no longer in this file (it changed after collection)",
                field="id",
            )
        return case

    def _duplicate(self, session: EvalSession, case_id: str, base: Path) -> CaseFileError | None:
        """The error of a case whose id a case of a file collected before has already.

        The first file in collection order keeps the id and its case runs; every later
        one is the error, naming the first (a copied case whose id was not changed).
        Every xdist worker collects every file in the same order. Known once
        collection is over, as items run."""
        places = session.ids.get(case_id, {})
        first = next(iter(places), self.path)
        if first == self.path:
            return None
        return CaseFileError(
            str(self.path),
            f"duplicate id {case_id!r}: the case at {messages.display_path(first, base)}:"
            f"{places[first]} has it already; ids are unique in the suite: give this "
            "case its own id",
            line=places.get(self.path),
            field="id",
        )
