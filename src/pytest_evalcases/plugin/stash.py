"""The session object of a pytest run, reached one way, and which process this is."""

from __future__ import annotations

import pytest

from pytest_evalcases.session.state import EvalSession

#: Where the plugin keeps the session object.
SESSION_KEY = pytest.StashKey[EvalSession]()


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
