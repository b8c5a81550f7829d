"""Wilson score intervals and the exact McNemar test against known values."""

from __future__ import annotations

import pytest

from pytest_evalcases.results.stats import mcnemar_exact, wilson


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (7, 10, 0.397, 0.892),
        (2, 3, 0.208, 0.939),
        (0, 5, 0.0, 0.434),
        (10, 10, 0.722, 1.0),
        (50, 100, 0.404, 0.596),
    ],
)
def test_wilson_known_values(successes: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson(successes, n)
    assert lo == pytest.approx(low, abs=5e-4)
    assert hi == pytest.approx(high, abs=5e-4)


def test_wilson_bounds_are_exact_at_the_extremes() -> None:
    assert wilson(10, 10)[1] == 1.0
    assert wilson(0, 10)[0] == 0.0
    assert wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 5, 0.0625),
        (5, 0, 0.0625),
        (1, 9, 0.021484375),
        (3, 3, 1.0),
        (5, 1, 0.21875),
        (0, 0, 1.0),
        (0, 1, 1.0),
    ],
)
def test_mcnemar_exact_known_values(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)
