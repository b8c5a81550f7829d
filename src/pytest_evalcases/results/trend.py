"""The results files of a directory over time (docs/results.md, "evalcases trend").

Over the last K runs: the pass rate of each run; per case, how often its outcome
flipped from one run to the next (flake rate); calibration — cases that always passed
(saturated: they no longer tell configurations apart) and cases that always failed
(testing something no configuration achieves); wall time percentiles of passed and of
failed runs; tokens and cost per case, with runaway runs (more than 3x the mean of the
case's other runs). Red-first files are authoring runs and are left out.
:mod:`pytest_evalcases.report.trend` renders it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pytest_evalcases.errors import UsageError
from pytest_evalcases.kinds import CaseOutcome
from pytest_evalcases.results import files as resultsfile
from pytest_evalcases.results import gate
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.record import RunRecord

DEFAULT_LAST = 10
RUNAWAY_FACTOR = 3.0
#: "Always" needs at least this many graded runs to mean anything.
MIN_RUNS_FOR_CALIBRATION = 2


@dataclass
class CaseHistory:
    """One case (in one variant) across runs, oldest first."""

    case_id: str
    variant: str
    outcomes: list[CaseOutcome] = field(default_factory=list)
    records: list[RunRecord] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.case_id}[{self.variant}]" if self.variant else self.case_id

    @property
    def decided(self) -> list[CaseOutcome]:
        """The outcomes of the runs where the case passed or failed."""
        return [o for o in self.outcomes if o in ("passed", "failed")]

    @property
    def flips(self) -> int:
        return sum(1 for a, b in itertools.pairwise(self.decided) if a != b)

    @property
    def flake_rate(self) -> float | None:
        decided = self.decided
        return self.flips / (len(decided) - 1) if len(decided) > 1 else None


@dataclass
class Trend:
    """Everything ``evalcases trend`` prints, computed from the loaded documents."""

    runs: list[ResultsDocument]
    cases: list[CaseHistory]

    @property
    def saturated(self) -> list[CaseHistory]:
        return [c for c in self.cases if _always(c, "passed")]

    @property
    def always_failing(self) -> list[CaseHistory]:
        return [c for c in self.cases if _always(c, "failed")]

    def durations(self, outcome: str) -> list[float]:
        wanted = ("failed", "xfailed") if outcome == "failed" else (outcome,)
        return [r.duration for c in self.cases for r in c.records if r.outcome in wanted]

    def runaways(self) -> list[tuple[CaseHistory, RunRecord, str, float, float]]:
        """Runs whose tokens or cost exceed RUNAWAY_FACTOR x the mean of the case's
        other runs (the run itself would inflate its own yardstick)."""
        found = []
        for case in self.cases:
            for what, values in (("tokens", tokens(case)), ("cost", costs(case))):
                for i, (record, value) in enumerate(values):
                    others = [v for j, (_, v) in enumerate(values) if j != i]
                    if not others:
                        continue
                    mean = sum(others) / len(others)
                    if mean > 0 and value > RUNAWAY_FACTOR * mean:
                        found.append((case, record, what, value, mean))
        return found


def _always(case: CaseHistory, outcome: str) -> bool:
    decided = case.decided
    return len(decided) >= MIN_RUNS_FOR_CALIBRATION and all(o == outcome for o in decided)


def tokens(case: CaseHistory) -> list[tuple[RunRecord, float]]:
    return [
        (r, float((r.tokens_in or 0) + (r.tokens_out or 0)))
        for r in case.records
        if r.tokens_in is not None or r.tokens_out is not None
    ]


def costs(case: CaseHistory) -> list[tuple[RunRecord, float]]:
    return [(r, r.cost_usd) for r in case.records if r.cost_usd is not None]


@dataclass(frozen=True)
class History:
    """The results files of a directory that a trend is made of, oldest first."""

    documents: list[ResultsDocument]
    #: Red-first files (authoring runs, their outcomes inverted): left out.
    red_first: int
    #: One message per file that did not read.
    problems: list[str]


def history(directory: Path) -> History:
    """The runs of ``directory`` for a trend: red-first files left out and counted."""
    if not directory.is_dir():
        raise UsageError(f"{directory}: no such directory of results files")
    stored = resultsfile.read_dir(directory)
    docs = stored.documents
    runs = [d for d in docs if not d.is_red_first]
    return History(runs, len(docs) - len(runs), [f"skipped {p}" for p in stored.problems])


def compute(docs: Sequence[ResultsDocument]) -> Trend:
    """The trend over ``docs`` (oldest first)."""
    histories: dict[tuple[str, str], CaseHistory] = {}
    for doc in docs:
        records = [r for r in doc.cases if r.kind != "file"]
        for variant, verdicts in gate.case_verdicts(records).items():
            for v in verdicts:
                key = (variant, v.case_id)
                histories.setdefault(key, CaseHistory(v.case_id, variant)).outcomes.append(
                    v.outcome
                )
        for r in records:
            if r.outcome != "skipped":
                histories.setdefault(
                    (r.variant, r.case_id), CaseHistory(r.case_id, r.variant)
                ).records.append(_spent_once(r, doc))
    return Trend(list(docs), sorted(histories.values(), key=lambda c: (c.variant, c.case_id)))


def _spent_once(record: RunRecord, doc: ResultsDocument) -> RunRecord:
    """A run of a regraded file spent nothing: its tokens and cost are left out, also
    where a file written before regrades said so repeats the recorded run's, which count
    in the file that recorded them (docs/replay.md, "Regrade")."""
    if doc.regraded_from is None:
        return record
    return replace(record, tokens_in=None, tokens_out=None, cost_usd=None)


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile; ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, 0.0
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
