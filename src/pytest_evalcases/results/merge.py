"""Shard results files merged into one (docs/results.md, "Shards and evalcases merge").

The run records are concatenated and everything else is recomputed from them as
pytest would have for one unsharded run: counts, per-variant summaries, the verdict
(:func:`pytest_evalcases.results.gate.decide`, under the policy the files stored). The
merged file is the whole suite when the files together ran every case and run of one
suite that each collected whole (:func:`_selection`). ``evalcases merge``
(``cli/merge.py``) writes the result and exits with the merged verdict.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_evalcases.errors import UsageError
from pytest_evalcases.results import baseline, gate
from pytest_evalcases.results import writer as resultsfile
from pytest_evalcases.results.document import MergedFrom, ResultsDocument, SuiteSelection
from pytest_evalcases.results.factors import Factors
from pytest_evalcases.results.policy import GatePolicy, differences
from pytest_evalcases.results.reader import load_baseline
from pytest_evalcases.results.record import CheckRecord, RunRecord

#: Pins that name sets of files: shards hold different subsets, merged as a union.
_UNION_PINS = ("case_files", "fixtures")


def merge(
    docs: Sequence[ResultsDocument], names: Sequence[str] = (), root: Path | None = None
) -> ResultsDocument:
    """One results document from several; duplicate runs are kept once.

    The variants keep the order of the inputs' ``variants`` lists (the first file's
    first variant is the baseline), whatever order the runs come in; the mode is
    carried, and files of different modes, or of different gate policies, are a
    :class:`UsageError` (``names``, the files' names, make its message). The verdict is
    decided under the files' policy; a baseline it names is read relative to ``root``
    (the current directory without one), where the paths in ``docs`` are relative to.
    """
    if not docs:
        raise UsageError("merge needs at least one results file")
    modes = {doc.mode for doc in docs}
    if len(modes) > 1:
        labels = list(names) or [f"file {i + 1}" for i in range(len(docs))]
        pairs = zip(labels, docs, strict=False)
        listed = ", ".join(f"{label} ({doc.mode})" for label, doc in pairs)
        raise UsageError(f"cannot merge results files of different modes: {listed}")
    warnings: list[str] = []
    records: list[RunRecord] = []
    seen: set[tuple[Any, ...]] = set()
    for doc in docs:
        for record in doc.cases:
            key: tuple[Any, ...] = (
                (record.kind, record.file)
                if record.kind == "file"
                else (record.case_id, record.variant, record.repetition)
            )
            if record.perturbation is not None:
                key += (record.perturbation,)
            if key in seen:
                # A broken case file is reported by every shard; a run twice means the
                # same shard was merged twice.
                if record.kind != "file":
                    warnings.append(f"run {key} appears more than once; kept the first")
                continue
            seen.add(key)
            records.append(record)
    labels = list(names) or [f"file {i + 1}" for i in range(len(docs))]
    policy = _policy(docs, labels, warnings)
    dates = [d for d in (resultsfile.parse_date(doc.date) for doc in docs) if d]
    ends = [d for d in (resultsfile.parse_date(doc.finished) for doc in docs) if d]
    order: list[str] = []
    sources: dict[str, str] = {}
    factors: dict[str, Factors] = {}
    for doc in docs:
        for v in doc.variants:
            if v.name not in sources:
                order.append(v.name)
                sources[v.name] = v.source
            if v.factors is not None:
                factors.setdefault(v.name, v.factors)
    pins = _merge_pins([doc.pins for doc in docs], warnings)
    selection = _selection(docs, records, warnings)
    complete = all(doc.complete for doc in docs)
    reasons = [r for doc in docs for r in doc.incomplete_reasons]
    missing = _missing_shards([doc.shard for doc in docs])
    compared = None
    if policy.baseline is not None and not policy.red_first:
        # The baseline the shards were gated on, compared with all their runs together
        # as with one unsharded run's (docs/results.md, "Shards and evalcases merge").
        path = (root or Path()) / policy.baseline.file
        compared = baseline.check_run(
            load_baseline(path),
            records,
            whole=resultsfile.complete_suite(complete, selection) and not missing,
            pins=pins,
            tolerance=policy.baseline.tolerance,
            label=_display(path),
            modes=policy.baseline.modes,
        )
    report = gate.decide(
        records,
        policy,
        order=order,
        factors=factors,
        # A run that did not finish is never PASS, the whole of it nor any variant.
        incomplete=() if complete else (tuple(reasons) or ("incomplete",)),
        baseline=compared,
    )
    merged = resultsfile.document(
        report,
        started=min(dates) if dates else datetime.now(timezone.utc),
        finished=max(ends) if ends else None,
        complete=complete,
        incomplete_reasons=reasons,
        pins=pins,
        sources=sources,
        selection=selection,
        # Who gave the override, and when: the shards' (the first that says).
        overrider=next((d.override.by for d in docs if d.override and d.override.by), None),
        overridden_at=next((d.override.at for d in docs if d.override and d.override.at), None),
    )
    if missing:
        # The suite did not run whole: say so wherever the merged file goes.
        reasons.append(f"shards not merged: {', '.join(missing)}")
        warnings.append(f"shards not merged: {', '.join(missing)}")
    regraded = {doc.regraded_from for doc in docs}
    return merged.with_changes(
        regraded_from=regraded.pop() if len(regraded) == 1 else None,
        complete=merged.complete and not missing,
        complete_suite=merged.complete_suite and not missing,
        incomplete_reasons=tuple(reasons),
        merged_from=tuple(MergedFrom(doc.date, doc.shard, doc.complete) for doc in docs),
        merge_warnings=tuple(warnings),
    )


def _policy(
    docs: Sequence[ResultsDocument], labels: Sequence[str], warnings: list[str]
) -> GatePolicy:
    """The policy the files were gated under, which the merged verdict is decided by:
    the one the files store, which must be the same in each (a :class:`UsageError`
    naming two files and what differs otherwise). Files written before the policy was
    stored are merged under what they say of it: the first file's ``min_pass_rate``,
    and the perturbation plan their pins name."""
    given = [(label, doc.policy) for label, doc in zip(labels, docs, strict=True) if doc.policy]
    for label, other in given[1:]:
        first_label, first = given[0]
        differ = differences(first, other)
        if differ:
            key, a, b = differ[0]
            raise UsageError(
                "cannot merge results files gated under different policies: "
                f"{first_label} and {label} differ in {key} ({json.dumps(a)} and {json.dumps(b)})"
            )
    if given:
        return given[0][1]
    rates = {doc.min_pass_rate for doc in docs}
    if len(rates) > 1:
        warnings.append(f"files differ in min_pass_rate {sorted(rates)}; used the first")
    return GatePolicy(
        min_pass_rate=docs[0].min_pass_rate,
        red_first=docs[0].is_red_first,
        **_perturbation(docs),
    )


def rebase(doc: ResultsDocument, source: Path, target: Path) -> ResultsDocument:
    """``doc``, read from a file in directory ``source``, with the paths it holds
    relative to its own directory (each run's ``recording``, ``regraded_from``) made
    relative to ``target``, where the merged file goes (docs/results.md, "Shards and
    evalcases merge")."""

    def moved(path: str | None) -> str | None:
        if path is None or os.path.isabs(path):
            return path
        try:
            return Path(os.path.relpath(source / path, target)).as_posix()
        except ValueError:
            return (source / path).as_posix()

    def judged(check: CheckRecord) -> CheckRecord:
        # A judge check's own recording (docs/judge.md) moves with its run's.
        if check.judge is None or check.judge.recording is None:
            return check
        return replace(check, judge=replace(check.judge, recording=moved(check.judge.recording)))

    cases = tuple(
        replace(r, recording=moved(r.recording), checks=[judged(c) for c in r.checks])
        for r in doc.cases
    )
    given = doc.policy
    if given is not None and given.baseline is not None:
        given = given.with_baseline_file(moved(given.baseline.file) or given.baseline.file)
    return doc.with_changes(cases=cases, regraded_from=moved(doc.regraded_from), policy=given)


def _selection(
    docs: Sequence[ResultsDocument], records: Sequence[RunRecord], warnings: list[str]
) -> SuiteSelection | None:
    """The part of the suite the files ran together: each file's collection (the whole
    suite when its paths reached every evals root whole), and of it the cases and runs
    that none of the files ran. ``None`` when a file does not say (written before
    ``selection`` was recorded): the merged file is then taken for the whole suite,
    as those files are."""
    selections = [doc.selection for doc in docs]
    if any(s is None for s in selections):
        return None
    given = [s for s in selections if s is not None]
    uncollected = list(dict.fromkeys(u for s in given for u in s.uncollected))
    suites = sorted({(s.collected, s.collected_runs) for s in given})
    if len(suites) > 1:
        shown = " and ".join(f"{cases} cases" for cases, _ in suites)
        warnings.append(f"the files collected different suites ({shown})")
        uncollected.append(f"the files collected different suites ({shown})")
    collected, collected_runs = suites[-1]
    ran = [r for r in records if r.kind != "file"]
    cases = {r.case_id for r in ran}
    runs = {(r.case_id, r.variant, r.repetition, r.perturbation) for r in ran}
    return SuiteSelection(
        collected=collected,
        deselected=max(0, collected - len(cases)),
        collected_runs=collected_runs,
        deselected_runs=max(0, collected_runs - len(runs)),
        uncollected=tuple(uncollected),
    )


def _missing_shards(shards: Sequence[Any]) -> list[str]:
    """``K/N`` of the shards absent from ``shards`` (when they share one N)."""
    given = {s for s in shards if isinstance(s, str) and "/" in s}
    totals = {s.split("/", 1)[1] for s in given}
    if len(totals) != 1 or not next(iter(totals)).isdigit():
        return []
    n = int(next(iter(totals)))
    return [f"{k}/{n}" for k in range(1, n + 1) if f"{k}/{n}" not in given]


def _merge_pins(pins: Sequence[dict[str, Any]], warnings: list[str]) -> dict[str, Any]:
    merged: dict[str, Any] = dict(pins[0]) if pins else {}
    for other in pins[1:]:
        for key, value in other.items():
            if key in _UNION_PINS and isinstance(value, dict):
                merged[key] = {**value, **merged.get(key, {})}
            elif key == "models" and isinstance(value, list):
                merged[key] = sorted({*merged.get(key, []), *value})
            elif key == "variants" and isinstance(value, dict):
                merged[key] = _merge_variant_pins(merged.get(key), value, warnings)
            elif key == "sent" and isinstance(value, dict):
                merged[key] = _merge_sent(merged.get(key), value, warnings)
            elif key not in merged:
                merged[key] = value
            elif merged[key] != value:
                warnings.append(f"pins differ between the files: {key}")
    return merged


def _perturbation(docs: Sequence[ResultsDocument]) -> dict[str, Any]:
    """The perturbation plan files without a stored policy ran under
    (docs/perturbation.md): whether its perturbed runs block, and the threshold that
    flags a class, so that the merged file scores the classes over every shard's runs
    as each file did over its own."""
    plans = [d.pins.get("perturbation") for d in docs]
    deltas: list[float] = []
    for doc in docs:
        delta = (doc.perturbation or {}).get("max_delta")
        if isinstance(delta, (int, float)):
            deltas.append(float(delta))
    return {
        "perturbed_block": any(isinstance(p, dict) and p.get("blocking") for p in plans),
        "perturb_max_delta": deltas[0] if deltas else None,
    }


def _merge_variant_pins(merged: Any, other: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """Each variant's agent pins (docs/variants.md) over the files: the models its
    runs reported in any of them; the rest as the first file that has the variant."""
    out: dict[str, Any] = dict(merged) if isinstance(merged, dict) else {}
    for name, pins in other.items():
        mine = out.get(name)
        if not isinstance(mine, dict) or not isinstance(pins, dict):
            out.setdefault(name, pins)
            continue
        joined = dict(mine)
        joined["models"] = sorted({*mine.get("models", []), *pins.get("models", [])})
        for key, value in pins.items():
            if key != "models" and key in mine and mine[key] != value:
                warnings.append(f"pins differ between the files: variants.{name}.{key}")
        out[name] = joined
    return out


def _merge_sent(merged: Any, other: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """What the CLI sent, by variant, over the files (docs/results.md, "Pins"): the runs
    read summed, models and tools joined; the hashes and sampling as the first file that
    read any has them, a difference said."""
    out: dict[str, Any] = dict(merged) if isinstance(merged, dict) else {}
    for name, sent in other.items():
        mine = out.get(name)
        if not isinstance(sent, dict) or not sent.get("runs"):
            out.setdefault(name, sent)
            continue
        if not isinstance(mine, dict) or not mine.get("runs"):
            out[name] = sent
            continue
        joined = dict(mine)
        joined["runs"] = mine["runs"] + sent["runs"]
        for key in ("models", "tools"):
            joined[key] = sorted({*mine.get(key, []), *sent.get(key, [])})
        for key, value in sent.items():
            if key not in ("runs", "models", "tools") and mine.get(key) != value:
                warnings.append(f"pins differ between the files: sent.{name or '(default)'}.{key}")
        out[name] = joined
    return out


def summary(doc: ResultsDocument, files: int) -> str:
    """``merged 2 files: 3/4 cases passed, eval gate: BLOCKED (...)``."""
    reason = f" ({doc.verdict_reason})" if doc.verdict_reason else ""
    return (
        f"merged {files} files: {doc.counts.passed}/{doc.counts.total} cases passed, "
        f"eval gate: {doc.verdict}{reason}"
    )


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
