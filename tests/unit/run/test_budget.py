"""run/budget.py: a case's limits per run and the session's budget, without pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.agents.base import AgentResult, Usage
from pytest_evalcases.cases.loading import LoadedCase, load_case_file
from pytest_evalcases.errors import CaseFileError, RunError
from pytest_evalcases.kinds import Spent, total_spent
from pytest_evalcases.run import budget
from pytest_evalcases.run.checks import default_registry


def load(tmp_path: Path, **fields: str) -> LoadedCase:
    """A case with ``fields`` (YAML values) and one output check."""
    evals = tmp_path / "evals"
    evals.mkdir(exist_ok=True)
    lines = ["id: case", "defends: AGENTS.md", "prompt: x"]
    lines += [f"{name}: {value}" for name, value in fields.items()]
    lines.append("checks: [{type: output_matches, pattern: ok}]")
    (evals / "case.yaml").write_text("\n".join(lines) + "\n")
    (case,) = load_case_file(evals / "case.yaml", evals, default_registry())
    return case


def ran(
    cost: float | None = None, tokens_in: int | None = None, out: int | None = None
) -> AgentResult:
    return AgentResult(text="ok", cost_usd=cost, usage=Usage(tokens_in, out))


def test_limits_load_from_the_case_file(tmp_path: Path) -> None:
    case = load(tmp_path, max_cost="0.5", max_tokens="200000")
    assert (case.max_cost, case.max_tokens) == (0.5, 200000)
    assert (load(tmp_path).max_cost, load(tmp_path).max_tokens) == (None, None)


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_cost", "0"), ("max_cost", "-1"), ("max_cost", ".inf"), ("max_tokens", "0"),
     ("max_tokens", "2.5"), ("max_tokens", "lots")],
)  # fmt: skip
def test_a_limit_that_is_no_positive_number_is_an_error_naming_the_field(
    tmp_path: Path, field: str, value: str
) -> None:
    with pytest.raises(CaseFileError) as info:
        load(tmp_path, **{field: value})
    assert info.value.field == field


def test_a_case_without_limits_has_no_implicit_checks(tmp_path: Path) -> None:
    assert budget.limit_checks(load(tmp_path), "codex", ran()) == []


def test_a_run_within_its_limits_passes_both_checks(tmp_path: Path) -> None:
    case = load(tmp_path, max_cost="0.5", max_tokens="1000")
    checks = budget.limit_checks(case, "claude", ran(0.5, 900, 100))
    assert [(c.id, c.type, c.passed) for c in checks] == [
        ("max_cost", "max_cost", True),
        ("max_tokens", "max_tokens", True),
    ]


def test_a_run_over_its_limits_fails_with_the_figures(tmp_path: Path) -> None:
    case = load(tmp_path, max_cost="0.05", max_tokens="1000")
    cost, tokens = budget.limit_checks(case, "claude", ran(0.0712, 14_000, 412))
    assert not cost.passed
    assert cost.message == "the run cost $0.07; the limit is $0.05"
    assert not tokens.passed
    assert tokens.message == "the run used 14,412 tokens (input plus output); the limit is 1,000"


def test_tokens_count_what_the_agent_reports_of_input_and_output(tmp_path: Path) -> None:
    (check,) = budget.limit_checks(load(tmp_path, max_tokens="10"), "gemini", ran(None, None, 11))
    assert not check.passed
    assert ran(None, 5, None).spent.tokens == 5
    assert ran().spent.tokens is None


def test_a_run_without_a_verdict_fails_only_the_limits_it_is_known_to_exceed(
    tmp_path: Path,
) -> None:
    case = load(tmp_path, max_cost="0.5", max_tokens="1000")

    def stopped(spent: Spent | None) -> tuple[RunError, Spent | None]:
        return RunError("claude stopped at its turn limit", kind="max-turns"), spent

    (cost,) = budget.runaway_checks(case, *stopped(Spent(10, 10, 0.75)))
    assert (cost.id, cost.passed) == ("max_cost", False)
    assert cost.message == (
        "the run cost $0.75; the limit is $0.50 (and then it ended without a verdict: max-turns)"
    )
    both = budget.runaway_checks(case, *stopped(Spent(900, 200, 0.75)))
    assert [c.id for c in both] == ["max_cost", "max_tokens"]
    assert budget.runaway_checks(case, *stopped(Spent(900, 100, 0.5))) == []
    assert budget.runaway_checks(case, *stopped(Spent(None, None, None))) == []
    assert budget.runaway_checks(case, *stopped(None)) == []
    assert budget.runaway_checks(load(tmp_path), *stopped(Spent(10**6, 0, 99.0))) == []


def test_what_attempts_spent_adds_up_and_what_none_reported_stays_unknown() -> None:
    first, second = Spent(1000, 100, 0.5), Spent(2000, None, None)
    assert total_spent([first, None, second]) == Spent(3000, 100, 0.5)
    assert total_spent([first, first]) == Spent(2000, 200, 1.0)
    assert total_spent([second]) == second
    assert total_spent([Spent(), Spent()]) == Spent()
    assert total_spent([None, None]) is None
    assert total_spent([]) is None
    assert (second.tokens, Spent().tokens, Spent(None, 7).tokens) == (2000, None, 7)


def test_the_retries_of_a_counted_run_add_to_its_cost_not_to_the_runs() -> None:
    account = budget.Budget(limit=2.0)
    account.admit()
    account.finished(Spent(1000, 100, 0.5))
    account.spent_more(Spent(1000, 100, 0.5))
    account.spent_more(Spent(None, None, None))

    # $1.00 for one run: the next is expected to cost as much, $2.00 in all: it starts.
    account.admit()
    account.finished(Spent(1000, 100, 1.0))
    with pytest.raises(budget.BudgetSpent, match=r"after 2 runs: they reported \$2.00"):
        account.admit()


@pytest.mark.parametrize(
    ("field", "words"),
    [("max_cost", "codex reports no cost of its runs"),
     ("max_tokens", "codex reports no token counts of its runs")],
)  # fmt: skip
def test_a_limit_the_agent_cannot_show_is_an_error_naming_the_agent(
    tmp_path: Path, field: str, words: str
) -> None:
    with pytest.raises(RunError) as info:
        budget.limit_checks(load(tmp_path, **{field: "1"}), "codex", ran())
    assert info.value.kind == "no-usage"
    assert str(info.value).startswith(f"{field}: {words}")


def test_dollars_show_cents_or_fractions_of_a_cent() -> None:
    assert [budget.usd(x) for x in (5, 0.125, 0.0042, 0)] == ["$5.00", "$0.12", "$0.0042", "$0.00"]


def test_the_first_run_starts_and_the_mean_prices_the_next() -> None:
    account = budget.Budget(1.2, total=8)
    account.admit()
    account.finished(ran(0.5, 10, 1).spent)
    account.admit()
    account.finished(ran(0.5, 10, 1).spent)
    with pytest.raises(budget.BudgetSpent) as info:
        account.admit()
    assert (info.value.kind, info.value.attempted) == ("budget", False)
    assert str(info.value).startswith(
        "budget of $1.20 spent after 2 of 8 runs: they reported $1.00, and the next is "
        "expected to cost $0.50"
    )


def test_runs_in_flight_count_at_the_expected_cost() -> None:
    account = budget.Budget(2.0)
    account.admit()
    account.finished(ran(0.5).spent)
    account.admit()
    account.admit()
    account.admit()  # $0.50 + 3 x $0.50 <= $2.00: two in flight and this one
    with pytest.raises(budget.BudgetSpent):
        account.admit()  # $0.50 + 4 x $0.50 > $2.00


def test_runs_without_a_cost_are_not_counted() -> None:
    account = budget.Budget(0.01)
    for _ in range(3):
        account.admit()
        account.finished(ran(None, 1000, 10).spent)
    account.admit()
    account.finished(None)
    account.admit()


def test_a_worker_adds_the_others_spend_from_the_controllers_file(tmp_path: Path) -> None:
    spend_file = budget.SpendFile(tmp_path / "spend.json")
    mine = budget.Spend().add(0.5, 100)
    spend_file.write({"gw0": mine, "gw1": budget.Spend().add(0.5, 100).add(0.5, 100)})
    assert spend_file.others("gw0") == budget.Spend(2, 2, 1.0, 0, 0, 0)
    account = budget.Budget(2.2)
    account.others = lambda: spend_file.others("gw0")
    account.admit()
    account.finished(ran(0.5).spent)  # $1.00 + $0.50 own + $0.50 expected <= $2.20
    account.admit()
    account.finished(ran(0.5).spent)
    with pytest.raises(budget.BudgetSpent, match=r"after 4 runs: they reported \$2\.00"):
        account.admit()


def test_a_spend_file_gone_or_garbled_counts_nothing(tmp_path: Path) -> None:
    spend_file = budget.SpendFile(tmp_path / "spend.json")
    assert spend_file.others("gw0") == budget.Spend()
    spend_file.path.write_text("{not json")
    assert spend_file.others("gw0") == budget.Spend()
    made = budget.SpendFile.create()
    assert made.others("gw0") == budget.Spend()
    made.remove()
    assert not made.path.exists()


def test_a_price_per_million_tokens_counts_the_runs_without_a_cost() -> None:
    account = budget.Budget(0.01, token_price=2.0)
    account.admit()
    account.finished(ran(None, 4000, 1000).spent)  # 5,000 tokens: $0.01
    with pytest.raises(budget.BudgetSpent, match=r"they reported \$0\.01"):
        account.admit()
    spend = budget.Spend().add(None, 5000).add(0.5, 10).add(None, None)
    assert spend.priced_at(2.0) == budget.Spend(3, 2, 0.51, 0, 0, 1)
    assert spend.priced_at(None) == spend
