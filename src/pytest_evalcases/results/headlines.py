"""The headlines of results files, read leniently for the HTML report's trend chart
(docs/variants.md, "The HTML report"), which also shows hand-made and older files."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_evalcases.results.reader import ResultsFileError, check_format, read_json


@dataclass(frozen=True)
class Headline:
    """The top line of a results file, read leniently for the HTML report's trend
    chart, which also shows hand-made and older files: the date, the overall pass
    rate (0..1), and the pass rate of each variant."""

    file: str
    date: str
    pass_rate: float
    passed: int | None = None
    total: int | None = None
    verdict: str = ""
    variants: dict[str, float] = field(default_factory=dict)
    #: Whether the run covered the whole suite: a run of part of it has a pass rate
    #: over other cases, not to be drawn on one line with the others.
    complete_suite: bool = True


def read_headlines(directory: Path) -> list[Headline]:
    """The headlines of ``directory``'s results files, oldest first; files that are
    not JSON objects with a usable pass rate, and red-first files, are left out."""
    try:
        paths = sorted(p for p in directory.glob("*.json") if p.is_file())
    except OSError:
        return []
    found = []
    for path in paths:
        try:
            data = read_json(path)
            if isinstance(data, dict):
                check_format(data, path)
        except ResultsFileError:
            continue
        headline = _headline(data, path.name)
        if headline is not None:
            found.append(headline)
    found.sort(key=lambda h: (h.date, h.file))
    return found


def _headline(data: Any, name: str) -> Headline | None:
    if not isinstance(data, dict) or data.get("mode") == "red-first":
        return None
    # The real counts; the top-level ones are null for a run of part of the suite
    # (docs/results.md, "A trend with jq"), and all there is in older files.
    counts = data.get("counts")
    if not isinstance(counts, dict):
        counts = data
    passed, total = _int_or_none(counts.get("passed")), _int_or_none(counts.get("total"))
    rate = _share(counts.get("pass_rate"))
    if rate is None and passed is not None and total:
        rate = _share(passed / total)
    if rate is None:
        return None
    date, verdict = data.get("date"), data.get("verdict")
    whole = data.get("complete_suite")
    if not isinstance(whole, bool):
        whole = data.get("complete") is not False and not data.get("shard")
    return Headline(
        file=name,
        date=date if isinstance(date, str) and date else Path(name).stem,
        pass_rate=rate,
        passed=passed,
        total=total,
        verdict=verdict if isinstance(verdict, str) else "",
        variants=_variant_shares(data.get("variants")),
        complete_suite=whole,
    )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _share(value: Any) -> float | None:
    """A pass rate as a share; percentages (1 < x <= 100) are accepted too."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    rate = float(value)
    if rate != rate or rate < 0 or rate > 100:
        return None
    return rate / 100 if rate > 1 else rate


def _variant_shares(value: Any) -> dict[str, float]:
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, list):
        items = ((v.get("name"), v) for v in value if isinstance(v, dict))
    elif isinstance(value, dict):
        items = value.items()
    else:
        return {}
    rates: dict[str, float] = {}
    for name, entry in items:
        rate = _share(entry.get("pass_rate")) if isinstance(entry, dict) else None
        if isinstance(name, str) and rate is not None:
            rates[name] = rate
    return rates
