"""The agent's preflight, once per session on the controller (docs/agents.md, "Before
the first run"): the checks are :mod:`pytest_evalcases.agents.preflight`, what the session
needs of them :mod:`pytest_evalcases.session.preflight`; this module
finds the collected items and turns a failure into one
``pytest.UsageError`` when the run asked for eval cases (:func:`asked_for_cases`).
Otherwise (a plain ``pytest`` whose ini names an agent this machine lacks) the eval
cases that need it are skipped with the reason, the summary says it in one line, and
the other tests decide the exit status (docs/agents.md, "Beside your other tests").

It runs when collection is final and before the first case: in
``pytest_collection_finish`` without xdist, and in
``pytest_xdist_node_collection_finished`` for the first worker's collection under
xdist (the controller collects nothing; the workers collect the same items, and none
is scheduled before every worker has reported). A session that runs no case
(``--collect-only``, ``--setup-plan``, ``--fixtures``, ...) checks nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from pytest_evalcases.cases.discovery import Discovery
from pytest_evalcases.errors import CaseFileError, UsageError
from pytest_evalcases.plugin.nodes import EvalItem
from pytest_evalcases.plugin.stash import runs_cases
from pytest_evalcases.session.preflight import SessionPreflight, needs
from pytest_evalcases.session.preflight import asked_for_cases as asked

if TYPE_CHECKING:
    from pytest_evalcases.agents.base import Agent
    from pytest_evalcases.agents.preflight import Needs


class PreflightHooks:
    """Runs the session's :class:`SessionPreflight` once collection is final; a failure
    that stops the session is one ``pytest.UsageError``."""

    def __init__(self, config: pytest.Config, preflight: SessionPreflight) -> None:
        self.config = config
        self.preflight = preflight

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        items = [item for item in session.items if isinstance(item, EvalItem)]
        runs = self.preflight.runs
        self._check(
            lambda agent: needs(
                item.case
                for item in items
                if _runs_agent(item) and runs(item.variant, item.case, agent)
            )
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        rootpath = self.config.rootpath
        self._check(lambda agent: needs(self.preflight.cases_of(ids, agent, rootpath)))

    def _check(self, needs: Callable[[Agent], Needs]) -> None:
        if not runs_cases(self.config):
            return
        try:
            self.preflight.check(needs)
        except UsageError as exc:
            raise pytest.UsageError(str(exc)) from None


def asked_for_cases(config: pytest.Config, discovery: Discovery) -> bool:
    """Whether the command line asked for eval cases (see
    :func:`pytest_evalcases.session.preflight.asked_for_cases`)."""
    given = config.args if config.args_source == pytest.Config.ArgsSource.ARGS else []
    return asked(config.invocation_params.args, given, config.invocation_params.dir, discovery)


def _runs_agent(item: EvalItem) -> bool:
    if item.variant.graded_dir is not None:
        return False
    try:
        return not item.case.quarantine
    except CaseFileError:
        return False  # the item says why when it runs
