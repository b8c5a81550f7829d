"""The agent's preflight, once per session on the controller (docs/agents.md, "Before
the first run"): the checks are :mod:`pytest_evalcases.agents.preflight`; this module
finds what the collected items need of the agent and turns a failure into one
``pytest.UsageError``.

It runs when collection is final and before the first case: in
``pytest_collection_finish`` without xdist, and in
``pytest_xdist_node_collection_finished`` for the first worker's collection under
xdist (the controller collects nothing; the workers collect the same items, and none
is scheduled before every worker has reported). A session that runs no case
(``--collect-only``, ``--setup-plan``, ``--fixtures``, ...) checks nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_evalcases.agents import preflight
from pytest_evalcases.errors import CaseFileError, UsageError
from pytest_evalcases.plugin.nodes import EvalItem
from pytest_evalcases.plugin.stash import runs_cases
from pytest_evalcases.session.state import EvalSession

if TYPE_CHECKING:
    from pytest_evalcases.cases.loading import LoadedCase


class PreflightHooks:
    """Checks the agent before the first case runs; registered on the controller only."""

    def __init__(self, config: pytest.Config, state: EvalSession) -> None:
        self.config = config
        self.state = state
        self.done = False

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        items = [item for item in session.items if isinstance(item, EvalItem)]
        self._check(lambda: _needs(item.case for item in items if _runs_agent(item)))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self._check(lambda: _needs(self._cases_of(ids)))

    def _check(self, needs: Callable[[], preflight.Needs]) -> None:
        # `needs` loads the collected cases (bare, quarantine): only once an agent and a
        # variant that runs it make the answer matter.
        if self.done or not runs_cases(self.config):
            return
        self.done = True
        agent = self.state.agent
        if agent is None or all(v.graded_dir is not None for v in self.state.settings.variants):
            return
        found = needs()
        if not found.runs:
            return
        try:
            # eval_sandbox = bwrap where bubblewrap cannot run stops the session too.
            self.state.sandbox  # noqa: B018
            self.state.preflight = preflight.check(
                agent, found, os.environ, self.state.settings.rootdir
            )
        except UsageError as exc:
            raise pytest.UsageError(str(exc)) from None

    def _cases_of(self, ids: Sequence[str]) -> Iterator[LoadedCase]:
        """The cases of the items a worker collected, loaded from their files."""
        from pytest_evalcases.cases.loading import load_case_file, load_task_dir

        state = self.state
        wanted: dict[Path, set[str]] = {}
        for nodeid in ids:
            file, _, name = nodeid.partition("::")
            if name:
                wanted.setdefault(self.config.rootpath / file, set()).add(name.partition("[")[0])
        for path, case_ids in wanted.items():
            found = state.discovery.case_file(path)
            if found is None:
                continue
            try:
                if found.kind == "task":
                    cases = [load_task_dir(path, state.registry)]
                else:
                    cache = state.parse_cache
                    cases = load_case_file(path, found.evals_root, state.registry, cache)
            except (CaseFileError, UsageError):
                continue  # the file's items say why when they run
            yield from (case for case in cases if case.id in case_ids and not case.quarantine)


def _runs_agent(item: EvalItem) -> bool:
    if item.variant.graded_dir is not None:
        return False
    try:
        return not item.case.quarantine
    except CaseFileError:
        return False  # the item says why when it runs


def _needs(cases: Iterable[LoadedCase]) -> preflight.Needs:
    """How many cases run the agent, and how many of them bare (each case once)."""
    bare: dict[str, bool] = {case.id: case.bare for case in cases}
    return preflight.Needs(runs=len(bare), bare=sum(bare.values()))
