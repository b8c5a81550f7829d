"""What the session's preflight reads from the collected items (the checks are
tests/unit/agents/test_preflight.py; the sessions, tests/plugin/test_preflight.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.cases.discovery import Discovery
from pytest_evalcases.run.workspace import Variant
from pytest_evalcases.session.preflight import asked_for_cases, needs, variant_of


class _Case:
    def __init__(self, case_id: str, bare: bool, script: tuple[Any, ...] | None = None) -> None:
        self.id = case_id
        self.bare = bare
        self.script = script


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


def test_needs_counts_scripted_cases_apart_and_never_as_bare() -> None:
    # A scripted case needs no credential: bare or not, it asks for no key.
    cases: list[Any] = [_Case("a", True, ("turn",)), _Case("b", True), _Case("c", False)]
    found = needs(cases)
    assert (found.runs, found.bare, found.scripted) == (3, 1, 1)


def test_asked_for_cases_by_a_case_path_an_option_or_a_selection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "a.yaml").write_text("id: a\n")
    (tmp_path / "tests").mkdir()
    discovery = Discovery(tmp_path, ())

    assert asked_for_cases(["evals/a.yaml"], ["evals/a.yaml::a"], tmp_path, discovery)
    assert asked_for_cases(["evals"], ["evals"], tmp_path, discovery)
    assert asked_for_cases(["-k", "x"], [], tmp_path, discovery)
    assert not asked_for_cases(["tests"], ["tests"], tmp_path, discovery)
    # The ini's testpaths: no path given on the command line.
    assert not asked_for_cases([], [], tmp_path, discovery)
    monkeypatch.setenv("PYTEST_ADDOPTS", "--eval-agent claude")
    assert asked_for_cases([], [], tmp_path, discovery)
