"""``evalcases merge FILE... [-o OUT]``: shard results files into one (SPEC 7).

The run records are concatenated and everything else is recomputed from them as
pytest would have for one unsharded run: counts, per-variant summaries, the verdict
(:func:`pytest_evalcases.results.gate.evaluate`). The exit status follows the merged verdict
(0 PASS, 1 BLOCKED, 2 INCONCLUSIVE), so a CI job can gate on the merge.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_evalcases.errors import UsageError
from pytest_evalcases.results import files as resultsfile
from pytest_evalcases.results import gate
from pytest_evalcases.results.record import RunRecord

#: Pins that name sets of files: shards hold different subsets, merged as a union.
_UNION_PINS = ("case_files", "fixtures")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "merge",
        help="Merge the results files of shards (--eval-shard K/N) into one",
        description="Merge results files into one and recompute the verdict. Exit "
        "status: 0 PASS, 1 BLOCKED, 2 INCONCLUSIVE.",
    )
    parser.add_argument(
        "files", metavar="FILE", nargs="+", type=Path, help="Results files of the shards"
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        type=Path,
        default=None,
        help="Where to write the merged file (default: standard output)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    doc = merge([resultsfile.load(path) for path in args.files])
    for warning in doc.get("merge_warnings", []):
        print(f"evalcases merge: warning: {warning}", file=sys.stderr)
    if args.output is None:
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        resultsfile.write(doc, args.output, replace=True)
    reason = f" ({doc['verdict_reason']})" if doc.get("verdict_reason") else ""
    print(
        f"merged {len(args.files)} files: {doc['passed']}/{doc['total']} cases passed, "
        f"eval gate: {doc['verdict']}{reason}",
        file=sys.stderr,
    )
    return gate.Verdict(str(doc["verdict"])).exit_code or 0


def merge(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One results document from several; duplicate runs are kept once."""
    if not docs:
        raise UsageError("merge needs at least one results file")
    warnings: list[str] = []
    records: list[RunRecord] = []
    seen: set[tuple[Any, ...]] = set()
    for doc in docs:
        for record in resultsfile.records_of(doc):
            key = (
                (record.kind, record.file)
                if record.kind == "file"
                else (record.case_id, record.variant, record.repetition)
            )
            if key in seen:
                # A broken case file is reported by every shard; a run twice means the
                # same shard was merged twice.
                if record.kind != "file":
                    warnings.append(f"run {key} appears more than once; kept the first")
                continue
            seen.add(key)
            records.append(record)
    rates = {float(doc["min_pass_rate"]) for doc in docs if doc.get("min_pass_rate") is not None}
    if len(rates) > 1:
        warnings.append(f"files differ in min_pass_rate {sorted(rates)}; used the first")
    min_pass_rate = float(docs[0].get("min_pass_rate") or 0.9)
    dates = [d for d in (resultsfile.parse_date(doc.get("date", "")) for doc in docs) if d]
    ends = [d for d in (resultsfile.parse_date(doc.get("finished") or "") for doc in docs) if d]
    reasons = [r for doc in docs for r in doc.get("incomplete_reasons", [])]
    complete = all(doc.get("complete", True) for doc in docs)
    sources: dict[str, str] = {}
    for doc in docs:
        for v in doc.get("variants", []):
            sources.setdefault(v.get("name", ""), v.get("source", ""))
    merged = resultsfile.document(
        records,
        min_pass_rate,
        started=min(dates) if dates else datetime.now(timezone.utc),
        finished=max(ends) if ends else None,
        complete=complete,
        incomplete_reasons=reasons,
        pins=_merge_pins([doc.get("pins") or {} for doc in docs], warnings),
        sources=sources,
    )
    merged["merged_from"] = [
        {"date": doc.get("date"), "shard": doc.get("shard"), "complete": doc.get("complete")}
        for doc in docs
    ]
    missing = _missing_shards([doc.get("shard") for doc in docs])
    if missing:
        # The suite did not run whole: say so wherever the merged file goes.
        merged["complete"] = False
        merged["incomplete_reasons"].append(f"shards not merged: {', '.join(missing)}")
        warnings.append(f"shards not merged: {', '.join(missing)}")
    merged["merge_warnings"] = warnings
    return merged


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
            elif key not in merged:
                merged[key] = value
            elif merged[key] != value:
                warnings.append(f"pins differ between the files: {key}")
    return merged
