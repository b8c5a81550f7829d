"""Runs not started after one that the model API's account cannot pass (docs/agents.md,
"Failing fast").

A wrong key, a revoked token or an API that cannot be reached fails every run the same
way, and a CLI may retry for minutes before it says so. Once one run of an agent has
ended in an ``authentication`` error, or found its API unreachable, the runs of the same
agent with the same credentials that have not started yet are not started: each is an
error of the same kind, "not started: …", quoting the first. One :class:`Stops` serves a
pytest process: the serial runs and those of ``--eval-concurrency`` share it; each xdist
worker has its own.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_evalcases.agents.base import Agent
from pytest_evalcases.errors import RunError
from pytest_evalcases.kinds import ErrorKind

#: An error of this kind stops the runs that share its agent and credentials.
STOPPING = frozenset({"authentication"})


class Unreachable(RunError):
    """The model API could not be reached (connection refused, DNS, TLS): a ``server``
    error that stops the runs after it, unlike the API's own 5xx answers."""

    kind = "server"


class NotStarted(RunError):
    """A run not started after an earlier one's failure: it made no attempt."""

    attempted = False


@dataclass(frozen=True)
class Stop:
    """Why the runs of one agent and credentials are not started any more."""

    kind: ErrorKind
    #: The first error's message, first line.
    reason: str


def identity(agent: Agent, env: Mapping[str, str]) -> str | None:
    """What runs share when one's failure stops the others: the agent, the API it
    reaches and a hash of the credential variables its driver names (never a key).
    ``None`` for an agent whose driver names neither (a command of the user's own): its
    credentials are unknown, so one run's failure says nothing of the next."""
    api = agent.model_api(env)
    requirements = agent.requirements
    credentials = requirements.credentials if requirements is not None else None
    if api is None and credentials is None:
        return None
    names = sorted(credentials.variables + credentials.bare_variables) if credentials else []
    digest = hashlib.sha256()
    for name in dict.fromkeys(names):
        digest.update(f"{name}={env.get(name, '')}\0".encode())
    upstream = api.upstream if api is not None else ""
    return f"{agent.name} {upstream} {digest.hexdigest()[:16]}"


def stops(error: RunError) -> bool:
    """Whether ``error`` stops the runs that share its run's agent and credentials."""
    return error.kind in STOPPING or isinstance(error, Unreachable)


class Stops:
    """The identities whose runs are not started any more, and why. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopped: dict[str, Stop] = {}

    def record(self, key: str, error: RunError) -> None:
        """Note that a run of ``key`` ended in ``error`` (the first such error is kept)."""
        if not stops(error):
            return
        reason = str(error).strip().splitlines()[0] if str(error).strip() else error.kind
        with self._lock:
            self._stopped.setdefault(key, Stop(error.kind, reason))

    def check(self, key: str, agent: str) -> None:
        """Raise the "not started" error of ``key`` when an earlier run stopped it."""
        with self._lock:
            found = self._stopped.get(key)
        if found is None:
            return
        raise NotStarted(
            f"not started: an earlier run of agent {agent!r} with the same credentials "
            f"ended in a{'n' if found.kind[0] in 'aeiou' else ''} {found.kind} error: "
            f"{found.reason}",
            kind=found.kind,
        )
