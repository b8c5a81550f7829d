"""The baseline gate (docs/results.md, "The baseline gate"): this run against a stored results file.

Both sides are results documents, so ``--eval-baseline`` during a run and
``evalcases compare A.json B.json`` afterwards compute the very same thing. A run is
blocked when its pass rate of critical and normal cases drops more than the tolerance
below the baseline's, when its mean tokens or cost per run exceed :data:`USAGE_FACTOR`
times the baseline's, or when a critical or normal case that passed in the baseline
fails now, or when a failure mode that was rare in the baseline's failures is common in
the run's (:class:`~pytest_evalcases.results.modes.ModeRule`); advisory cases are
reported and never block. Differing pins (model, agent version, case files, what the CLI
sent, lock files) do not block; they are reported, since they explain a difference rather
than make one; a changed configuration, and what the CLI sent differently with it, is
reported as expected (:func:`pin_changes`).

Like is compared with like: when either side ran only part of the suite (``-k``,
``-m``, paths, ``--eval-changed``, a shard; ``complete_suite`` false), the pass rate
and the usage are those of the cases both ran, never a subset's against a whole
suite's (docs/results.md, "Runs of part of the suite").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_evalcases import defaults
from pytest_evalcases.kinds import CaseOutcome, FailureMode, Severity
from pytest_evalcases.results.document import ResultsDocument, usage
from pytest_evalcases.results.modes import ModeRule, distribution
from pytest_evalcases.results.outcomes import BLOCKING, CaseVerdict, case_verdicts
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.text import percent, plural

USAGE_FACTOR = 1.3
#: What the baseline gate's pass rate counts (advisory cases never block).
RATE = "pass rate (critical and normal)"


@dataclass(frozen=True)
class CaseRow:
    """One case in both runs: ``before``/``after`` are case verdicts or ``None``."""

    case_id: str
    variant: str
    before: CaseOutcome | None
    after: CaseOutcome | None
    #: The severity the gate counts the case under now (in the baseline, for a case
    #: this run did not run): an advisory case never blocks, here as in the gate.
    severity: Severity = "normal"

    @property
    def blocks(self) -> bool:
        return self.severity in BLOCKING

    @property
    def change(self) -> str:
        if self.before == "passed" and self.after == "failed":
            return "regressed"
        if self.before == "failed" and self.after == "passed":
            return "improved"
        if self.before is None:
            return "new"
        if self.after is None:
            return "missing"
        return ""


@dataclass(frozen=True)
class BaselineResult:
    """The comparison of a run (``after``) with its baseline (``before``)."""

    label: str
    rows: tuple[CaseRow, ...]
    pass_rate: tuple[float | None, float | None]
    tokens_mean: tuple[float | None, float | None]
    cost_mean: tuple[float | None, float | None]
    #: Why the run is blocked; empty when it is not.
    reasons: tuple[str, ...]
    #: Pins that differ, one phrase each (not expected with the configuration).
    pin_differences: tuple[str, ...]
    #: When either side is part of the suite: how many cases both ran, on which the
    #: pass rate and usage were compared; ``None`` for two whole suites.
    common: int | None = None
    #: Which side is part of the suite: (baseline, run).
    partial: tuple[bool, bool] = (False, False)
    #: The failed runs of the critical and normal cases by failure mode: (baseline, run).
    failure_modes: tuple[dict[FailureMode, int], dict[FailureMode, int]] = ({}, {})
    #: Pins that changed as expected with the configuration: information.
    pin_expected: tuple[str, ...] = ()

    @property
    def blocked(self) -> bool:
        return bool(self.reasons)

    @property
    def regressed(self) -> list[CaseRow]:
        """The critical and normal cases that passed in the baseline and fail now."""
        return [r for r in self.rows if r.change == "regressed" and r.blocks]

    @property
    def advisory_regressed(self) -> list[CaseRow]:
        """The advisory cases that passed in the baseline and fail now: reported only."""
        return [r for r in self.rows if r.change == "regressed" and not r.blocks]

    @property
    def improved(self) -> list[CaseRow]:
        return [r for r in self.rows if r.change == "improved"]

    def scope(self, names: tuple[str, str] = ("the baseline", "this run")) -> str:
        """``compared on the 4 cases both runs ran (this run is part of the suite)``,
        or ``""`` for two whole suites; ``names`` name the baseline and the run."""
        if self.common is None:
            return ""
        sides = [name for name, part in zip(names, self.partial, strict=True) if part]
        who = " and ".join(sides) + (" are" if len(sides) > 1 else " is")
        return (
            f"compared on the {plural(self.common, 'case')} both runs ran ({who} part of the suite)"
        )

    def lines(self) -> list[str]:
        """Lines for the ``eval gate`` section."""
        before, after = self.pass_rate
        advisory = self.advisory_regressed
        scope = self.scope()
        out = [
            f"baseline {self.label}: "
            + (f"{scope}; " if scope else "")
            + f"{RATE} {percent(before)} -> {percent(after)}; "
            f"{len(self.regressed)} regressed, {len(self.improved)} improved"
            + (f", {len(advisory)} advisory regressed" if advisory else "")
        ]
        for row in self.regressed:
            out.append(f"  regressed since baseline: {_name(row)}")
        for row in advisory:
            out.append(f"  regressed since baseline (advisory, does not block): {_name(row)}")
        if self.pin_expected:
            out.append(
                "pins changed as expected with the configuration: " + "; ".join(self.pin_expected)
            )
        if self.pin_differences:
            out.append(
                "WARNING: pins differ from the baseline, results may not be comparable: "
                + "; ".join(self.pin_differences)
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.label,
            "blocked": self.blocked,
            "reasons": list(self.reasons),
            "pin_differences": list(self.pin_differences),
            "pin_expected": list(self.pin_expected),
            "regressed": [_name(r) for r in self.regressed],
            "advisory_regressed": [_name(r) for r in self.advisory_regressed],
            "improved": [_name(r) for r in self.improved],
            "pass_rate": list(self.pass_rate),
            "tokens_mean": list(self.tokens_mean),
            "cost_mean": list(self.cost_mean),
            "compared_on": self.common,
            "failure_modes": [dict(side) for side in self.failure_modes],
        }


def check(
    before: ResultsDocument,
    after: ResultsDocument,
    tolerance: float = defaults.BASELINE_TOLERANCE,
    label: str = "baseline",
) -> BaselineResult:
    """Compare the results document ``after`` with ``before``; ``tolerance`` is in
    percentage points."""
    return check_run(
        before,
        after.cases,
        whole=after.complete_suite,
        pins=after.pins,
        tolerance=tolerance,
        label=label,
    )


def check_run(
    before: ResultsDocument,
    records: Sequence[RunRecord],
    *,
    whole: bool,
    pins: dict[str, Any],
    tolerance: float = defaults.BASELINE_TOLERANCE,
    label: str = "baseline",
    modes: ModeRule | None = None,
) -> BaselineResult:
    """Compare a run, its ``records`` and ``pins``, with ``before``, as :func:`check`
    does the document they make; ``whole``: the run covered the whole suite (its
    ``complete_suite``); ``modes``: the failure-mode rule (its defaults without one)."""
    old_records = [r for r in before.cases if r.kind != "file"]
    new_records = [r for r in records if r.kind != "file"]
    old = case_verdicts(old_records)
    new = case_verdicts(new_records)
    rows = _align(old, new)
    partial = (not before.complete_suite, not whole)
    common: int | None = None
    if any(partial):
        both = [
            r
            for r in rows
            if r.before not in (None, "skipped") and r.after not in (None, "skipped")
        ]
        ids = {r.case_id for r in both}
        common = len(ids)
        gated = [r for r in both if r.blocks]
        rate = (_rows_rate(gated, before=True), _rows_rate(gated, before=False))
        old_records = [r for r in old_records if r.case_id in ids]
        new_records = [r for r in new_records if r.case_id in ids]
    else:
        rate = (_rate(old), _rate(new))
    old_usage, new_usage = usage(old_records), usage(new_records)
    tokens = (old_usage.tokens_mean, new_usage.tokens_mean)
    cost = (old_usage.cost_mean, new_usage.cost_mean)
    reasons: list[str] = []
    if rate[0] is not None and rate[1] is not None and rate[1] < rate[0] - tolerance / 100 - 1e-9:
        reasons.append(
            f"{RATE} {percent(rate[1])} dropped more than {tolerance:g} points below "
            f"the baseline's {percent(rate[0])}"
        )
    # Advisory cases are reported and never block, here as in the gate; every
    # blocking case is named.
    regressed = [r for r in rows if r.change == "regressed" and r.blocks]
    if regressed:
        names = ", ".join(_name(r) for r in regressed)
        reasons.append(
            f"{plural(len(regressed), 'case')} passed in the "
            f"baseline and fail{'s' if len(regressed) == 1 else ''} now: {names}"
        )
    for what, (b, a), fmt in (
        ("tokens", tokens, "{:,.0f}"),
        ("cost", cost, "${:.4f}"),
    ):
        if b is not None and a is not None and b > 0 and a > USAGE_FACTOR * b:
            reasons.append(
                f"mean {what} per run {fmt.format(a)} exceeds {USAGE_FACTOR:g}x "
                f"the baseline's {fmt.format(b)}"
            )
    rule = modes or ModeRule()
    # Advisory failures (xfailed) never block, here as anywhere.
    reasons += rule.new_modes(old_records, new_records)
    changes = pin_changes(before.pins, pins)
    return BaselineResult(
        label=label,
        rows=tuple(rows),
        pass_rate=rate,
        tokens_mean=tokens,
        cost_mean=cost,
        reasons=tuple(reasons),
        pin_differences=changes.warnings,
        common=common,
        partial=partial,
        failure_modes=(
            distribution(r for r in old_records if r.outcome == "failed"),
            distribution(r for r in new_records if r.outcome == "failed"),
        ),
        pin_expected=changes.expected,
    )


@dataclass(frozen=True)
class PinChanges:
    """The pins that differ between two results files, one phrase each: ``expected``
    are the configuration fingerprint and what follows from it (what the CLI sent: its
    system prompt, context, tools, models and sampling, of a variant whose configuration
    changed), information; ``warnings`` are the rest, which may make the two runs not
    comparable."""

    warnings: tuple[str, ...] = ()
    expected: tuple[str, ...] = ()


def pin_changes(before: dict[str, Any], after: dict[str, Any]) -> PinChanges:
    """The pins that differ: agent, version, models, permissions, configuration, what
    the CLI sent, case files, fixtures, the machine-wide configuration, lock files."""
    out: list[str] = []
    expected: list[str] = []
    for key, what in (
        ("agent", "agent"),
        ("agent_version", "agent version"),
        ("models", "model"),
        ("permissions", "permissions"),
    ):
        b, a = before.get(key), after.get(key)
        if b != a and (b or a):
            out.append(f"{what} {_show(b)} -> {_show(a)}")
    b_fp, a_fp = before.get("config_fingerprint"), after.get("config_fingerprint")
    config_changed = bool(b_fp and a_fp and b_fp != a_fp)
    if config_changed and isinstance(b_fp, str) and isinstance(a_fp, str):
        changed = _changed_files(_flat(before.get("config")), _flat(after.get("config")))
        expected.append(
            f"configuration fingerprint {b_fp[:12]} -> {a_fp[:12]}"
            + (f" ({', '.join(changed[:5])})" if changed else "")
        )
    out += _variant_differences(before.get("variants"), after.get("variants"))
    for variant, phrase in _sent_differences(before.get("sent"), after.get("sent")):
        if config_changed and _variant_config_changed(before, after, variant):
            expected.append(phrase)
        else:
            out.append(phrase)
    for key, what in (
        ("case_files", "case files"),
        ("fixtures", "fixtures"),
        ("machine_config", "machine-wide configuration"),
    ):
        changed = _changed_files(before.get(key) or {}, after.get(key) or {})
        if changed:
            more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
            out.append(f"{what} changed: {', '.join(changed[:5])}{more}")
    b_lock, a_lock = before.get("lock_files"), after.get("lock_files")
    if isinstance(b_lock, dict) and isinstance(a_lock, dict) and b_lock != a_lock:
        # A lock file that appeared or went away is a change too.
        names = sorted(n for n in b_lock.keys() | a_lock.keys() if b_lock.get(n) != a_lock.get(n))
        out.append(f"lock files changed: {', '.join(names)}")
    return PinChanges(tuple(out), tuple(expected))


#: What the CLI sent (``pins.sent``), compared: key, and how it is named.
_SENT = (
    ("system_prompt_sha256", "system prompt"),
    ("context_sha256", "context"),
    ("models", "models sent"),
    ("tools", "tools offered"),
    ("sampling", "sampling"),
)


def _sent_differences(before: Any, after: Any) -> list[tuple[str, str]]:
    """``(variant, phrase)`` for what the CLI sent that differs, of each variant both
    files read requests of, alike live or scripted (docs/results.md, "Pins")."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    out: list[tuple[str, str]] = []
    for name in sorted(before.keys() & after.keys()):
        b, a = before[name], after[name]
        if not isinstance(b, dict) or not isinstance(a, dict):
            continue
        if not b.get("runs") or not a.get("runs") or b.get("scripted") != a.get("scripted"):
            continue
        where = f"sent (variant {name})" if name else "sent"
        for key, what in _SENT:
            if b.get(key) == a.get(key):
                continue
            if key.endswith("sha256"):
                shown = f"{str(b.get(key))[:12]} -> {str(a.get(key))[:12]}"
            elif key == "tools":
                shown = _tools_change(b.get(key), a.get(key))
            else:
                shown = f"{_show(_compact(b.get(key)))} -> {_show(_compact(a.get(key)))}"
            out.append((name, f"{where}: {what} {shown}"))
    return out


def _tools_change(before: Any, after: Any) -> str:
    """``+Write, -Edit``: the tools offered now and not before, and before and not now."""
    b = set(before) if isinstance(before, list) else set()
    a = set(after) if isinstance(after, list) else set()
    return ", ".join([f"+{t}" for t in sorted(a - b)] + [f"-{t}" for t in sorted(b - a)])


def _compact(value: Any) -> Any:
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return value


def _variant_config_changed(before: dict[str, Any], after: dict[str, Any], variant: str) -> bool:
    """Whether ``variant``'s configuration files differ between the two files (when
    either does not list them, the whole configuration fingerprint says)."""
    b, a = before.get("config"), after.get("config")
    if isinstance(b, dict) and isinstance(a, dict) and variant in b and variant in a:
        return bool(b[variant] != a[variant])
    return True


def _variant_differences(before: Any, after: Any) -> list[str]:
    """``variant cx: model gpt-5 -> gpt-5.1``: what differs in the agent of a variant
    both files ran (docs/variants.md)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    out: list[str] = []
    for name in sorted(before.keys() & after.keys()):
        b, a = before[name], after[name]
        if not isinstance(b, dict) or not isinstance(a, dict):
            continue
        for key, what in (
            ("agent", "agent"),
            ("agent_version", "agent version"),
            ("model", "model asked for"),
            ("models", "models"),
            ("args", "args"),
        ):
            if b.get(key) != a.get(key) and (b.get(key) or a.get(key)):
                out.append(f"variant {name}: {what} {_show(b.get(key))} -> {_show(a.get(key))}")
    return out


def _changed_files(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Paths present in both with different hashes (shards hold different subsets,
    so a path on one side only is not a difference)."""
    return sorted(p for p in before.keys() & after.keys() if before[p] != after[p])


def _flat(config: Any) -> dict[str, Any]:
    if not isinstance(config, dict):
        return {}
    return {
        f"{variant}:{path}" if variant else path: sha
        for variant, files in config.items()
        if isinstance(files, dict)
        for path, sha in files.items()
    }


def _align(old: dict[str, list[CaseVerdict]], new: dict[str, list[CaseVerdict]]) -> list[CaseRow]:
    """Rows by (variant, case). Variants pair by name; a side with a single variant
    pairs with every variant of the other (a one-configuration baseline against an
    A/B run)."""

    def partner(variant: str, others: dict[str, list[CaseVerdict]]) -> str | None:
        if variant in others:
            return variant
        return next(iter(others)) if len(others) == 1 else None

    rows: dict[tuple[str, str], CaseRow] = {}
    for variant, cases in new.items():
        other = partner(variant, old)
        before = {c.case_id: c.outcome for c in old.get(other, [])} if other is not None else {}
        for c in cases:
            rows[(variant, c.case_id)] = CaseRow(
                c.case_id, variant, before.get(c.case_id), c.outcome, c.counted_severity
            )
    for variant, cases in old.items():
        other = partner(variant, new)
        for c in cases:
            key = (other if other is not None else variant, c.case_id)
            if key not in rows:
                rows[key] = CaseRow(c.case_id, key[0], c.outcome, None, c.counted_severity)
    return sorted(rows.values(), key=lambda r: (r.variant, r.case_id))


def _rate(verdicts: dict[str, list[CaseVerdict]]) -> float | None:
    """The pass rate of the critical and normal cases, as the gate counts it."""
    cases = [c for cases in verdicts.values() for c in cases if c.counted_severity in BLOCKING]
    passed = sum(1 for c in cases if c.outcome == "passed")
    decided = sum(1 for c in cases if c.outcome in ("passed", "failed"))
    return passed / decided if decided else None


def _rows_rate(rows: list[CaseRow], *, before: bool) -> float | None:
    outcomes = [r.before if before else r.after for r in rows]
    passed = outcomes.count("passed")
    decided = passed + outcomes.count("failed")
    return passed / decided if decided else None


def _name(row: CaseRow) -> str:
    return f"{row.case_id}[{row.variant}]" if row.variant else row.case_id


def _show(value: Any) -> str:
    if value is None or value == [] or value == "":
        return "none"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
