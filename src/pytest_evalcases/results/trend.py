"""``evalcases trend [DIR]``: the results files of a directory over time (SPEC 5.3).

Over the last K runs (``--last``, default 10): the pass rate of each run; per case,
how often its outcome flipped from one run to the next (flake rate); calibration —
cases that always passed (saturated: they no longer tell configurations apart) and
cases that always failed (testing something no configuration achieves); wall time
percentiles of passed and of failed runs; tokens and cost per case as mean ± sd,
with runaway runs (more than 3x the mean of the case's other runs).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_evalcases.cases.rootdir import results_dir
from pytest_evalcases.cli.compare import table
from pytest_evalcases.errors import UsageError
from pytest_evalcases.results import files as resultsfile
from pytest_evalcases.results import gate
from pytest_evalcases.results.record import RunRecord

DEFAULT_LAST = 10
RUNAWAY_FACTOR = 3.0
#: "Always" needs at least this many graded runs to mean anything.
MIN_RUNS_FOR_CALIBRATION = 2


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "trend",
        help="Pass rate, flaky and saturated cases, time, tokens and cost over runs",
        description="Read the results files of DIR (default: where pytest run here "
        "writes them) and report "
        "over the last K runs.",
    )
    parser.add_argument(
        "directory",
        metavar="DIR",
        nargs="?",
        type=Path,
        default=None,
        help="Directory of results files (default: the eval_results_dir of the pytest "
        f"configuration here, else {resultsfile.DEFAULT_DIR})",
    )
    parser.add_argument(
        "--last",
        metavar="K",
        type=_positive,
        default=DEFAULT_LAST,
        help="How many of the latest runs to consider (default: %(default)s)",
    )
    parser.set_defaults(func=run)


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value!r}")
    return number


@dataclass
class CaseHistory:
    """One case (in one variant) across runs, oldest first."""

    case_id: str
    variant: str
    outcomes: list[str] = field(default_factory=list)
    records: list[RunRecord] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.case_id}[{self.variant}]" if self.variant else self.case_id

    @property
    def graded(self) -> list[str]:
        return [o for o in self.outcomes if o in ("passed", "failed")]

    @property
    def flips(self) -> int:
        graded = self.graded
        return sum(1 for a, b in itertools.pairwise(graded) if a != b)

    @property
    def flake_rate(self) -> float | None:
        graded = self.graded
        return self.flips / (len(graded) - 1) if len(graded) > 1 else None


@dataclass
class Trend:
    """Everything ``evalcases trend`` prints, computed from the loaded documents."""

    runs: list[dict[str, Any]]
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
            for what, values in (("tokens", _tokens(case)), ("cost", _costs(case))):
                for i, (record, value) in enumerate(values):
                    others = [v for j, (_, v) in enumerate(values) if j != i]
                    if not others:
                        continue
                    mean = sum(others) / len(others)
                    if mean > 0 and value > RUNAWAY_FACTOR * mean:
                        found.append((case, record, what, value, mean))
        return found


def _always(case: CaseHistory, outcome: str) -> bool:
    graded = case.graded
    return len(graded) >= MIN_RUNS_FOR_CALIBRATION and all(o == outcome for o in graded)


def _tokens(case: CaseHistory) -> list[tuple[RunRecord, float]]:
    return [
        (r, float((r.tokens_in or 0) + (r.tokens_out or 0)))
        for r in case.records
        if r.tokens_in is not None or r.tokens_out is not None
    ]


def _costs(case: CaseHistory) -> list[tuple[RunRecord, float]]:
    return [(r, r.cost_usd) for r in case.records if r.cost_usd is not None]


def load_dir(directory: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every results file of ``directory`` oldest first, and warnings for files skipped."""
    if not directory.is_dir():
        raise UsageError(f"{directory}: no such directory of results files")
    docs, warnings = [], []
    for path in sorted(directory.glob("*.json")):
        try:
            doc = resultsfile.load(path)
        except resultsfile.ResultsFileError as exc:
            warnings.append(f"skipped {exc}")
            continue
        if doc.get("mode") == "red-first":
            continue  # authoring runs invert outcomes: not part of the trend
        doc["_path"] = str(path)
        docs.append(doc)
    docs.sort(key=lambda d: (str(d.get("date", "")), d["_path"]))
    return docs, warnings


def compute(docs: Sequence[dict[str, Any]]) -> Trend:
    """The trend over ``docs`` (oldest first)."""
    histories: dict[tuple[str, str], CaseHistory] = {}
    for doc in docs:
        records = [r for r in resultsfile.records_of(doc) if r.kind != "file"]
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
                ).records.append(r)
    return Trend(list(docs), sorted(histories.values(), key=lambda c: (c.variant, c.case_id)))


def run(args: argparse.Namespace) -> int:
    directory = args.directory or _relative(results_dir(Path.cwd(), resultsfile.DEFAULT_DIR))
    docs, warnings = load_dir(directory)
    for warning in warnings:
        print(f"evalcases trend: warning: {warning}", file=sys.stderr)
    if not docs:
        print(f"no results files in {directory}")
        return 0
    window = docs[-args.last :]
    for line in render(compute(window), len(docs)):
        print(line)
    return 0


def render(trend: Trend, available: int) -> list[str]:
    out = [f"last {len(trend.runs)} of {available} runs", ""]
    out += table(
        ["date", "passed", "pass rate", "verdict", "complete"],
        [
            [
                str(d.get("date", "?")),
                f"{d.get('passed', 0)}/{d.get('total', 0)}",
                _pct(d.get("pass_rate")),
                str(d.get("verdict", "?")),
                "yes" if d.get("complete", True) else "NO",
            ]
            for d in trend.runs
        ],
    )
    out += ["", "flaky cases (outcome changed between runs):"]
    flaky = sorted(
        (c for c in trend.cases if c.flips),
        key=lambda c: (-(c.flake_rate or 0), c.name),
    )
    if flaky:
        out += table(
            ["case", "passed", "flips", "flake rate"],
            [
                [
                    c.name,
                    f"{c.graded.count('passed')}/{len(c.graded)}",
                    str(c.flips),
                    _pct(c.flake_rate),
                ]
                for c in flaky
            ],
        )
    else:
        out.append("  none")
    out += ["", f"calibration over the last {len(trend.runs)} runs:"]
    out += _names("  always passed (saturated, uninformative)", trend.saturated)
    out += _names("  always failed (no configuration satisfies them?)", trend.always_failing)
    out += ["", "wall time per run (seconds):"]
    out += table(
        ["outcome", "runs", "p50", "p90", "p99"],
        [
            [outcome, str(len(d)), *(_secs(percentile(d, p)) for p in (50, 90, 99))]
            for outcome in ("passed", "failed")
            for d in [trend.durations(outcome)]
        ],
    )
    usage_rows = []
    for c in trend.cases:
        tokens = [v for _, v in _tokens(c)]
        costs = [v for _, v in _costs(c)]
        if tokens or costs:
            usage_rows.append([c.name, _mean_sd(tokens, "{:,.0f}"), _mean_sd(costs, "${:.4f}")])
    out += ["", "tokens and cost per case (mean ± sd):"]
    out += table(["case", "tokens", "cost"], usage_rows) if usage_rows else ["  not reported"]
    runaways = trend.runaways()
    if runaways:
        out += ["", f"runaway runs (over {RUNAWAY_FACTOR:g}x the case's mean):"]
        for case, record, what, value, mean in runaways:
            shown = (
                f"${value:.4f} vs ${mean:.4f}" if what == "cost" else f"{value:,.0f} vs {mean:,.0f}"
            )
            out.append(f"  {case.name} r{record.repetition}: {what} {shown}")
    return out


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


def _mean_sd(values: Sequence[float], fmt: str) -> str:
    if not values:
        return "n/a"
    mean, sd = mean_sd(values)
    return f"{fmt.format(mean)} ± {fmt.format(sd)}"


def _names(title: str, cases: Sequence[CaseHistory]) -> list[str]:
    if not cases:
        return [f"{title}: none"]
    return [f"{title}: {len(cases)}", *(f"    {c.name}" for c in cases)]


def _pct(value: Any) -> str:
    return "n/a" if value is None else f"{float(value):.1%}"


def _secs(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _relative(path: Path) -> Path:
    """``path`` relative to the working directory when below it (for messages)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path
