"""authoring/terminal.py: what --eval-lint, --eval-red-first and --eval-changed print (the
sessions: tests/plugin/test_lint.py, test_red_first.py, test_changed.py)."""

from __future__ import annotations

from pytest_evalcases.authoring.terminal import changed_selects, lint_total, red_first_lines
from tests.helpers.results import rec


def test_lint_total_counts_errors_and_warnings() -> None:
    lines = ["a.yaml:1: ERROR x", "a.yaml:2: WARNING y", "b.yaml:1: WARNING z"]
    assert lint_total(lines) == "eval lint: 1 error, 2 warnings"


def test_red_first_names_the_cases_that_pass_on_first_write() -> None:
    records = [rec("a", "passed"), rec("b", "failed"), rec("c", "failed")]
    assert red_first_lines(records) == [
        "1 case red, as they should be; 2 pass on first write "
        "(they test nothing until the case is made stricter)",
        "  passes on first write: b",
        "  passes on first write: c",
    ]
    assert red_first_lines([]) == []


def test_changed_selects_says_how_many_of_the_cases() -> None:
    assert changed_selects(1, 1).startswith("evalcases: --eval-changed selects 1 of 1 case ")
