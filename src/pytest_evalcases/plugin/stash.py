"""What the plugin keeps in ``config.stash`` (the session object, reached one way, the
budget's account, the runs started ahead), which process
this is, and whether it runs anything.

Imported by the ``pytest11`` module in every pytest session: the session's classes are
named for the type checker only, so that a session without eval cases never imports them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_evalcases.run.budget import Budget
    from pytest_evalcases.run.runner import AgentRun
    from pytest_evalcases.run.scheduler import Scheduler
    from pytest_evalcases.session.state import EvalSession

#: Where the plugin keeps the session object, once a session that may run eval cases
#: started it (docs/reference.md, "Sessions without eval cases").
SESSION_KEY: pytest.StashKey[EvalSession] = pytest.StashKey()
#: ``--eval-budget``'s account of this process (docs/budget.md); absent without one.
BUDGET_KEY: pytest.StashKey[Budget] = pytest.StashKey()
#: The controller's file of the budget's account, which its xdist workers read.
SPEND_FILE_KEY: pytest.StashKey[Path] = pytest.StashKey()
#: ``--eval-concurrency``: the runs started ahead of their items; absent without them.
AHEAD_KEY: pytest.StashKey[Scheduler[AgentRun]] = pytest.StashKey()


def session_of(config: pytest.Config) -> EvalSession:
    """The :class:`EvalSession` of this pytest run."""
    return config.stash[SESSION_KEY]


def is_worker(config: pytest.Config) -> bool:
    """Whether this process is an xdist worker (the controller reports and writes)."""
    return hasattr(config, "workerinput")


def is_first_worker_or_controller(config: pytest.Config) -> bool:
    """Whether this process writes what every process computes alike: the controller
    without xdist workers, else the first worker (the controller collects nothing)."""
    workerinput = getattr(config, "workerinput", None)
    return workerinput is None or workerinput.get("workerid") == "gw0"


#: pytest's options (by ``dest``) for sessions that show what would run instead of
#: running it; ``--setup-plan`` and ``--setup-only`` still call each item's ``setup``.
_SHOW_ONLY = (
    "collectonly",
    "setuponly",
    "setupplan",
    "showfixtures",
    "show_fixtures_per_test",
    "markers",
)


def runs_cases(config: pytest.Config) -> bool:
    """Whether this session runs eval cases: never with ``--collect-only``,
    ``--setup-plan``, ``--setup-only``, ``--fixtures``, ``--fixtures-per-test`` or
    ``--markers``, which start no agent, no ``setup`` command and no check
    (docs/agents.md, "Sessions that run no case")."""
    return not any(config.getoption(name, False) for name in _SHOW_ONLY)
