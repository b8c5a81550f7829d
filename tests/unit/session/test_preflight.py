"""What the session's preflight reads from the collected items (the checks are
tests/unit/agents/test_preflight.py; the sessions, tests/plugin/test_preflight.py)."""

from __future__ import annotations

from typing import Any

from pytest_evalcases.run.workspace import Variant
from pytest_evalcases.session.preflight import needs, variant_of


class _Case:
    def __init__(self, case_id: str, bare: bool) -> None:
        self.id = case_id
        self.bare = bare


def test_variant_of_an_item_parameter() -> None:
    variants: dict[str, Any] = {"cx": Variant(name="cx"), "": Variant(name="")}
    assert variant_of("cx", variants) == "cx"
    assert variant_of("cx-r2", variants) == "cx"
    assert variant_of("r2", variants) == ""
    assert variant_of("other-r2", variants) == ""


def test_needs_counts_each_case_once() -> None:
    cases: list[Any] = [_Case("a", True), _Case("a", True), _Case("b", False)]
    found = needs(cases)
    assert (found.runs, found.bare) == (2, 1)
