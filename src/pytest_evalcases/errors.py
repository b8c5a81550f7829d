"""The exceptions of pytest-evalcases.

Every error that a user can cause (a broken case file, an agent that cannot run, a
failing ``setup``) is an :class:`EvalcasesError`; the pytest layer prints its message
and never a traceback of our internals.
"""

from __future__ import annotations

from pytest_evalcases.kinds import Replayed, Spent


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
        #: What the attempt that raised it reported spending before it ended without a
        #: verdict (an agent stopped at its turn limit, a check that could not grade its
        #: transcript).
        self.spent: Spent | None = None
        #: What each attempt of the run reported, in order, this one last (set by the
        #: runner when it gives up; --eval-retry-errors makes several).
        self.spends: tuple[Spent | None, ...] = ()
        #: The tool calls the agent CLI refused, as reports name them (a ``denied`` run).
        self.denials: tuple[str, ...] = ()
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
