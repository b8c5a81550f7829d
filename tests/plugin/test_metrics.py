"""A run's metrics as a user sees them (docs/results.md, "Metrics"): the ``eval gate``
section's lines of each variant and the results file's ``metrics``, from a real session
with a fake ``claude`` that reports tokens and cost."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.results import only_results
from tests.helpers.suite import SuiteBuilder

from .test_terminal_summary import gate_section

#: Five cases that spend 1,100 tokens a run (1,000 in, 100 out) and one that spends
#: 100,100: the mean of the six runs is 17,600, and 100,100 is 5.7 times it.
CASES = ["alpha", "beta", "gamma", "delta", "epsilon", "hog"]


@pytest.mark.parametrize("options", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_the_summary_and_the_results_file_carry_the_metrics_and_name_a_runaway(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    options: tuple[str, ...],
) -> None:
    fake_claude(tokens=1000, cost=0.5, fail=["beta"], tokens_by_case={"hog": 100_000})
    root = make_suite.steered(CASES, agent="claude")

    result = pytester.runpytest("-p", "no:cacheprovider", *options)

    result.assert_outcomes(passed=5, failed=1)
    lines = gate_section(result.stdout.str())
    assert lines[:2] == [
        "suite: 5/6 cases passed · Score: 5/6 (83%) · 0 errors · normal 5/6",
        "  tokens 105,600 (17,600 per run) · cost $3.0000 ($0.5000 per run)",
    ]
    assert re.fullmatch(
        r"  wall p50 [\d.]+ s · p90 [\d.]+ s · p99 [\d.]+ s \(5 passed\) · [\d.]+ s \(1 failed\)",
        lines[2],
    )
    assert lines[3:6] == [
        "  tokens 17,600 ± 40,417 per run · cost $0.5000 ± $0.0000 per run",
        "  runaway: hog 100,100 tokens (5.7× the mean of all runs)",
        "  failures by mode: unclassified 1",
    ]
    metrics = only_results(root)["metrics"]
    assert metrics["tokens_mean"] == 17600.0
    (variant,) = metrics["variants"]
    assert (variant["runs"], variant["graded"], variant["passed"]) == (6, 6, 5)
    assert variant["runaways"] == [
        {"id": "hog", "variant": "", "repetition": 0, "tokens": 100_100, "times_mean": 5.69}
    ]
    assert variant["tokens"]["runs"] == 6
    assert variant["wall_passed"]["runs"] == 5
    assert variant["wall_failed"]["runs"] == 1
    assert variant["failures_by_mode"] == {"unclassified": 1}
    assert variant["errors_by_kind"] == {}
