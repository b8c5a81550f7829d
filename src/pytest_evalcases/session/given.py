"""What a session's settings are read from: the values of the ``--eval-*`` options and
``eval_*`` ini settings, as a small read-only view (the plugin gives pytest's), and the
checks of an ini value that name the option when it is wrong (docs/reference.md).

Options are checked as pytest parses them (their ``type=``); ini values only here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from pytest_evalcases.errors import UsageError


class Given(Protocol):
    """The options and ini values of one session, and where it runs."""

    @property
    def rootdir(self) -> Path:
        """pytest's rootdir, which ini paths are relative to."""
        ...

    @property
    def invocation_dir(self) -> Path:
        """Where pytest was started, which option paths are relative to."""
        ...

    def option(self, name: str) -> Any:
        """The value of the option whose ``dest`` is ``name``, parsed by its ``type=``."""
        ...

    def ini(self, name: str) -> Any:
        """The value of ini setting ``name``, of its declared type."""
        ...

    def session_dir(self, prefix: str) -> Path:
        """A new empty directory that is removed when the session ends."""
        ...


def number(
    given: Given,
    name: str,
    *,
    positive: bool = False,
    unit: bool = False,
    points: bool = False,
) -> float:
    """Ini setting ``name`` as a number: above 0 with ``positive``, from 0 to 1 with
    ``unit``, from 0 to 100 with ``points``."""
    raw = given.ini(name)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise UsageError(f"ini option {name} expects a number, got {raw!r}") from None
    if positive and value <= 0:
        raise UsageError(f"ini option {name} expects a number > 0, got {raw!r}")
    if unit and not 0 <= value <= 1:
        raise UsageError(f"ini option {name} expects a number from 0 to 1, got {raw!r}")
    if points and not 0 <= value <= 100:
        raise UsageError(f"ini option {name} expects a number from 0 to 100, got {raw!r}")
    return value


def optional_rate(given: Given, name: str) -> float | None:
    """A rate from 0 to 1 in ini setting ``name``; ``None`` when it is unset."""
    if not str(given.ini(name)).strip():
        return None
    return number(given, name, unit=True)


def whole(given: Given, name: str, *, minimum: int) -> int:
    """Ini setting ``name`` as a whole number of at least ``minimum``."""
    value: object = given.ini(name)
    # A number-typed setting comes as a float from pytest 9.2 (`4` reads as 4.0).
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    raw = str(value).strip()
    try:
        number = int(raw)
    except ValueError:
        number = minimum - 1
    if number < minimum:
        raise UsageError(f"ini option {name} expects a whole number >= {minimum}, got {raw!r}")
    return number


def choice(given: Given, name: str, allowed: tuple[str, ...]) -> str:
    """Ini setting ``name``, one of ``allowed``."""
    value = str(given.ini(name)).strip()
    if value not in allowed:
        raise UsageError(f"ini option {name} expects {' or '.join(allowed)}, got {value!r}")
    return value


def paths(given: Given, name: str) -> tuple[Path, ...]:
    """A ``paths`` ini setting."""
    return tuple(Path(p) for p in given.ini(name))
