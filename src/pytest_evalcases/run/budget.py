"""Money (docs/budget.md): a case's limits per run (``max_cost``, ``max_tokens``),
graded as implicit checks, and the session's budget (``--eval-budget``), which no
agent run may be started beyond, and what the summary says of it. Plain Python: the
pytest side is :mod:`pytest_evalcases.plugin.budget`.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_evalcases.errors import RunError
from pytest_evalcases.kinds import ErrorKind, Spent
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.text import plural

if TYPE_CHECKING:
    from pytest_evalcases.agents.base import AgentResult
    from pytest_evalcases.cases.loading import LoadedCase

#: The ids (and types) of the implicit checks of a case's limits.
MAX_COST = "max_cost"
MAX_TOKENS = "max_tokens"
#: The error kind of a limit that the agent's output cannot show (docs/agents.md).
NO_USAGE: ErrorKind = "no-usage"
#: The error kind of a run that ``--eval-budget`` did not start (docs/agents.md).
BUDGET: ErrorKind = "budget"


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
        checks.append(_cost_check(case.max_cost, cost))
    if case.max_tokens is not None:
        tokens = result.spent.tokens
        if tokens is None:
            raise RunError(
                f"max_tokens: {agent} reports no token counts of its runs, so the case's "
                f"limit of {case.max_tokens:,} tokens per run cannot be checked "
                "(docs/budget.md)",
                kind=NO_USAGE,
            )
        checks.append(_tokens_check(case.max_tokens, tokens))
    return checks


def runaway_checks(case: LoadedCase, error: RunError, spent: Spent | None) -> list[CheckRecord]:
    """The limits of ``case`` that a run ending in ``error`` after spending ``spent`` is
    known to have gone over, as failed checks: an agent stopped at its turn limit after
    spending more than the case allows is a regression, not an error (docs/budget.md).
    Empty when it stayed within them, or when the agent did not say what it spent."""
    if spent is None:
        return []
    after = f" (and then it ended without a verdict: {error.kind})"
    failed = []
    if case.max_cost is not None and spent.cost_usd is not None:
        failed.append(_cost_check(case.max_cost, spent.cost_usd, after))
    tokens = spent.tokens
    if case.max_tokens is not None and tokens is not None:
        failed.append(_tokens_check(case.max_tokens, tokens, after))
    return [check for check in failed if not check.passed]


def _cost_check(limit: float, cost: float, after: str = "") -> CheckRecord:
    said = f"the run cost {usd(cost)}; the limit is {usd(limit)}{after}"
    return _limit_check(MAX_COST, cost <= limit, said)


def _tokens_check(limit: int, tokens: int, after: str = "") -> CheckRecord:
    said = f"the run used {tokens:,} tokens (input plus output); the limit is {limit:,}{after}"
    return _limit_check(MAX_TOKENS, tokens <= limit, said)


def _limit_check(limit: str, passed: bool, message: str) -> CheckRecord:
    """The implicit check of a case's limit ``max_cost`` or ``max_tokens``."""
    return CheckRecord(id=limit, type=limit, description=None, passed=passed, message=message)


def usd(amount: float) -> str:
    """``amount`` as dollars: cents, or four decimals below a dollar cent."""
    return f"${amount:,.2f}" if amount >= 0.01 or amount == 0 else f"${amount:.4f}"


class BudgetSpent(RunError):
    """A run that ``--eval-budget`` did not start: it made no attempt."""

    kind = BUDGET
    attempted = False


def not_started(kind: str | None, attempts: int) -> bool:
    """Whether a run's record is one the budget did not start (kind ``budget``, no
    attempt), not Claude's own ``error_max_budget_usd``."""
    return kind == BUDGET and attempts == 0


@dataclass(frozen=True)
class Spend:
    """What the runs reported so far: the account the controller keeps."""

    #: Runs that ended (a verdict or an error), those the budget refused apart.
    runs: int = 0
    #: Runs that reported a cost, and its sum in USD.
    priced: int = 0
    usd: float = 0.0
    #: Runs that reported tokens but no cost, and their tokens (input plus output).
    unpriced: int = 0
    unpriced_tokens: int = 0
    #: Runs that reported neither.
    unreported: int = 0

    def add(self, cost: float | None, tokens: int | None) -> Spend:
        """The account with one more run that reported ``cost`` and ``tokens``."""
        if cost is not None:
            return Spend(
                self.runs + 1,
                self.priced + 1,
                self.usd + cost,
                self.unpriced,
                self.unpriced_tokens,
                self.unreported,
            )
        if tokens is not None:
            return Spend(
                self.runs + 1,
                self.priced,
                self.usd,
                self.unpriced + 1,
                self.unpriced_tokens + tokens,
                self.unreported,
            )
        return Spend(
            self.runs + 1,
            self.priced,
            self.usd,
            self.unpriced,
            self.unpriced_tokens,
            self.unreported + 1,
        )

    def more(self, cost: float | None, tokens: int | None) -> Spend:
        """The account with ``cost`` and ``tokens`` added to runs it counted already
        (their retries): the cost, else the tokens; no run more."""
        if cost is not None:
            return replace(self, usd=self.usd + cost)
        if tokens is not None:
            return replace(self, unpriced_tokens=self.unpriced_tokens + tokens)
        return self

    def plus(self, other: Spend, sign: int = 1) -> Spend:
        """The two accounts together (``sign`` -1: ``other`` taken out)."""
        return Spend(
            self.runs + sign * other.runs,
            self.priced + sign * other.priced,
            self.usd + sign * other.usd,
            self.unpriced + sign * other.unpriced,
            self.unpriced_tokens + sign * other.unpriced_tokens,
            self.unreported + sign * other.unreported,
        )

    @property
    def mean(self) -> float:
        """The expected cost of the next run: the mean of the priced runs, 0 before the
        first (the first run always starts)."""
        return self.usd / self.priced if self.priced else 0.0

    def priced_at(self, token_price: float | None) -> Spend:
        """The account with the runs that reported tokens but no cost priced at
        ``token_price`` USD per million tokens (``eval_budget_token_price``); as it is
        without a price."""
        if token_price is None or not self.unpriced:
            return self
        return Spend(
            self.runs,
            self.priced + self.unpriced,
            self.usd + self.unpriced_tokens * token_price / 1e6,
            0,
            0,
            self.unreported,
        )

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Spend:
        return cls(
            runs=int(data["runs"]),
            priced=int(data["priced"]),
            usd=float(data["usd"]),
            unpriced=int(data["unpriced"]),
            unpriced_tokens=int(data["unpriced_tokens"]),
            unreported=int(data["unreported"]),
        )


class Budget:
    """``--eval-budget``: admits a run while the spend so far plus the expected cost of
    this run and of the runs in flight stays within ``limit`` (docs/budget.md).
    Thread-safe: the scheduler's threads ask too.

    The runs of this process count as they end (:meth:`finished`); under xdist,
    ``others`` gives what the other workers' runs reported, as the controller last
    wrote it (:class:`SpendFile`)."""

    def __init__(self, limit: float, total: int = 0, token_price: float | None = None) -> None:
        self.limit = limit
        #: USD per million tokens for runs that report tokens but no cost; ``None``:
        #: such runs are not counted.
        self.token_price = token_price
        #: How many runs the session has (for the message); 0: not known.
        self.total = total
        self.others: Callable[[], Spend] = Spend
        self._lock = threading.Lock()
        self._own = Spend()
        self._admitted = 0

    def admit(self) -> None:
        """Count a run about to start; :class:`BudgetSpent` when the budget does not
        allow it."""
        with self._lock:
            spend = self.others().plus(self._own).priced_at(self.token_price)
            in_flight = self._admitted - self._own.runs
            expected = spend.mean * (in_flight + 1)
            if spend.priced and spend.usd + expected > self.limit:
                of = f" of {self.total}" if self.total else ""
                raise BudgetSpent(
                    f"budget of {usd(self.limit)} spent after {spend.runs}{of} runs: they "
                    f"reported {usd(spend.usd)}, and the next is expected to cost "
                    f"{usd(spend.mean)} (--eval-budget, docs/budget.md)"
                )
            self._admitted += 1

    def finished(self, spent: Spent | None) -> None:
        """Count the end of a run :meth:`admit` let start: what it reported spending,
        an errored run's too (``None``: it reported nothing)."""
        spent = spent or Spent()
        with self._lock:
            self._own = self._own.add(spent.cost_usd, spent.tokens)

    def spent_more(self, spent: Spent) -> None:
        """Add what the retries of a run already counted reported (a run started ahead
        counts its first attempt as it ends)."""
        with self._lock:
            self._own = self._own.more(spent.cost_usd, spent.tokens)


class SpendFile:
    """The account on disk, under xdist: the controller rewrites it after each report
    (atomically), each worker reads it before starting a run."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls) -> SpendFile:
        fd, name = tempfile.mkstemp(prefix="evalcases-budget-", suffix=".json")
        os.close(fd)
        made = cls(Path(name))
        made.write({})
        return made

    def write(self, workers: dict[str, Spend]) -> None:
        """Each worker's account (by its xdist id)."""
        data = {worker: spend.to_dict() for worker, spend in workers.items()}
        partial = self.path.with_name(self.path.name + ".part")
        partial.write_text(json.dumps(data), "utf-8")
        os.replace(partial, self.path)

    def others(self, worker: str) -> Spend:
        """What the workers but ``worker`` reported, as the controller last wrote it;
        nothing when the file is gone or unreadable (the session is ending)."""
        try:
            data = json.loads(self.path.read_text("utf-8"))
            found = [Spend.from_dict(v) for k, v in data.items() if k != worker]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return Spend()
        total = Spend()
        for spend in found:
            total = total.plus(spend)
        return total

    def remove(self) -> None:
        for path in (self.path, self.path.with_name(self.path.name + ".part")):
            path.unlink(missing_ok=True)


def summary_lines(
    limit: float,
    spend: Spend,
    refused: int,
    unpriced_agents: set[str],
    token_price: float | None = None,
) -> list[str]:
    """What the summary says of the budget: what it counted, the runs it did not start,
    and once, the runs it could not count. ``token_price``: runs that reported tokens
    only were priced at it (USD per million tokens)."""
    counted = spend.priced_at(token_price)
    said = [f"budget: {usd(counted.usd)} of {usd(limit)} spent by {plural(counted.priced, 'run')}"]
    if counted.priced > spend.priced:
        said[0] += (
            f" ({plural(counted.priced - spend.priced, 'run')} priced by their "
            f"{spend.unpriced_tokens:,} tokens at {usd(token_price or 0)} per million)"
        )
    if refused:
        said[0] += f"; {plural(refused, 'run')} not started"
    spend = counted
    uncounted = spend.unpriced + spend.unreported
    if uncounted:
        agents = ", ".join(sorted(unpriced_agents))
        tokens = (
            f" (their {spend.unpriced_tokens:,} tokens are not priced)" if spend.unpriced else ""
        )
        said.append(
            f"budget: {plural(uncounted, 'run')} of {agents} reported no cost{tokens}: the budget "
            "does not count them (docs/budget.md)"
        )
    return said
