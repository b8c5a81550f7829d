"""Hooks that pytest-evalcases adds, for plugins and ``conftest.py`` files."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_evalcases.cases.registry import CheckRegistry


def pytest_evalcases_register_checks(registry: CheckRegistry) -> None:
    """Register third-party check types: ``registry.register(Model, evaluate)``.

    ``Model`` subclasses :class:`pytest_evalcases.cases.schema.CheckModel` with
    ``type: Literal["my_check"]``; ``evaluate(check, ctx)`` returns an
    :class:`pytest_evalcases.run.checks.Outcome`. Implement it in a root ``conftest.py``
    or a plugin: it runs once, before the first case file is loaded.
    """
