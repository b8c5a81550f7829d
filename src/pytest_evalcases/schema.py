"""The public API for check-type models (docs/case-format.md, "Your own check types")."""

from __future__ import annotations

from pytest_evalcases.cases.fields import WorkspacePath
from pytest_evalcases.cases.schema import CheckModel

__all__ = ["CheckModel", "WorkspacePath"]
