"""What a CI system is shown of a results file (docs/ci.md): its failed and errored
cases, each at its case file's line, and the comparison with a baseline.

Read from the results file alone, as written (its secrets redacted): the job summary,
the annotations, the pull-request comment and GitLab's code-quality report are all made
from these values, so each says the same thing.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_evalcases.kinds import CaseOutcome, Severity
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.outcomes import BLOCKING, case_verdicts
from pytest_evalcases.results.record import RunRecord


@dataclass(frozen=True)
class FailedCheck:
    """A check that failed in a run of a case: its id and its first message."""

    id: str
    message: str


@dataclass(frozen=True)
class Finding:
    """A case that failed or reached no verdict, in one variant."""

    case_id: str
    variant: str
    #: ``failed`` or ``error``.
    outcome: CaseOutcome
    #: The severity the gate counts it under (a failure of advisory severity never blocks).
    severity: Severity
    #: The case file, relative to the CI's root (``GITHUB_WORKSPACE``, the rootdir), and
    #: the case's 1-based line in it.
    path: str
    line: int
    #: The checks that failed, each once, in the order they first failed.
    checks: tuple[FailedCheck, ...]
    #: Why the case reached no verdict (its first errored run's ``error_kind: error``).
    error: str
    runs: int
    graded_runs: int
    passes: int
    min_pass_rate: float
    #: A case file that did not load (a ``file`` record).
    broken_file: bool = False

    @property
    def name(self) -> str:
        """``case-id``, or ``case-id[variant]`` in an A/B run."""
        return f"{self.case_id}[{self.variant}]" if self.variant else self.case_id

    @property
    def blocks(self) -> bool:
        return self.severity in BLOCKING

    @property
    def place(self) -> str:
        """``evals/case.yaml:3``."""
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Regression:
    """A case that passed in the baseline and fails now, with the checks that fail."""

    finding: Finding
    #: Advisory: reported, never blocks.
    advisory: bool


@dataclass(frozen=True)
class BaselineDelta:
    """The comparison with the baseline as the results file's ``baseline`` (or
    ``evalcases compare``) has it (docs/results.md, "The baseline gate")."""

    label: str
    blocked: bool
    pass_rate: tuple[float | None, float | None]
    tokens_mean: tuple[float | None, float | None]
    cost_mean: tuple[float | None, float | None]
    #: ``case-id`` or ``case-id[variant]``.
    regressed: tuple[str, ...]
    advisory_regressed: tuple[str, ...]
    improved: tuple[str, ...]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BaselineDelta:
        """The delta of a ``baseline`` object; a missing or malformed field reads as
        nothing."""

        def pair(key: str) -> tuple[float | None, float | None]:
            value = data.get(key)
            if not isinstance(value, list) or len(value) != 2:
                return (None, None)
            a, b = (
                v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
                for v in value
            )
            return (a, b)

        def names(key: str) -> tuple[str, ...]:
            value = data.get(key)
            return tuple(str(v) for v in value) if isinstance(value, list) else ()

        return cls(
            label=str(data.get("file") or "baseline"),
            blocked=bool(data.get("blocked")),
            pass_rate=pair("pass_rate"),
            tokens_mean=pair("tokens_mean"),
            cost_mean=pair("cost_mean"),
            regressed=names("regressed"),
            advisory_regressed=names("advisory_regressed"),
            improved=names("improved"),
        )


def findings(doc: ResultsDocument, base: Path, root: Path) -> list[Finding]:
    """The failed and errored cases of ``doc``, blocking ones first, then by file, line
    and variant. Case files are named in the results file relative to ``base`` (where
    pytest ran) and here relative to ``root``. Perturbed runs are left out: they are
    reported by class (docs/perturbation.md)."""
    records = [r for r in doc.cases if r.perturbation is None]
    grouped: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    for record in records:
        grouped[(record.variant, record.case_id)].append(record)
    out: list[Finding] = []
    for variant, verdicts in case_verdicts(records).items():
        for verdict in verdicts:
            if verdict.outcome not in ("failed", "error"):
                continue
            runs = grouped[(variant, verdict.case_id)]
            first = runs[0]
            errored = next((r for r in runs if r.outcome == "error"), None)
            out.append(
                Finding(
                    case_id=verdict.case_id,
                    variant=variant,
                    outcome=verdict.outcome,
                    severity=verdict.counted_severity,
                    path=relative(first.file, base, root),
                    line=first.line + 1,
                    checks=_failed_checks(runs),
                    error=_error(errored) if errored is not None else "",
                    runs=verdict.runs,
                    graded_runs=verdict.graded_runs,
                    passes=verdict.passes,
                    min_pass_rate=verdict.min_pass_rate,
                    broken_file=first.kind == "file",
                )
            )
    out.sort(key=lambda f: (not f.blocks, f.path, f.line, f.variant))
    return out


def regressions(found: list[Finding], delta: BaselineDelta) -> list[Regression]:
    """The findings the baseline comparison names as regressed, blocking ones first."""
    by_name = {f.name: f for f in found}
    out = [Regression(by_name[n], False) for n in delta.regressed if n in by_name]
    out += [Regression(by_name[n], True) for n in delta.advisory_regressed if n in by_name]
    return out


def relative(file: str, base: Path, root: Path) -> str:
    """``file`` (relative to ``base``, or absolute) relative to ``root``, with ``/``; as
    it is when it lies outside ``root``."""
    path = Path(file) if os.path.isabs(file) else base / file
    try:
        return Path(os.path.relpath(path, root)).as_posix()
    except ValueError:
        return Path(file).as_posix()


def first_line(text: str, limit: int = 300) -> str:
    """The first non-empty line of ``text``, cut to ``limit`` characters."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _failed_checks(runs: list[RunRecord]) -> tuple[FailedCheck, ...]:
    seen: dict[str, FailedCheck] = {}
    # An errored run's checks were never graded.
    for run in (r for r in runs if r.reached_verdict):
        for check in run.checks:
            if not check.passed and check.id not in seen:
                seen[check.id] = FailedCheck(check.id, first_line(check.message))
    return tuple(seen.values())


def _error(run: RunRecord) -> str:
    text = first_line(run.error or "")
    return (
        f"{run.error_kind}: {text}" if run.error_kind and text else text or (run.error_kind or "")
    )
