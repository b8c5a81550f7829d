"""The results files of a directory over time (docs/results.md, "evalcases trend").

Over the last K runs, per series (the runs of one variant with one agent and model):
the pass rate of each run, a change of the configuration marked where it happened; per
case, how often its outcome flipped from one run to the next under the same
configuration (flake rate: a flip where the configuration changed is the change's, not
flakiness); calibration — cases that always passed
(saturated: they no longer tell configurations apart) and cases that always failed
(testing something no configuration achieves); wall time percentiles of passed and of
failed runs; tokens and cost per case, with runaway runs (more than 3x the mean of the
case's other runs). Red-first files are authoring runs and are left out.
:mod:`pytest_evalcases.report.trend` renders it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pytest_evalcases import defaults
from pytest_evalcases.errors import UsageError
from pytest_evalcases.kinds import CaseOutcome
from pytest_evalcases.results import outcomes
from pytest_evalcases.results import reader as resultsfile
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.record import RunRecord

DEFAULT_LAST = 10
#: "Always" needs at least this many graded runs to mean anything.
MIN_RUNS_FOR_CALIBRATION = 2


@dataclass(frozen=True)
class SeriesKey:
    """What makes runs one series: the variant, its agent and the models its runs
    reported (docs/results.md, "evalcases trend")."""

    variant: str
    agent: str | None
    models: tuple[str, ...]

    def describe(self) -> str:
        """``variant cx · agent codex · model gpt-5``."""
        parts = [f"variant {self.variant}"] if self.variant else []
        parts.append(f"agent {self.agent or 'unknown'}")
        parts.append(f"model {', '.join(self.models) if self.models else 'not reported'}")
        return " · ".join(parts)


@dataclass(frozen=True)
class Point:
    """One run of a series: the variant's case verdicts counted in one results file."""

    document: ResultsDocument
    passed: int
    failed: int
    errors: int
    verdict: str
    #: The variant's configuration files (path -> sha256); ``None`` when the file
    #: does not record them.
    config: dict[str, str] | None
    #: The files that changed against the series' previous run, when its configuration
    #: changed (added and removed files included); ``()`` when it did not.
    config_change: tuple[str, ...] = ()
    #: What the variant's runs cost in dollars; ``None`` when none reported a cost.
    cost: float | None = None

    @property
    def cases(self) -> int:
        """The cases of the run: graded or not (errors)."""
        return self.passed + self.failed + self.errors

    @property
    def whole(self) -> bool:
        """A run of the whole suite, not cut short: its figures are the suite's."""
        return self.document.complete_suite

    @property
    def graded(self) -> int:
        """The cases that passed or failed: what the pass rate is of."""
        return self.passed + self.failed

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None


@dataclass
class Series:
    key: SeriesKey
    points: list[Point] = field(default_factory=list)


@dataclass
class CaseHistory:
    """One case in one series across runs, oldest first."""

    case_id: str
    variant: str
    outcomes: list[CaseOutcome] = field(default_factory=list)
    records: list[RunRecord] = field(default_factory=list)
    #: The configuration each outcome was reached under (an index per configuration
    #: of the series), beside ``outcomes``.
    configs: list[int] = field(default_factory=list)
    #: The series, named when the trend has more than one (``(agent codex · ...)``).
    series: str = ""

    @property
    def name(self) -> str:
        name = f"{self.case_id}[{self.variant}]" if self.variant else self.case_id
        return f"{name} ({self.series})" if self.series else name

    @property
    def decided(self) -> list[CaseOutcome]:
        """The outcomes of the runs where the case passed or failed."""
        return [o for o in self.outcomes if o in ("passed", "failed")]

    def _pairs(self, *, same_config: bool) -> list[tuple[CaseOutcome, CaseOutcome]]:
        decided = [
            (o, c)
            for o, c in zip(self.outcomes, self.configs, strict=True)
            if o in ("passed", "failed")
        ]
        return [
            (a, b) for (a, ca), (b, cb) in itertools.pairwise(decided) if (ca == cb) == same_config
        ]

    @property
    def flips(self) -> int:
        """Outcome changes between consecutive runs under the same configuration."""
        return sum(1 for a, b in self._pairs(same_config=True) if a != b)

    @property
    def config_changes(self) -> int:
        """Outcome changes where the configuration changed: not flakiness."""
        return sum(1 for a, b in self._pairs(same_config=False) if a != b)

    @property
    def flake_rate(self) -> float | None:
        """Flips over the pairs of consecutive graded runs under the same configuration."""
        pairs = len(self._pairs(same_config=True))
        return self.flips / pairs if pairs else None


@dataclass
class Trend:
    """Everything ``evalcases trend`` prints, computed from the loaded documents."""

    runs: list[ResultsDocument]
    cases: list[CaseHistory]
    series: list[Series] = field(default_factory=list)

    @property
    def saturated(self) -> list[CaseHistory]:
        return [c for c in self.cases if _always(c, "passed")]

    @property
    def always_failing(self) -> list[CaseHistory]:
        return [c for c in self.cases if _always(c, "failed")]

    def durations(self, outcome: str) -> list[float]:
        wanted = ("failed", "xfailed") if outcome == "failed" else (outcome,)
        return [
            r.duration
            for c in self.cases
            for r in c.records
            if r.outcome in wanted and not r.graded_dir
        ]

    def runaways(self) -> list[tuple[CaseHistory, RunRecord, str, float, float]]:
        """Runs whose tokens or cost exceed ``defaults.RUNAWAY_FACTOR`` x the mean of the case's
        other runs (the run itself would inflate its own yardstick)."""
        found = []
        for case in self.cases:
            for what, values in (("tokens", tokens(case)), ("cost", costs(case))):
                for i, (record, value) in enumerate(values):
                    others = [v for j, (_, v) in enumerate(values) if j != i]
                    if not others:
                        continue
                    mean = sum(others) / len(others)
                    if mean > 0 and value > defaults.RUNAWAY_FACTOR * mean:
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
    """The trend over ``docs`` (oldest first): each variant of each file a run of its
    series, cases followed per series."""
    series: dict[SeriesKey, Series] = {}
    #: Per series, its configurations in order of appearance (their index is the id).
    configs: dict[SeriesKey, list[dict[str, str] | None]] = {}
    histories: dict[tuple[SeriesKey, str], CaseHistory] = {}
    for doc in docs:
        records = [r for r in doc.cases if r.kind != "file"]
        verdicts = {v.name: v.verdict for v in doc.variants}
        for variant, cases in outcomes.case_verdicts(records).items():
            runs = [r for r in records if r.variant == variant]
            key = _series_key(doc, variant, runs)
            line = series.setdefault(key, Series(key))
            config = _config(doc, variant)
            previous = line.points[-1].config if line.points else None
            known = configs.setdefault(key, [])
            if config not in known:
                known.append(config)
            spent = [_spent_once(r, doc).cost_usd for r in runs]
            paid = [c for c in spent if c is not None]
            line.points.append(
                Point(
                    document=doc,
                    passed=sum(c.outcome == "passed" for c in cases),
                    failed=sum(c.outcome == "failed" for c in cases),
                    errors=sum(c.outcome == "error" for c in cases),
                    verdict=verdicts.get(variant, doc.verdict),
                    config=config,
                    config_change=_changed(previous, config) if line.points else (),
                    cost=sum(paid) if paid else None,
                )
            )
            for c in cases:
                history = histories.setdefault((key, c.case_id), CaseHistory(c.case_id, variant))
                history.outcomes.append(c.outcome)
                history.configs.append(known.index(config))
            for r in runs:
                if r.outcome != "skipped":
                    histories[(key, r.case_id)].records.append(_spent_once(r, doc))
    if len(series) > 1:
        for (key, _), history in histories.items():
            history.series = key.describe()
    ordered = sorted(histories.values(), key=lambda c: (c.variant, c.case_id, c.series))
    return Trend(list(docs), ordered, list(series.values()))


def _series_key(doc: ResultsDocument, variant: str, runs: Sequence[RunRecord]) -> SeriesKey:
    """The variant's agent (its own where the variants run different agents, else the
    file's) and the models its runs reported."""
    own = doc.pins.get("variants")
    pins = own.get(variant) if isinstance(own, dict) else None
    agent = pins.get("agent") if isinstance(pins, dict) else doc.pins.get("agent")
    models = sorted({m.strip() for r in runs if r.model for m in r.model.split(",") if m.strip()})
    return SeriesKey(variant, agent if isinstance(agent, str) else None, tuple(models))


def _config(doc: ResultsDocument, variant: str) -> dict[str, str] | None:
    """The variant's configuration files as the pins record them (path -> sha256)."""
    config = doc.pins.get("config")
    files = config.get(variant) if isinstance(config, dict) else None
    if not isinstance(files, dict):
        return None
    return {str(path): str(sha) for path, sha in files.items()}


def _changed(before: dict[str, str] | None, after: dict[str, str] | None) -> tuple[str, ...]:
    """The files that differ between two configurations; ``()`` when they are the same
    or either is not known."""
    if before is None or after is None or before == after:
        return ()
    return tuple(sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p)))


def _spent_once(record: RunRecord, doc: ResultsDocument) -> RunRecord:
    """A run of a regraded file spent nothing: its tokens and cost are left out, also
    where a file written before regrades said so repeats the recorded run's, which count
    in the file that recorded them (docs/replay.md, "Regrade")."""
    if doc.regraded_from is None:
        return record
    return replace(record, tokens_in=None, tokens_out=None, cost_usd=None)
