"""GitLab's code-quality report of a results file (docs/ci.md, "GitLab"): each failed
check of a failed case, and each case that reached no verdict, as an issue at the
case's line, in the subset of the Code Climate format GitLab reads."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pytest_evalcases.kinds import Severity
from pytest_evalcases.report.findings import Finding

#: The case's severity as a code-quality severity.
SEVERITY: dict[Severity, str] = {"critical": "critical", "normal": "major", "advisory": "minor"}


def codequality(found: list[Finding]) -> list[dict[str, Any]]:
    """The issues: one per failed check of a failed case, one per errored case."""
    out: list[dict[str, Any]] = []
    for f in found:
        if f.outcome == "error" or not f.checks:
            pairs = [("error" if f.outcome == "error" else "failed", f.error or f.outcome)]
        else:
            pairs = [(c.id, c.message) for c in f.checks]
        for check, message in pairs:
            out.append(
                {
                    "description": f"{f.name}: {check}: {message}"
                    if message
                    else f"{f.name}: {check}",
                    "check_name": check,
                    "fingerprint": fingerprint(f.name, check),
                    "severity": SEVERITY[f.severity],
                    "location": {"path": f.path, "lines": {"begin": f.line}},
                }
            )
    return out


def fingerprint(case: str, check: str) -> str:
    """The issue's identity from run to run: the case (``id[variant]``) and its check,
    never the message, which may differ each run."""
    return hashlib.sha256(f"{case}\0{check}".encode()).hexdigest()


def render(found: list[Finding]) -> str:
    """The report as GitLab reads it: a JSON array."""
    return json.dumps(codequality(found), indent=2, ensure_ascii=False) + "\n"
