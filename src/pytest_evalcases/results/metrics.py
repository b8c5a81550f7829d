"""A run's metrics, per variant (docs/results.md, "Metrics"): the success rate of the
graded runs with its Wilson interval, wall time percentiles of passed and of failed runs
apart, tokens and cost per run as mean ± standard deviation, runaway runs, failures by
mode and errors by kind.

Computed once, by the gate (:func:`pytest_evalcases.results.gate.decide`), from the runs
it counts, so that a results file merged from shards holds the metrics of all their runs
together: percentiles are never summed or averaged over files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_evalcases import defaults
from pytest_evalcases.kinds import Spent
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.results.stats import mean_sd, percentile, wilson

#: The percentiles of wall time, as the keys ``p50``, ``p90`` and ``p99``.
PERCENTILES = (50, 90, 99)
#: The word a failed run without a failure mode counts under (docs/results.md,
#: "Failure modes"), and an errored run without an error kind.
UNCLASSIFIED = "unclassified"
UNKNOWN_ERROR = "error"
#: Places the file's means and standard deviations are rounded to: a millionth of a dollar.
DIGITS = 6


@dataclass(frozen=True)
class WallTimes:
    """Seconds of wall time of some runs: nearest-rank percentiles, ``None`` without runs."""

    runs: int = 0
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None

    @classmethod
    def of(cls, durations: Sequence[float]) -> WallTimes:
        p50, p90, p99 = (percentile(durations, p) for p in PERCENTILES)
        return cls(len(durations), p50, p90, p99)

    def to_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "p50": self.p50, "p90": self.p90, "p99": self.p99}


@dataclass(frozen=True)
class Spread:
    """Mean and sample standard deviation per run, over the ``runs`` that reported the
    figure (a run that did not say is not a zero)."""

    runs: int
    mean: float
    sd: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread | None:
        if not values:
            return None
        mean, sd = mean_sd(values)
        return cls(len(values), mean, sd)

    def to_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "mean": round(self.mean, DIGITS), "sd": round(self.sd, DIGITS)}


@dataclass(frozen=True)
class Runaway:
    """A run whose tokens exceed :data:`~pytest_evalcases.defaults.RUNAWAY_FACTOR` times
    the mean of every run of the results file, whatever its case or variant."""

    case_id: str
    variant: str
    repetition: int
    tokens: int
    #: ``tokens`` over the population's mean, rounded to 2 places.
    times_mean: float
    #: The run as pytest named its item (``case[variant-r2]``); empty when not known.
    nodeid: str = ""

    @property
    def label(self) -> str:
        """``case-x[b-r2]`` as pytest named the item, else ``case-x[b, rep 2]``."""
        if self.nodeid:
            return self.nodeid.rsplit("::", 1)[-1]
        variant = f"{self.variant}, " if self.variant else ""
        return f"{self.case_id}[{variant}rep {self.repetition}]"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.case_id,
            "variant": self.variant,
            "repetition": self.repetition,
            "tokens": self.tokens,
            "times_mean": self.times_mean,
        }


@dataclass(frozen=True)
class VariantMetrics:
    """The metrics of one variant's runs."""

    variant: str
    #: Runs that ran: graded or errored (skipped ones and broken case files are not runs).
    runs: int = 0
    #: Runs that reached a verdict (passed, failed, xfailed), and of them those passed.
    graded: int = 0
    passed: int = 0
    wall_passed: WallTimes = WallTimes()
    #: Failed runs, advisory failures (``xfailed``) included.
    wall_failed: WallTimes = WallTimes()
    tokens: Spread | None = None
    cost: Spread | None = None
    runaways: tuple[Runaway, ...] = ()
    #: Failed runs by failure mode, most first; ``unclassified`` for a run without one.
    failures_by_mode: Mapping[str, int] = field(default_factory=dict)
    #: Errored runs by error kind, most first.
    errors_by_kind: Mapping[str, int] = field(default_factory=dict)

    @property
    def success_rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None

    @property
    def ci95(self) -> tuple[float, float] | None:
        """The 95 % Wilson interval of :attr:`success_rate`, rounded to 4 places."""
        if not self.graded:
            return None
        low, high = wilson(self.passed, self.graded)
        return (round(low, 4), round(high, 4))

    def to_dict(self) -> dict[str, Any]:
        ci95 = self.ci95
        return {
            "variant": self.variant,
            "runs": self.runs,
            "graded": self.graded,
            "passed": self.passed,
            "success_rate": self.success_rate,
            "ci95": list(ci95) if ci95 is not None else None,
            "wall_passed": self.wall_passed.to_dict(),
            "wall_failed": self.wall_failed.to_dict(),
            "tokens": self.tokens.to_dict() if self.tokens is not None else None,
            "cost": self.cost.to_dict() if self.cost is not None else None,
            "runaways": [r.to_dict() for r in self.runaways],
            "failures_by_mode": dict(self.failures_by_mode),
            "errors_by_kind": dict(self.errors_by_kind),
        }


@dataclass(frozen=True)
class Metrics:
    """The metrics of a results file: the population's mean tokens per run, which
    runaways are measured against, and each variant's metrics in the variants' order."""

    variants: tuple[VariantMetrics, ...] = ()
    #: Mean tokens per run over every run of every variant that reported tokens.
    tokens_mean: float | None = None
    runaway_factor: float = defaults.RUNAWAY_FACTOR

    def of(self, variant: str) -> VariantMetrics | None:
        """The metrics of the variant named ``variant``, if it ran."""
        return next((v for v in self.variants if v.variant == variant), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "runaway_factor": self.runaway_factor,
            "tokens_mean": round(self.tokens_mean, DIGITS)
            if self.tokens_mean is not None
            else None,
            "variants": [v.to_dict() for v in self.variants],
        }


def compute_metrics(
    records: Iterable[RunRecord],
    order: Sequence[str] = (),
    factor: float = defaults.RUNAWAY_FACTOR,
) -> Metrics:
    """The metrics of ``records``, the runs the gate counts, per variant in ``order``
    (the variants not in it after, by name). Skipped runs and broken case files are not
    runs; a run the scripted model answered reported no tokens or cost and so counts
    in neither (docs/results.md)."""
    runs = [r for r in records if r.kind != "file" and r.outcome != "skipped"]
    spent = [(r, t) for r in runs if (t := tokens(r)) is not None]
    population = sum(t for _, t in spent) / len(spent) if spent else None
    runaways = [
        Runaway(r.case_id, r.variant, r.repetition, t, round(t / population, 2), nodeid=r.nodeid)
        for r, t in spent
        if population and t > factor * population
    ]
    runaways.sort(key=lambda r: (-r.tokens, r.case_id, r.repetition))
    rank = {name: i for i, name in enumerate(order)}
    names = sorted({r.variant for r in runs}, key=lambda n: (rank.get(n, len(rank)), n))
    return Metrics(
        variants=tuple(
            _variant(name, [r for r in runs if r.variant == name], runaways) for name in names
        ),
        tokens_mean=population,
        runaway_factor=factor,
    )


def tokens(record: RunRecord) -> int | None:
    """The run's tokens in plus out; ``None`` when it reported neither."""
    return Spent(record.tokens_in, record.tokens_out).tokens


def _variant(name: str, runs: Sequence[RunRecord], runaways: Sequence[Runaway]) -> VariantMetrics:
    graded = [r for r in runs if r.reached_verdict]
    passed = [r for r in graded if r.outcome == "passed"]
    failed = [r for r in graded if r.outcome != "passed"]
    counted = [t for r in runs if (t := tokens(r)) is not None]
    costs = [r.cost_usd for r in runs if r.cost_usd is not None]
    return VariantMetrics(
        variant=name,
        runs=len(runs),
        graded=len(graded),
        passed=len(passed),
        # A graded directory's run ran no agent: its duration is the grading's.
        wall_passed=WallTimes.of([r.duration for r in passed if not r.graded_dir]),
        wall_failed=WallTimes.of([r.duration for r in failed if not r.graded_dir]),
        tokens=Spread.of([float(t) for t in counted]),
        cost=Spread.of(costs),
        runaways=tuple(r for r in runaways if r.variant == name),
        failures_by_mode=_most_first(r.failure_mode or UNCLASSIFIED for r in failed),
        errors_by_kind=_most_first(
            r.error_kind or UNKNOWN_ERROR for r in runs if r.outcome == "error"
        ),
    )


def _most_first(words: Iterable[str]) -> dict[str, int]:
    counted = Counter(words)
    return dict(sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])))
