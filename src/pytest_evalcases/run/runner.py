"""One run of one case: what it takes (:class:`RunContext`, :class:`OuterLimit`, its
environment) and what it gives (:class:`AgentRun` up to the checks, :class:`RunReport`
after its attempts). Plain Python, no pytest.

The run itself is split by concern: :mod:`.invoke` prepares the workspace and the
agent's home and invokes the agent, :mod:`.grading` grades what it left, and
:mod:`.attempts` runs the attempts (retries) and returns the :class:`RunReport`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_evalcases import containment, defaults
from pytest_evalcases.agents.base import Agent, AgentResult, ModelRequest
from pytest_evalcases.cases.loading import LoadedCase
from pytest_evalcases.cases.registry import CheckRegistry
from pytest_evalcases.errors import RunError
from pytest_evalcases.kinds import AgentHome, Replayed, Spent, total_spent
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run.failfast import Stops
from pytest_evalcases.run.judge import JudgeSetup
from pytest_evalcases.run.scheduler import Backoff
from pytest_evalcases.run.workspace import EntryState, Variant
from pytest_evalcases.sandbox import Sandbox

if TYPE_CHECKING:
    # The proxy's modules (http.server, http.client) load with the first recorded run.
    from pytest_evalcases.recording.recorder import Recorder
    from pytest_evalcases.recording.source import ReplaySource


@dataclass(frozen=True)
class RunReport:
    """What one run of a case came to after its attempts: the checks' verdict, or the
    error that left it without one, and what the runner knows of the attempts (the
    attempt record: the runner returns it and never sets anything on the error)."""

    checks: tuple[CheckRecord, ...] = ()
    agent: AgentResult | None = None
    #: Why the run reached no verdict; ``None``: the checks are its verdict.
    error: RunError | None = None
    workspace: Path | None = None
    attempts: int = 1
    duration: float = 0.0
    #: The agent's final answer was empty and the workspace is as the run started it
    #: (after ``setup``): negative checks pass such a run by default (docs/results.md).
    did_nothing: bool = False
    #: The run's recorded exchange, relative to the results file's directory.
    recording: str | None = None
    #: How the run was replayed (``--eval-replay``, ``--eval-reuse``); ``None``: it was not.
    replayed: Replayed | None = None
    #: What each attempt of the run reported spending, in order (``agent`` is the last
    #: one's): retried attempts were paid for too.
    spends: tuple[Spent | None, ...] = ()
    #: A regraded run: what the stored run reported spending when it was recorded. The
    #: regrade itself spent nothing (docs/replay.md, "Regrade").
    recorded_spent: Spent | None = None
    #: What the judge of the run's judge checks reported spending (counted in
    #: ``spends`` too, docs/judge.md).
    judge_spent: Spent | None = None

    @classmethod
    def failed(
        cls, error: RunError, *, workspace: Path | None = None, duration: float = 0.0
    ) -> RunReport:
        """A run that ``error`` left without a verdict, outside the runner's attempts:
        one attempt, or none for a run that was never started."""
        attempts = 1 if error.attempted else 0
        return cls(error=error, workspace=workspace, attempts=attempts, duration=duration)

    @property
    def spent(self) -> Spent | None:
        """What all the run's attempts reported spending together (the agent's, or the
        error's, for a report the runner did not fill in)."""
        if self.spends:
            return total_spent(self.spends)
        if self.agent is not None:
            return self.agent.spent
        return self.error.spent if self.error is not None else None

    @property
    def passed(self) -> bool:
        return self.error is None and all(c.passed for c in self.checks)

    @property
    def failed_checks(self) -> list[CheckRecord]:
        return [c for c in self.checks if not c.passed]


@dataclass(frozen=True)
class RunContext:
    """Session-wide inputs of every run."""

    registry: CheckRegistry
    agent: Agent | None
    default_timeout: float
    retries: int = 0
    transcript: bool = False
    base_env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    #: ``eval_agent_home``: ``isolated`` gives the agent a fresh home per run.
    agent_home: AgentHome = defaults.AGENT_HOME
    #: ``eval_sandbox``: where the agent, the setup and the command checks run.
    sandbox: Sandbox = field(default_factory=Sandbox)
    #: Without a sandbox, the git work tree a run must leave as it found it, and the
    #: paths in it the session itself writes (caches, results).
    repository: Path | None = None
    session_paths: tuple[Path, ...] = ()
    #: The ids of the session's collected cases: a graded directory with a subdirectory
    #: of one of these names holds one directory per case (:func:`graded_workspace`).
    case_ids: frozenset[str] = frozenset()
    #: When the next run may start after rate limits; shared with the scheduler.
    backoff: Backoff = field(default_factory=Backoff)
    #: The proxy of the runs that go through it, and where live runs' model traffic is
    #: recorded (``eval_record``; nowhere when its ``place`` is ``None``); ``None``: no
    #: run goes through a proxy.
    recorder: Recorder | None = None
    #: The recordings that runs are answered from (``--eval-replay``, ``--eval-reuse``).
    replay: ReplaySource | None = None
    #: The agents and credentials whose runs are not started any more (docs/agents.md,
    #: "Failing fast"); shared by the session's runs.
    stops: Stops = field(default_factory=Stops)
    #: The agent's version as the preflight read it, for the runs' trajectories;
    #: ``None``: not known.
    agent_version: str | None = None
    #: Who judges the judge checks, and their calibration (docs/judge.md).
    judge: JudgeSetup = field(default_factory=JudgeSetup)


@dataclass(frozen=True)
class OuterLimit:
    """A limit on the whole run of a case set outside it: pytest-timeout's, which the
    plugin enforces itself (docs/agents.md, "pytest-timeout"). The case's ``setup``
    and its agent get what is left of it when that is less than their own limit."""

    #: When it runs out, on the ``time.monotonic()`` clock.
    end: float
    seconds: float
    #: Where it was set.
    origin: str = "--timeout, the timeout ini option, PYTEST_TIMEOUT or a timeout marker"

    def left(self) -> float:
        return self.end - time.monotonic()

    def ran_out(self, when: str, own: str) -> str:
        """Why a run stopped ``when`` this limit ran out, before ``own`` (its own limit)."""
        return (
            f"pytest-timeout's limit of {self.seconds:g}s ({self.origin}) ran out{when}, "
            f"before {own} (a case gets the shorter of the two)"
        )


def case_env(
    base: Mapping[str, str], case: LoadedCase, variant: Variant, workspace: Path
) -> dict[str, str]:
    """The agent's environment: pytest's own plus the ``EVALCASES_*`` variables, and
    a fixed time for git commits where the environment names none."""
    env = dict(base)
    env["EVALCASES_CASE_ID"] = case.id
    env["EVALCASES_WORKSPACE"] = str(workspace)
    env["EVALCASES_VARIANT"] = variant.name
    # A commit's id depends on its time: at a fixed one, the commits of setup and of the
    # agent have the same ids on every run, and the requests that quote them (Claude
    # Code's system prompt, `git log` read by the agent) replay (docs/replay.md).
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        env.setdefault(name, defaults.COMMIT_DATE)
    return env


@dataclass(frozen=True)
class AgentRun:
    """A live run up to the checks: the workspace, what the agent did or the error that
    ended it, and what the checks need to grade it (:mod:`pytest_evalcases.run.grading`)."""

    workspace: Path
    #: What the agent produced; ``None`` when the run ended in ``error``.
    result: AgentResult | None = None
    error: RunError | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    #: The workspace as the run started it (after ``setup``); ``None`` when it held more
    #: entries than are walked (``WORKSPACE_MAX_ENTRIES``), or the run ended before.
    started: Mapping[str, EntryState] | None = None
    #: Without a sandbox, the repository's working tree before the run.
    watch: containment.TreeState | None = None
    #: When the run started (``time.monotonic``).
    began: float = 0.0
    #: The run's recorded exchange, relative to the results file's directory.
    recording: str | None = None
    replayed: Replayed | None = None
    #: The requests the CLI sent its model, as the proxy saw them, for a case whose
    #: checks read them; ``None``: not known (the run did not go through the proxy).
    requests: tuple[ModelRequest, ...] | None = None
    #: The variant's name and the run's repetition (a scripted judge answers by it).
    variant: str = ""
    repetition: int = 0
    #: The run's name beside the results file (its recording's, its judge's).
    name: str | None = None

    @property
    def spent(self) -> Spent | None:
        """What the run reported spending, also when it ended in an error."""
        if self.result is not None:
            return self.result.spent
        return self.error.spent if self.error is not None else None
