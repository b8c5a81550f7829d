"""Third-party agents and check types arrive through entry points; a package whose
entry point is broken gets an error that names it, not a traceback."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any

from pytest_evalcases.errors import UsageError


def load_entry_point(ep: EntryPoint) -> Any:
    """``ep.load()``, its failure a :class:`UsageError` naming the entry point."""
    try:
        return ep.load()
    except Exception as exc:  # whatever the third-party module raises on import
        raise UsageError(
            f"entry point {ep.name} = {ep.value} (group {ep.group}) does not load: "
            f"{type(exc).__name__}: {exc}"
        ) from None
