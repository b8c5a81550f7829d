"""Money (docs/budget.md): a case's limits per run (``max_cost``, ``max_tokens``),
graded as implicit checks, and the session's budget (``--eval-budget``), which no
agent run may be started beyond. Plain Python: the pytest side is
:mod:`pytest_evalcases.plugin.budget`.
"""

from __future__ import annotations

from pytest_evalcases.agents.base import AgentResult
from pytest_evalcases.cases.loading import LoadedCase
from pytest_evalcases.errors import RunError
from pytest_evalcases.results.record import CheckRecord

#: The ids (and types) of the implicit checks of a case's limits.
MAX_COST = "max_cost"
MAX_TOKENS = "max_tokens"
#: The error kind of a limit that the agent's output cannot show (docs/agents.md).
NO_USAGE = "no-usage"


def run_tokens(result: AgentResult) -> int | None:
    """The tokens a run used, as results files count them: input plus output (cache
    reads and writes apart); ``None`` when the agent reports neither."""
    usage = result.usage
    if usage.input_tokens is None and usage.output_tokens is None:
        return None
    return (usage.input_tokens or 0) + (usage.output_tokens or 0)


def limit_checks(case: LoadedCase, agent: str, result: AgentResult) -> list[CheckRecord]:
    """The implicit checks of ``case``'s ``max_cost`` and ``max_tokens`` on a run of
    ``agent``; a :class:`RunError` of kind ``no-usage`` when the agent does not report
    what a limit needs: a limit that cannot be checked never passes silently."""
    checks: list[CheckRecord] = []
    if case.max_cost is not None:
        cost = result.cost_usd
        if cost is None:
            raise RunError(
                f"max_cost: {agent} reports no cost of its runs, so the case's limit of "
                f"{usd(case.max_cost)} per run cannot be checked (docs/budget.md)",
                kind=NO_USAGE,
            )
        checks.append(
            CheckRecord(
                id=MAX_COST,
                type=MAX_COST,
                description=None,
                passed=cost <= case.max_cost,
                message=f"the run cost {usd(cost)}; the limit is {usd(case.max_cost)}",
            )
        )
    if case.max_tokens is not None:
        tokens = run_tokens(result)
        if tokens is None:
            raise RunError(
                f"max_tokens: {agent} reports no token counts of its runs, so the case's "
                f"limit of {case.max_tokens:,} tokens per run cannot be checked "
                "(docs/budget.md)",
                kind=NO_USAGE,
            )
        checks.append(
            CheckRecord(
                id=MAX_TOKENS,
                type=MAX_TOKENS,
                description=None,
                passed=tokens <= case.max_tokens,
                message=f"the run used {tokens:,} tokens (input plus output); the limit is "
                f"{case.max_tokens:,}",
            )
        )
    return checks


def usd(amount: float) -> str:
    """``amount`` as dollars: cents, or four decimals below a dollar cent."""
    return f"${amount:,.2f}" if amount >= 0.01 or amount == 0 else f"${amount:.4f}"
