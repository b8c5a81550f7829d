"""The ``eval gate`` section as a terminal shows it: each variant's tokens and cost when
its agent reports them, and the verdict line in pytest's own outcome colours
(docs/results.md, "Tokens and cost in the summary"; docs/reference.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.suite import SuiteBuilder


def gate_section(out: str) -> list[str]:
    """The lines of the ``eval gate`` section, up to the next ``===`` line."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "= eval gate =" in line) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("="))
    return [line for line in lines[start:end] if line]


def test_tokens_and_cost_of_a_variant_are_in_the_summary(
    make_suite: SuiteBuilder, fake_claude: Callable[..., Path], pytester: pytest.Pytester
) -> None:
    fake_claude(tokens=1234, cost=0.5)
    make_suite.steered(["alpha", "beta"], agent="claude")

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save")

    result.assert_outcomes(passed=2)
    assert gate_section(result.stdout.str()) == [
        "suite: 2/2 cases passed · Score: 2/2 (100%) · 0 errors · normal 2/2",
        # 1,234 in + 100 out per run
        "  tokens 2,668 (1,334 per run) · cost $1.0000 ($0.5000 per run)",
        "eval gate: PASS",
    ]


def test_no_usage_line_for_an_agent_that_reports_none(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite.steered(["alpha"])

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save")

    result.assert_outcomes(passed=1)
    section = gate_section(result.stdout.str())
    assert section[0] == "suite: 1/1 cases passed · Score: 1/1 (100%) · 0 errors · normal 1/1"
    assert not any("tokens" in line or "cost" in line for line in section)
