"""tests/agent_samples/ holds the shared samples, copied as they are, and the samples this
project recorded itself (listed in its RECORDED.md); every one is used."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[2]
SAMPLES = TESTS / "agent_samples"
#: Beside a checkout, the product's shared samples (CI lays them out there too).
SHARED = TESTS.parent.parent / "shared" / "agent-samples"


@pytest.mark.skipif(not SHARED.is_dir(), reason="no ../shared/agent-samples beside the checkout")
def test_copies_match_the_shared_samples() -> None:
    shared = {p.name: p.read_bytes() for p in SHARED.iterdir() if p.is_file()}
    ours = {p.name: p.read_bytes() for p in SAMPLES.iterdir() if p.is_file()}
    assert {name: ours.get(name) for name in shared} == shared
    recorded = set(ours) - set(shared) - {"RECORDED.md"}
    assert recorded == _recorded()


def _recorded() -> set[str]:
    """The files RECORDED.md lists (``a.jsonl / .stderr`` names two)."""
    names: set[str] = set()
    for line in (SAMPLES / "RECORDED.md").read_text().splitlines():
        cell = line.split("|")[1].strip() if line.startswith("| ") else ""
        first, _, other = cell.partition(" / ")
        if "." in first and not first.startswith("-"):
            names.add(first)
            if other:
                names.add(first.rsplit(".", 1)[0] + other)
    return names


def test_every_sample_is_used_by_an_agent_test() -> None:
    # The saved sessions are read by `evalcases import`, whose readers test_import.py tests.
    users = [*TESTS.rglob("test_agent_*.py"), *TESTS.rglob("test_import.py")]
    tests = "".join(p.read_text() for p in users)
    unused = [
        p.name
        for p in SAMPLES.iterdir()
        if p.suffix in (".json", ".jsonl") and not re.search(re.escape(p.name), tests)
    ]
    assert unused == []
