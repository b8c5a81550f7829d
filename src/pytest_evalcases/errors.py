"""The exceptions of pytest-evalcases.

Every error that a user can cause (a broken case file, an agent that cannot run, a
failing ``setup``) is an :class:`EvalcasesError`; the pytest layer prints its message
and never a traceback of our internals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from pytest_evalcases.kinds import Replayed


@dataclass(frozen=True)
class Spent:
    """What a run reported spending: tokens in and out, cost in USD; ``None`` where the
    agent did not say. Runs that end without a verdict carry it too: the model was paid
    all the same (docs/budget.md)."""

    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None

    @property
    def tokens(self) -> int | None:
        """Input plus output (cache reads and writes apart), as results files count
        them; ``None`` when neither is reported."""
        return _sum(self.tokens_in, self.tokens_out)

    def plus(self, other: Spent | None) -> Spent:
        """Both together (two attempts of a run); a figure neither reported stays
        ``None``."""
        if other is None:
            return self
        return Spent(
            _sum(self.tokens_in, other.tokens_in),
            _sum(self.tokens_out, other.tokens_out),
            _sum(self.cost_usd, other.cost_usd),
        )


def add_spent(spent: Spent | None, more: Spent | None) -> Spent | None:
    """``spent`` and ``more`` together, either of them ``None`` for nothing reported."""
    return more if spent is None else spent.plus(more)


_Number = TypeVar("_Number", int, float)


def _sum(a: _Number | None, b: _Number | None) -> _Number | None:
    if a is None:
        return b
    return a if b is None else a + b


class EvalcasesError(Exception):
    """Base class: a message meant for the user, shown without a traceback."""


class CaseFileError(EvalcasesError):
    """A case file that cannot be loaded: names the file, the line and the field."""

    def __init__(
        self, path: str, message: str, *, line: int | None = None, field: str = ""
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.reason = message
        where = path if line is None else f"{path}:{line}"
        field_part = f" {field}:" if field else ""
        super().__init__(f"{where}:{field_part} {message}")


class UsageError(EvalcasesError):
    """A bad command-line option or ini value."""


class RunError(EvalcasesError):
    """Something prevented a verdict for one run; reported as a pytest ``error``.

    ``kind`` is a short machine-readable word (``setup``, ``timeout``,
    ``authentication``, ...) that goes into results files.
    """

    kind = "error"

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        if kind is not None:
            self.kind = kind
        #: The workspace of the failed attempt, kept for inspection (set by the runner).
        self.workspace: str | None = None
        #: How many attempts were made (``--eval-retry-errors``).
        self.attempts = 1
        #: Seconds the attempts took (set by the runner).
        self.duration = 0.0
        #: Seconds the agent asked to wait before the next request, when it said so
        #: (a rate limit's "retry after").
        self.retry_after: float | None = None
        #: Whether the back-off after rate limits has counted this error already.
        self.backed_off = False
        #: The run's recorded exchange with the model API, relative to the results
        #: file's directory (docs/replay.md); set by the runner.
        self.recording: str | None = None
        #: How the run was replayed (``--eval-replay``, ``--eval-reuse``); set by the runner.
        self.replayed: Replayed | None = None
        #: What the agent reported spending before the run ended without a verdict (an
        #: agent stopped at its turn limit, a check that could not grade its transcript),
        #: over all its attempts (set by the runner).
        self.spent: Spent | None = None
        #: The part of ``spent`` that the attempts after the first reported.
        self.spent_on_retries: Spent | None = None
        super().__init__(message)


class SetupError(RunError):
    """The case's ``setup`` command failed, or the workspace could not be prepared."""

    kind = "setup"


class AgentError(RunError):
    """The agent could not produce a result (missing binary, auth, timeout, crash, ...)."""

    kind = "agent"


class PathEscapeError(RunError):
    """A check path resolved outside the workspace (for instance through a symlink)."""

    kind = "path"
