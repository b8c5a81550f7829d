"""The record of one run of one case, as it travels from an xdist worker to the
controller (a plain JSON-able dict) and into results files."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

OUTCOMES = ("passed", "failed", "error", "xfailed", "skipped")
#: Case severities, highest first (the case format's `severity`, the pytest markers).
SEVERITIES = ("critical", "normal", "advisory")


@dataclass
class RunRecord:
    """One run of one case (case x variant x repetition)."""

    case_id: str
    file: str
    line: int
    defends: str
    severity: str
    variant: str = ""
    repetition: int = 0
    outcome: str = "error"
    kind: str = "case"
    description: str | None = None
    tags: list[str] = field(default_factory=list)
    min_pass_rate: float = 1.0
    checks: list[dict[str, Any]] = field(default_factory=list)
    duration: float = 0.0
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    model: str | None = None
    error_kind: str | None = None
    error: str | None = None
    workspace: str | None = None
    attempts: int = 1
    nodeid: str = ""
    #: The fixture directory the workspace was copied from (absolute), if any.
    fixture: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The record as a results file's case entry: the case's id is ``id`` (SPEC 5.1).

        Made for every report of every run: a shallow copy (the lists copied too), not
        ``dataclasses.asdict``'s deep one, which costs ten times as much."""
        data: dict[str, Any] = {"id": self.case_id}
        for name in _FIELDS:
            data[name] = getattr(self, name)
        data["tags"] = list(self.tags)
        data["checks"] = [dict(check) for check in self.checks]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecord:
        known = cls.__dataclass_fields__
        values = {k: v for k, v in data.items() if k in known}
        if "case_id" not in values and "id" in data:
            values["case_id"] = data["id"]
        return cls(**values)

    @property
    def graded(self) -> bool:
        """A verdict was reached: passed, failed, or an advisory failure (xfailed)."""
        return self.outcome in ("passed", "failed", "xfailed")


#: The record's fields in its dictionary's order (``case_id`` is written as ``id``).
_FIELDS = tuple(f.name for f in fields(RunRecord) if f.name != "case_id")
