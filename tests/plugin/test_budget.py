"""Money in real sessions with the fake CLIs: a case's ``max_cost`` and ``max_tokens``
(implicit checks), and ``--eval-budget`` (docs/budget.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.results import case_yaml, only_results
from tests.helpers.suite import SuiteBuilder


def limited(case_id: str, **limits: str) -> str:
    return case_yaml(case_id) + "".join(f"{k}: {v}\n" for k, v in limits.items())


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def by_case(doc: dict[str, object]) -> dict[str, dict[str, object]]:
    return {c["id"]: c for c in doc["cases"]}  # type: ignore[index, attr-defined]


def test_a_run_over_its_limits_fails_with_the_figures_in_report_and_results(
    make_suite: SuiteBuilder, fake_claude: Callable[..., Path], pytester: pytest.Pytester
) -> None:
    fake_claude(tokens=1234, cost=0.5)
    root = make_suite.steered(["within"], agent="claude")
    for case_id, limits in {
        "dear": {"max_cost": "0.25"},
        "long": {"max_tokens": "1000"},
        "roomy": {"max_cost": "0.5", "max_tokens": "1334"},
    }.items():
        (root / "evals" / f"{case_id}.yaml").write_text(limited(case_id, **limits))

    result = run(pytester)

    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "  FAILED max_cost [[]max_cost[]]: the run cost $0.50; the limit is $0.25",
            "  FAILED max_tokens [[]max_tokens[]]: the run used 1,334 tokens (input plus output);"
            " the limit is 1,000",
        ]
    )
    cases = by_case(only_results(root))
    assert [(c["id"], c["passed"], c["message"]) for c in cases["dear"]["checks"]] == [  # type: ignore[index]
        ("output_matches-0", True, "pattern '^ok' found: 'ok'"),
        ("max_cost", False, "the run cost $0.50; the limit is $0.25"),
    ]
    assert [c["id"] for c in cases["roomy"]["checks"]] == [  # type: ignore[index]
        "output_matches-0", "max_cost", "max_tokens",
    ]  # fmt: skip
    assert cases["roomy"]["outcome"] == cases["within"]["outcome"] == "passed"


def test_a_limit_the_agent_cannot_show_is_an_error_naming_the_agent(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(["plain"])
    (root / "evals" / "priced.yaml").write_text(limited("priced", max_cost="1"))

    result = run(pytester, "--eval-retry-errors", "2")

    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["case priced (normal) defends AGENTS.md: no verdict (no-usage)",
         "max_cost: command reports no cost of its runs, so the case's limit of $1.00 per run"
         " cannot be checked (docs/budget.md)*"]
    )  # fmt: skip
    priced = by_case(only_results(root))["priced"]
    assert (priced["outcome"], priced["error_kind"], priced["attempts"]) == ("error", "no-usage", 1)
