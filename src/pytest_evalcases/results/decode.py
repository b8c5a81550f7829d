"""The fields of a results file's JSON read into the typed
:class:`~pytest_evalcases.results.document.ResultsDocument` (docs/results.md): a missing
key takes its default (files written by older versions lack some), a wrong one is a
:class:`FieldError` naming it (``cases[3].outcome``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from pytest_evalcases import defaults
from pytest_evalcases.kinds import (
    FAILURE_MODES,
    OUTCOMES,
    OVERRIDE_OUTCOMES,
    REPLAY_HOWS,
    SEVERITIES,
)
from pytest_evalcases.results.document import (
    FORMAT,
    MODES,
    CaseEntry,
    ComparisonEntry,
    Counts,
    MergedFrom,
    Mode,
    ResultsDocument,
    SuiteSelection,
    Usage,
    VariantEntry,
)
from pytest_evalcases.results.factors import Factors
from pytest_evalcases.results.metrics import Metrics, Runaway, Spread, VariantMetrics, WallTimes
from pytest_evalcases.results.modes import ModeRule
from pytest_evalcases.results.override import Author, Override
from pytest_evalcases.results.policy import BaselinePolicy, GatePolicy
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.results.skills import SkillLimits

_CASE_OUTCOMES = ("passed", "failed", "error", "skipped")
_STATUSES = ("PASS", "BLOCKED", "INCONCLUSIVE", "NONE")
#: What a run record must carry; the rest has defaults.
_RECORD_KEYS = ("id", "outcome", "file", "line", "defends", "severity")


class FieldError(Exception):
    """A field of the wrong type: ``where`` it is and the ``problem``. The reader turns
    it into a :class:`~pytest_evalcases.results.reader.ResultsFileError` naming the
    file, so it never reaches a user by itself."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where, self.problem = where, problem


_T = TypeVar("_T")


class _Fields:
    """Typed access to one JSON object of the file; a missing key takes its default
    (files written by older versions lack some), a wrong type is a :class:`FieldError`."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise FieldError(where or "the document", "expected an object")
        self.data: dict[str, Any] = data
        self.where = where

    def path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str, check: Callable[[Any], bool], what: str, default: _T) -> _T:
        if key not in self.data:
            return default
        value = self.data[key]
        if not check(value):
            raise FieldError(self.path(key), f"expected {what}, got {value!r}")
        return cast(_T, value)

    def text(self, key: str, default: str = "") -> str:
        return self.get(key, lambda v: isinstance(v, str), "a string", default)

    def text_or_none(self, key: str) -> str | None:
        return self.get(key, lambda v: v is None or isinstance(v, str), "a string", None)

    def integer(self, key: str, default: int = 0) -> int:
        return self.get(key, _is_int, "a whole number", default)

    def number(self, key: str, default: float = 0.0) -> float:
        return float(self.get(key, _is_number, "a number", default))

    def number_or_none(self, key: str) -> float | None:
        value = self.get(key, lambda v: v is None or _is_number(v), "a number", None)
        return None if value is None else float(value)

    def flag(self, key: str, default: bool) -> bool:
        return self.get(key, lambda v: isinstance(v, bool), "true or false", default)

    def choice(self, key: str, choices: Sequence[str], default: str) -> Any:
        return self.get(key, lambda v: v in choices, "one of " + ", ".join(choices), default)

    def objects(self, key: str) -> list[_Fields]:
        items: list[Any] = self.get(key, lambda v: isinstance(v, list), "a list", [])
        return [_Fields(item, f"{self.path(key)}[{i}]") for i, item in enumerate(items)]

    def optional(self, key: str) -> _Fields | None:
        """The object under ``key``; ``None`` when it is missing or ``null``."""
        value = self.data.get(key)
        return None if value is None else _Fields(value, self.path(key))

    def strings(self, key: str) -> tuple[str, ...]:
        items: list[str] = self.get(key, _is_strings, "a list of strings", [])
        return tuple(items)

    def mapping(self, key: str) -> dict[str, Any]:
        value: dict[str, Any] | None = self.get(
            key, lambda v: v is None or isinstance(v, dict), "an object", {}
        )
        return value or {}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _pairs(fields: _Fields, key: str) -> tuple[tuple[str, str], ...]:
    def check(value: Any) -> bool:
        return isinstance(value, list) and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p)
            for p in value
        )

    pairs: list[list[str]] = fields.get(key, check, "a list of [case, check] pairs", [])
    return tuple((a, b) for a, b in pairs)


def _read_counts(f: _Fields) -> Counts:
    return Counts(
        passed=f.integer("passed"),
        failed=f.integer("failed"),
        errors=f.integer("errors"),
        skipped=f.integer("skipped"),
        total=f.integer("total"),
        pass_rate=f.number_or_none("pass_rate"),
    )


def _read_case_entry(f: _Fields) -> CaseEntry:
    ci95 = f.get(
        "ci95",
        lambda v: v is None or (isinstance(v, list) and len(v) == 2 and all(map(_is_number, v))),
        "[low, high] or null",
        None,
    )
    return CaseEntry(
        id=f.text("id"),
        outcome=f.choice("outcome", _CASE_OUTCOMES, "error"),
        runs=f.integer("runs"),
        graded_runs=f.integer("graded"),
        passes=f.integer("passes"),
        errors=f.integer("errors"),
        pass_rate=f.number_or_none("pass_rate"),
        ci95=(float(ci95[0]), float(ci95[1])) if ci95 is not None else None,
        min_pass_rate=f.number("min_pass_rate", defaults.CASE_MIN_PASS_RATE),
    )


def _read_variant(f: _Fields) -> VariantEntry:
    return VariantEntry(
        name=f.text("name"),
        source=f.text("source"),
        counts=_read_counts(f),
        checks_passed=f.integer("checks_passed"),
        checks_total=f.integer("checks_total"),
        verdict=f.choice("verdict", _STATUSES, "NONE"),
        cases=tuple(_read_case_entry(c) for c in f.objects("cases")),
        factors=Factors.from_dict(f.mapping("factors")) if f.data.get("factors") else None,
        usage=_read_usage(_Fields(f.data["usage"], f.path("usage")))
        if isinstance(f.data.get("usage"), dict)
        else None,
    )


def _read_comparison(f: _Fields) -> ComparisonEntry:
    return ComparisonEntry(
        baseline=f.text("baseline"),
        variant=f.text("variant"),
        regressed_cases=f.strings("regressed_cases"),
        improved_cases=f.strings("improved_cases"),
        regressed_checks=_pairs(f, "regressed_checks"),
        improved_checks=_pairs(f, "improved_checks"),
        mcnemar_p=f.number("mcnemar_p", 1.0),
        differ=f.strings("differ") if f.data.get("differ") is not None else None,
    )


def _read_record(f: _Fields) -> RunRecord:
    for key in _RECORD_KEYS:
        if key not in f.data:
            raise FieldError(f.path(key), "missing (every run names its case and outcome)")
    f.text("id")
    f.choice("outcome", OUTCOMES, "error")
    f.text("file")
    f.integer("line")
    f.text("defends")
    f.choice("severity", SEVERITIES, "normal")
    f.choice("kind", ("case", "task", "file"), "case")
    f.text("variant")
    f.integer("repetition")
    f.integer("attempts", 1)
    f.number("duration")
    f.number("min_pass_rate", defaults.CASE_MIN_PASS_RATE)
    for key in ("tokens_in", "tokens_out", "recorded_tokens_in", "recorded_tokens_out"):
        f.get(key, lambda v: v is None or _is_int(v), "a whole number", None)
    f.number_or_none("cost_usd")
    f.number_or_none("recorded_cost_usd")
    f.strings("tags")
    f.get("turns", lambda v: v is None or _is_int(v), "a whole number", None)
    f.strings("permission_denials")
    f.strings("refused_writes")
    f.flag("did_nothing", False)
    f.get(
        "failure_severity",
        lambda v: v is None or v in SEVERITIES,
        "one of " + ", ".join(SEVERITIES) + " or null",
        None,
    )
    f.get(
        "failure_mode",
        lambda v: v is None or v in FAILURE_MODES,
        "one of " + ", ".join(FAILURE_MODES) + " or null",
        None,
    )
    f.text_or_none("recording")
    f.get(
        "replay",
        lambda v: v is None or v in REPLAY_HOWS,
        "one of " + ", ".join(REPLAY_HOWS) + " or null",
        None,
    )
    f.get("saved_tokens", lambda v: v is None or _is_int(v), "a whole number", None)
    f.number_or_none("saved_usd")
    f.text_or_none("perturbation")
    f.flag("scripted", False)
    f.flag("graded_dir", False)
    for check in f.objects("checks"):
        check.text("id")
        check.flag("passed", False)
    for turn in f.objects("conversation"):
        turn.integer("answer_chars")
        for key in ("tokens_in", "tokens_out", "calls"):
            turn.get(key, lambda v: v is None or _is_int(v), "a whole number", None)
        turn.number_or_none("cost_usd")
        turn.number_or_none("duration")
    try:
        return RunRecord.from_dict(f.data)
    except (TypeError, ValueError) as exc:
        raise FieldError(f.where, str(exc)) from None


def _read_selection(f: _Fields) -> SuiteSelection:
    return SuiteSelection(
        arguments=f.strings("arguments"),
        collected=f.integer("collected"),
        deselected=f.integer("deselected"),
        collected_runs=f.integer("collected_runs"),
        deselected_runs=f.integer("deselected_runs"),
        uncollected=f.strings("uncollected"),
    )


def _read_policy(f: _Fields) -> GatePolicy:
    given = f.data.get("baseline")
    baseline = None
    if given is not None:
        b = _Fields(given, f.path("baseline"))
        baseline = BaselinePolicy(
            file=b.text("file"),
            tolerance=b.number("tolerance", defaults.BASELINE_TOLERANCE),
            # Files written before the rule was stored were gated by its defaults.
            modes=ModeRule(
                b.number("mode_rare", defaults.BASELINE_MODE_RARE),
                b.number("mode_new", defaults.BASELINE_MODE_NEW),
                b.integer("mode_min_failures", defaults.BASELINE_MODE_MIN_FAILURES),
            ),
        )
    return GatePolicy(
        min_pass_rate=f.number("min_pass_rate", defaults.MIN_PASS_RATE),
        red_first=f.flag("red_first", False),
        skill_limits=SkillLimits(
            f.number_or_none("skill_min_recall"), f.number_or_none("skill_max_false_trigger")
        ),
        perturbed_block=f.flag("perturb_blocking", False),
        perturb_max_delta=f.number_or_none("perturb_max_delta"),
        baseline=baseline,
        override=f.text_or_none("override"),
    )


def _read_override(f: _Fields) -> Override:
    given = f.data.get("by")
    by = None
    if given is not None:
        b = _Fields(given, f.path("by"))
        by = Author(b.text_or_none("name"), b.text_or_none("email"), b.text_or_none("source"))
    return Override(
        rationale=f.text("rationale"),
        outcome=f.choice("outcome", OVERRIDE_OUTCOMES, "unused"),
        why=f.text("why"),
        verdict=f.choice("verdict", _STATUSES, "NONE"),
        reasons=f.strings("reasons"),
        cases=f.strings("cases"),
        by=by,
        at=f.text_or_none("at"),
    )


def _read_usage(f: _Fields) -> Usage:
    return Usage(
        runs_with_tokens=f.integer("runs_with_tokens"),
        tokens_total=f.integer("tokens_total"),
        tokens_mean=f.number_or_none("tokens_mean"),
        runs_with_cost=f.integer("runs_with_cost"),
        cost_total=f.number("cost_total"),
        cost_mean=f.number_or_none("cost_mean"),
    )


def _read_metrics(f: _Fields) -> Metrics:
    return Metrics(
        variants=tuple(_read_variant_metrics(v) for v in f.objects("variants")),
        tokens_mean=f.number_or_none("tokens_mean"),
        runaway_factor=f.number("runaway_factor", defaults.RUNAWAY_FACTOR),
    )


def _read_variant_metrics(f: _Fields) -> VariantMetrics:
    return VariantMetrics(
        variant=f.text("variant"),
        runs=f.integer("runs"),
        graded=f.integer("graded"),
        passed=f.integer("passed"),
        wall_passed=_read_wall(f.optional("wall_passed")),
        wall_failed=_read_wall(f.optional("wall_failed")),
        tokens=_read_spread(f.optional("tokens")),
        cost=_read_spread(f.optional("cost")),
        runaways=tuple(
            Runaway(
                case_id=r.text("id"),
                variant=r.text("variant"),
                repetition=r.integer("repetition"),
                tokens=r.integer("tokens"),
                times_mean=r.number("times_mean"),
            )
            for r in f.objects("runaways")
        ),
        failures_by_mode=_counts_of(f, "failures_by_mode"),
        errors_by_kind=_counts_of(f, "errors_by_kind"),
    )


def _read_wall(f: _Fields | None) -> WallTimes:
    if f is None:
        return WallTimes()
    return WallTimes(
        runs=f.integer("runs"),
        p50=f.number_or_none("p50"),
        p90=f.number_or_none("p90"),
        p99=f.number_or_none("p99"),
    )


def _read_spread(f: _Fields | None) -> Spread | None:
    if f is None:
        return None
    return Spread(runs=f.integer("runs"), mean=f.number("mean"), sd=f.number("sd"))


def _counts_of(f: _Fields, key: str) -> dict[str, int]:
    counts = f.mapping(key)
    for word, count in counts.items():
        if not _is_int(count):
            raise FieldError(f"{f.path(key)}.{word}", f"expected a whole number, got {count!r}")
    return dict(counts)


def from_dict(data: Any) -> ResultsDocument:
    """The document of parsed JSON; raises :class:`FieldError` naming the bad field."""
    f = _Fields(data, "")
    merged = f.objects("merged_from") if "merged_from" in f.data else None
    warnings = f.strings("merge_warnings") if "merge_warnings" in f.data else None
    baseline = f.mapping("baseline") if f.data.get("baseline") is not None else None
    usage_data = f.data.get("usage")
    mode: Mode = f.choice("mode", MODES, "run")
    complete = f.flag("complete", True)
    shard = f.text_or_none("shard")
    selection = f.data.get("selection")
    policy = f.data.get("policy")
    overridden = f.data.get("override")
    metrics = f.data.get("metrics")
    return ResultsDocument(
        format=f.integer("format", FORMAT),
        date=f.text("date"),
        finished=f.text_or_none("finished"),
        duration=f.number_or_none("duration"),
        complete=complete,
        incomplete_reasons=f.strings("incomplete_reasons"),
        mode=mode,
        # The real counts; files written before ``counts`` have them at the top level.
        counts=_read_counts(_Fields(f.data["counts"], "counts"))
        if f.data.get("counts") is not None
        else _read_counts(f),
        checks_passed=f.integer("checks_passed"),
        checks_total=f.integer("checks_total"),
        verdict=f.choice("verdict", _STATUSES, "NONE"),
        verdict_reason=f.text("verdict_reason"),
        min_pass_rate=f.number("min_pass_rate", defaults.MIN_PASS_RATE),
        shard=shard,
        usage=_read_usage(_Fields(usage_data, "usage")) if usage_data is not None else Usage(),
        pins=f.mapping("pins"),
        variants=tuple(_read_variant(v) for v in f.objects("variants")),
        comparisons=tuple(_read_comparison(c) for c in f.objects("comparisons")),
        cases=tuple(_read_record(c) for c in f.objects("cases")),
        baseline=baseline,
        merged_from=tuple(
            MergedFrom(m.text_or_none("date"), m.text_or_none("shard"), m.data.get("complete"))
            for m in merged
        )
        if merged is not None
        else None,
        merge_warnings=warnings,
        # Files written before these keys: whole unless cut short or a shard.
        complete_suite=f.flag("complete_suite", complete and shard is None),
        selection=_read_selection(_Fields(selection, "selection"))
        if selection is not None
        else None,
        regraded_from=f.text_or_none("regraded_from"),
        perturbation=f.mapping("perturbation") if f.data.get("perturbation") is not None else None,
        policy=_read_policy(_Fields(policy, "policy")) if policy is not None else None,
        override=_read_override(_Fields(overridden, "override"))
        if overridden is not None
        else None,
        metrics=_read_metrics(_Fields(metrics, "metrics")) if metrics is not None else None,
    )
