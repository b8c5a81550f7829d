"""The public API for writing check types (docs/case-format.md, "Your own check types")."""

from __future__ import annotations

from pytest_evalcases.cases.registry import CheckContext, CheckRegistry, Outcome
from pytest_evalcases.run.checks import resolve

__all__ = ["CheckContext", "CheckRegistry", "Outcome", "resolve"]
