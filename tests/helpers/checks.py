"""One check evaluated by the default registry on a context of the test's choosing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pytest_evalcases.cases.registry import CheckContext
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run.checks import default_registry

REGISTRY = default_registry()


def evaluate(check: dict[str, Any], **context: Any) -> CheckRecord:
    """``check`` (as a case file gives it) graded on a context of no workspace, no
    answer and no transcript but what ``context`` sets (``CheckContext``'s fields)."""
    model = REGISTRY.check_adapter.validate_python(check)
    given: dict[str, Any] = {
        "workspace": Path(os.getcwd()),
        "fixture": None,
        "output": "",
        "tool_calls": None,
        "env": dict(os.environ),
    }
    return REGISTRY.evaluate(0, model, CheckContext(**{**given, **context}))
