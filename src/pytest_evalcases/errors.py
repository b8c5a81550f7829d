"""The exceptions of pytest-evalcases.

Every error that a user can cause (a broken case file, an agent that cannot run, a
failing ``setup``) is an :class:`EvalcasesError`; the pytest layer prints its message
and never a traceback of our internals.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import ClassVar, TypeVar

from pytest_evalcases.kinds import ErrorKind, Spent


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


_Error = TypeVar("_Error", bound="RunError")


class RunError(EvalcasesError):
    """Something prevented a verdict for one run; reported as a pytest ``error``.

    ``kind`` is a short machine-readable word (``setup``, ``timeout``,
    ``authentication``, ...) that goes into results files. Immutable: what the raiser
    knows is given when it is made; what the runner learns of the run afterwards (its
    workspace, its attempts, its recording) is in the run's report
    (:class:`~pytest_evalcases.run.runner.RunReport`), never set on the error.
    """

    kind: ErrorKind = "error"
    #: Whether a run that ends in this error made an attempt; not one that was never
    #: started (``attempts`` is 0 in the results file).
    attempted: ClassVar[bool] = True
    #: Seconds the agent asked to wait before the next request, when it said so (a rate
    #: limit's "retry after").
    retry_after: float | None
    #: What the attempt reported spending before it ended without a verdict (an agent
    #: stopped at its turn limit), paid for all the same (docs/budget.md).
    spent: Spent | None
    #: The tool calls the agent CLI refused, as reports name them (a ``denied`` run).
    denials: tuple[str, ...]

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind | None = None,
        retry_after: float | None = None,
        spent: Spent | None = None,
        denials: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        fields: dict[str, object] = {
            "retry_after": retry_after,
            "spent": spent,
            "denials": denials,
        }
        if kind is not None:
            fields["kind"] = kind
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        if name.startswith("__") and name.endswith("__"):
            # The interpreter's own: the traceback, the cause, the notes.
            super().__setattr__(name, value)
            return
        raise FrozenInstanceError(f"cannot assign to {name!r}: a RunError is immutable")

    def reworded(self: _Error, message: str) -> _Error:
        """The same error (its class, kind and facts) with ``message``."""
        return _rebuild(type(self), message, dict(vars(self)))

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt as it is: a subclass's own arguments are not those of this class.
        return (_rebuild, (type(self), str(self), dict(vars(self))))


def _rebuild(cls: type[_Error], message: str, fields: dict[str, object]) -> _Error:
    error = cls.__new__(cls, message)
    BaseException.__init__(error, message)
    for name, value in fields.items():
        object.__setattr__(error, name, value)
    return error


class SetupError(RunError):
    """The case's ``setup`` command failed, or the workspace could not be prepared."""

    kind = "setup"


class AgentError(RunError):
    """The agent could not produce a result (missing binary, auth, timeout, crash, ...)."""

    kind = "agent"


class PathEscapeError(RunError):
    """A check path resolved outside the workspace (for instance through a symlink)."""

    kind = "path"
