"""Money in real sessions with the fake CLIs: a case's ``max_cost`` and ``max_tokens``
(implicit checks), and ``--eval-budget`` (docs/budget.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

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
            "  FAILED max_cost: the run cost $0.50; the limit is $0.25",
            "  FAILED max_tokens: the run used 1,334 tokens (input plus output);"
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


def test_a_runaway_stopped_over_its_limits_fails_them_and_is_not_retried(
    make_suite: SuiteBuilder, fake_claude: Callable[..., Path], pytester: pytest.Pytester
) -> None:
    """Stopped at its turn limit after spending more than the case allows: a regression
    (failed limit checks with the figures), not an error; within them, still an error."""
    fake_claude(tokens=1000, cost=0.5, max_turns=["runaway", "roomy"])
    root = make_suite.steered([], agent="claude")
    (root / "evals" / "runaway.yaml").write_text(
        limited("runaway", max_cost="0.25", max_tokens="1000")
    )
    (root / "evals" / "roomy.yaml").write_text(limited("roomy", max_cost="1"))

    result = run(pytester, "--eval-retry-errors", "2")

    result.assert_outcomes(failed=1, errors=1)
    after = " (and then it ended without a verdict: max-turns)"
    result.stdout.fnmatch_lines(
        [f"  FAILED max_cost: the run cost $0.50; the limit is $0.25{after}",
         "  FAILED max_tokens: the run used 1,100 tokens (input plus output);"
         f" the limit is 1,000{after}"]
    )  # fmt: skip
    cases = by_case(only_results(root))
    runaway, roomy = cases["runaway"], cases["roomy"]
    assert (runaway["outcome"], runaway["attempts"], runaway["cost_usd"]) == ("failed", 1, 0.5)
    assert [c["id"] for c in runaway["checks"]] == ["max_cost", "max_tokens"]  # type: ignore[index]
    assert (roomy["outcome"], roomy["error_kind"], roomy["attempts"]) == ("error", "max-turns", 3)
    assert roomy["cost_usd"] == 1.5


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


#: Eight cases the fake claude answers, each run costing $0.50 and 1,100 tokens.
EIGHT = [f"case-{n}" for n in range(1, 9)]


def refused(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in doc["cases"] if c["error_kind"] == "budget"]


def test_the_budget_stops_starting_runs_once_the_next_would_exceed_it(
    make_suite: SuiteBuilder, fake_claude: Callable[..., Path], pytester: pytest.Pytester
) -> None:
    fake_claude(tokens=1000, cost=0.5)
    root = make_suite.steered(EIGHT, agent="claude")

    result = run(pytester, "--eval-budget", "1.20")

    # $0.00 + 0.50 expected: starts; $0.50 + 0.50: starts; $1.00 + 0.50 > $1.20: not.
    result.assert_outcomes(passed=2, errors=6)
    result.stdout.fnmatch_lines(
        [
            "case case-3 (normal) defends AGENTS.md: no verdict (budget)",
            "budget of $1.20 spent after 2 of 8 runs: they reported $1.00, and the next is "
            "expected to cost $0.50 (--eval-budget, docs/budget.md)",
            "eval gate: INCONCLUSIVE*",
            "budget: $1.00 of $1.20 spent by 2 runs; 6 runs not started",
        ]
    )
    doc = only_results(root)
    assert len(refused(doc)) == 6
    assert {c["attempts"] for c in refused(doc)} == {0}
    assert doc["verdict"] == "INCONCLUSIVE"
    assert doc["complete"] is False
    assert doc["incomplete_reasons"] == [
        "budget of $1.20 spent after 2 of 8 runs: the runs after it did not start"
    ]


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_runs_without_a_verdict_count_what_they_were_paid(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    args: tuple[str, ...],
) -> None:
    """A run stopped at its turn limit is an error, not a verdict, and the model was
    paid all the same: the budget counts it, and so do the results file and summary."""
    fake_claude(tokens=1000, cost=0.5, max_turns=EIGHT)
    root = make_suite.steered(EIGHT, agent="claude")

    result = run(pytester, "--eval-budget", "1.20", *args)

    outcomes = result.parseoutcomes()
    assert outcomes["errors"] == 8
    doc = only_results(root)
    stopped = [c for c in doc["cases"] if c["error_kind"] == "max-turns"]
    assert 2 <= len(stopped) <= (4 if args else 2)
    assert len(refused(doc)) == 8 - len(stopped)
    assert {(c["cost_usd"], c["tokens_in"], c["tokens_out"]) for c in stopped} == {(0.5, 1000, 100)}
    result.stdout.fnmatch_lines(
        [f"budget: ${0.5 * len(stopped):.2f} of $1.20 spent by {len(stopped)} runs; "
         f"{8 - len(stopped)} runs not started"]
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "most"),
    [
        # Run 1's three attempts cost $1.50: $1.50 + $1.50 expected > $2.00.
        ((), 1),
        # Runs ahead count their first attempt as it ends, their retries after them:
        # runs may start before the retries of the first ones are counted.
        (("--eval-concurrency", "2"), 4),
    ],
    ids=["serial", "concurrency"],
)
def test_every_attempt_of_a_retried_run_counts(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    args: tuple[str, ...],
    most: int,
) -> None:
    fake_claude(tokens=1000, cost=0.5, max_turns=EIGHT)
    root = make_suite.steered(EIGHT, agent="claude")

    result = run(pytester, "--eval-budget", "2", "--eval-retry-errors", "2", *args)

    doc = only_results(root)
    started = [c for c in doc["cases"] if c["error_kind"] == "max-turns"]
    assert 1 <= len(started) <= most
    assert len(refused(doc)) == 8 - len(started)
    assert {(c["attempts"], c["cost_usd"], c["tokens_in"], c["tokens_out"]) for c in started} == {
        (3, 1.5, 3000, 300)
    }
    result.stdout.fnmatch_lines(
        [f"budget: ${1.5 * len(started):.2f} of $2.00 spent by {len(started)} run*; "
         f"{8 - len(started)} runs not started"]
    )  # fmt: skip


def test_a_run_its_checks_cannot_grade_keeps_what_it_spent(
    make_suite: SuiteBuilder, fake_claude: Callable[..., Path], pytester: pytest.Pytester
) -> None:
    fake_claude(tokens=1000, cost=0.5)
    root = make_suite.steered(["plain"], agent="claude")
    (root / "evals" / "tools.yaml").write_text(
        case_yaml("tools") + "  - {type: tool_called, tool: Bash}\n"
    )

    result = run(pytester)

    result.assert_outcomes(passed=1, errors=1)
    tools = by_case(only_results(root))["tools"]
    assert tools["error_kind"] == "no-transcript"
    assert (tools["cost_usd"], tools["tokens_in"], tools["tokens_out"]) == (0.5, 1000, 100)
    result.stdout.fnmatch_lines(["  tokens 2,200 (1,100 per run) · cost $1.0000 ($0.5000 per run)"])


@pytest.mark.parametrize(
    ("args", "most"),
    [
        # Each worker knows its own runs at once and the other's from the controller's
        # file: the first run of each starts without an estimate, the second of each
        # at most ($0.50 + $0.50 expected), never a third ($1.00 + $0.50 > $1.20).
        (("-n", "2"), 4),
        # Three runs start before any has said what it costs; the scheduler starts the
        # next as one ends, which has then counted its cost.
        (("--eval-concurrency", "3"), 3),
    ],
    ids=["xdist", "concurrency"],
)
def test_workers_and_runs_ahead_ask_the_budget_before_starting(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    args: tuple[str, ...],
    most: int,
) -> None:
    fake_claude(tokens=1000, cost=0.5)
    root = make_suite.steered(EIGHT, agent="claude")

    result = run(pytester, "--eval-budget", "1.20", *args)

    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("errors", 0) == 8
    assert 2 <= outcomes.get("passed", 0) <= most
    doc = only_results(root)
    assert len(refused(doc)) == 8 - outcomes["passed"]
    assert {c["attempts"] for c in refused(doc)} == {0}
    assert all(c["error"].startswith("budget of $1.20 spent after ") for c in refused(doc))
    assert doc["verdict"] == "INCONCLUSIVE"
    (reason,) = doc["incomplete_reasons"]
    assert reason.startswith("budget of $1.20 spent after ")
    spent = sum(c["cost_usd"] or 0 for c in doc["cases"])
    result.stdout.fnmatch_lines(
        [f"budget: ${spent:.2f} of $1.20 spent by {outcomes['passed']} runs; "
         f"{8 - outcomes['passed']} runs not started"]
    )  # fmt: skip


def test_runs_that_report_no_cost_are_not_counted_and_the_summary_says_so_once(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite.steered(["one", "two", "three"])

    result = run(pytester, "--eval-budget", "0.01")

    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "budget: $0.00 of $0.01 spent by 0 runs",
            "budget: 3 runs of command reported no cost: the budget does not count them "
            "(docs/budget.md)",
        ]
    )
    assert result.stdout.str().count("reported no cost") == 1


@pytest.mark.parametrize(
    ("args", "ini", "said"),
    [
        (("--eval-budget", "-1"), "", "*--eval-budget: expected an amount of USD > 0, got '-1'*"),
        ((), "eval_budget = lots\n", "*ini option eval_budget expects an amount of USD > 0*"),
    ],
)  # fmt: skip
def test_a_budget_that_is_no_amount_is_a_usage_error(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, args: tuple[str, ...], ini: str, said: str
) -> None:
    make_suite.steered(["one"], ini=ini)

    result = run(pytester, *args)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([said])


def test_the_ini_budget_applies_and_dollar_signs_are_allowed(
    make_suite: SuiteBuilder, fake_claude: Callable[..., Path], pytester: pytest.Pytester
) -> None:
    fake_claude(tokens=1000, cost=0.5)
    make_suite.steered(["one", "two"], agent="claude", ini="eval_budget = $0.75\n")

    result = run(pytester)

    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["budget: $0.50 of $0.75 spent by 1 run; 1 run not started"])


@pytest.mark.xdist
def test_under_xdist_each_worker_counts_what_the_others_reported(
    make_suite: SuiteBuilder, fake_claude: Callable[..., Path], pytester: pytest.Pytester
) -> None:
    fake_claude(tokens=1000, cost=0.5)
    root = make_suite.steered([f"case-{n}" for n in range(1, 13)], agent="claude")

    result = run(pytester, "--eval-budget", "2.20", "-n", "2")

    # Alone, each worker would start four runs ($1.50 + $0.50 <= $2.20): eight in all.
    # Told the other's spend by the controller, they stop after about five (the other's
    # run in flight is not known yet).
    passed = result.parseoutcomes().get("passed", 0)
    assert 4 <= passed <= 6
    assert len(refused(only_results(root))) == 12 - passed


def test_a_price_per_million_tokens_counts_runs_that_report_tokens_only(
    make_suite: SuiteBuilder, fake_claude: Callable[..., Path], pytester: pytest.Pytester
) -> None:
    # Each run reports 1,100 tokens and no cost: $0.11 at $100 per million tokens.
    fake_claude(tokens=1000, cost=None)
    ini = "eval_budget = 0.25\neval_budget_token_price = 100\n"
    make_suite.steered(["one", "two", "three"], agent="claude", ini=ini)

    result = run(pytester)

    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "budget: $0.22 of $0.25 spent by 2 runs (2 runs priced by their 2,200 tokens at "
            "$100.00 per million); 1 run not started"
        ]
    )
    assert "reported no cost" not in result.stdout.str()


def test_a_token_price_that_is_no_amount_is_a_usage_error(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite.steered(["one"], ini="eval_budget = 1\neval_budget_token_price = free\n")

    result = run(pytester)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini option eval_budget_token_price expects USD per million tokens > 0, got 'free'*"]
    )
