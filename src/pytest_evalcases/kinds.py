"""The words of the domain, each with one meaning: severities, outcomes and verdicts.

Typed as ``Literal`` so that the type checker catches a misspelt ``"pased"``; every
layer imports them from here, and this module imports nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeVar, get_args

#: A case's ``severity``, and the pytest marker of its items.
Severity = Literal["critical", "normal", "advisory"]
#: Highest first.
SEVERITIES: tuple[Severity, ...] = ("critical", "normal", "advisory")

#: How one run of one case ended, as pytest reports it: an advisory case that failed
#: is ``xfailed``; a run that reached no verdict is ``error``.
Outcome = Literal["passed", "failed", "error", "xfailed", "skipped"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "error", "xfailed", "skipped")
#: The outcomes of a run that reached a verdict.
GRADED: frozenset[Outcome] = frozenset({"passed", "failed", "xfailed"})

#: A case's verdict over its repetitions in one variant (docs/results.md).
CaseOutcome = Literal["passed", "failed", "error", "skipped"]

#: What a record stands for: a case file, a task directory, or a case file that does
#: not load (``file``).
RecordKind = Literal["case", "task", "file"]

#: The model APIs the agent CLIs speak over HTTP, which the recording proxy reads and
#: the scripted model writes: Anthropic Messages, OpenAI Responses, the Gemini API.
ModelDialect = Literal["anthropic", "openai", "gemini"]

#: How a run went through the replaying proxy (docs/replay.md): every request answered
#: from the recording, some (then live), none (live), or a replay that diverged.
ReplayHow = Literal["full", "partial", "live", "diverged"]
REPLAY_HOWS: tuple[ReplayHow, ...] = ("full", "partial", "live", "diverged")


@dataclass(frozen=True)
class Replayed:
    """How one run went through the replaying proxy, and what replaying saved."""

    how: ReplayHow
    #: Tokens of the responses answered from the recording.
    saved_tokens: int = 0
    #: The part of the recorded run's cost that was not spent again; ``None`` when the
    #: recorded run did not say what it cost.
    saved_usd: float | None = None


@dataclass(frozen=True)
class Spent:
    """What one attempt of a run reported spending: tokens in and out, cost in USD;
    ``None`` where the agent did not say. An attempt that ends without a verdict was
    paid for all the same (docs/budget.md)."""

    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None

    @property
    def tokens(self) -> int | None:
        """Input plus output (cache reads and writes apart), as results files count
        them; ``None`` when neither is reported."""
        return _total((self.tokens_in, self.tokens_out))


def total_spent(spends: Iterable[Spent | None]) -> Spent | None:
    """What several attempts reported together; a figure none of them reported stays
    ``None``, and so does the whole when none reported anything."""
    found = [s for s in spends if s is not None]
    if not found:
        return None
    return Spent(
        _total(s.tokens_in for s in found),
        _total(s.tokens_out for s in found),
        _total(s.cost_usd for s in found),
    )


_Number = TypeVar("_Number", int, float)


def _total(values: Iterable[_Number | None]) -> _Number | None:
    total: _Number | None = None
    for value in values:
        if value is not None:
            total = value if total is None else total + value
    return total


#: Why a run reached no verdict: the ``kind`` of a
#: :class:`~pytest_evalcases.errors.RunError`, and a results file's ``error_kind``
#: (docs/agents.md, "Failures and errors"). The words are public: keep them.
ErrorKind = Literal[
    "error",
    "missing",
    "timeout",
    "authentication",
    "billing",
    "no-agent",
    "rate-limit",
    "server",
    "max-turns",
    "budget",
    "input",
    "config",
    "crash",
    "parse",
    "agent",
    "case",
    "no-output",
    "no-usage",
    "no-transcript",
    "denied",
    "setup",
    "workspace",
    "path",
    "check-timeout",
    "case-file",
    "escaped-workspace",
    "replay-diverged",
    "replay-missing",
    "replay-corrupt",
    "judge",
]
ERROR_KINDS: frozenset[ErrorKind] = frozenset(get_args(ErrorKind))


def error_kind(word: str) -> ErrorKind:
    """``word`` as an error kind (one read back from a stored run); ``error`` for a word
    that names none."""
    for kind in ERROR_KINDS:
        if kind == word:
            return kind
    return "error"


#: The failure category a check's failure stands for (a check's ``mode:``), and the
#: mode a failed run is classified into (docs/results.md, "Failure modes"). The words
#: are public: keep them.
CheckMode = Literal[
    "planning_error",
    "tool_misuse",
    "state_corruption",
    "context_overflow",
    "hallucination",
    "loop",
    "refusal",
]
CHECK_MODES: tuple[CheckMode, ...] = get_args(CheckMode)
#: A failed run's mode: its first failing check's ``mode:``, ``loop`` when its
#: transcript repeats a call, else ``unclassified``.
FailureMode = Literal[CheckMode, "unclassified"]
FAILURE_MODES: tuple[FailureMode, ...] = (*CHECK_MODES, "unclassified")

#: ``eval_agent_home``: a fresh agent home per run, or the operator's own.
AgentHome = Literal["isolated", "inherit"]
AGENT_HOMES: tuple[AgentHome, ...] = ("isolated", "inherit")

#: The gate's verdict; ``NONE`` when nothing was graded.
Status = Literal["PASS", "BLOCKED", "INCONCLUSIVE", "NONE"]

#: What came of ``--eval-override`` (docs/results.md, "Overrides and quarantines"): it
#: lifted a block, was refused (a critical case blocked), or found no block to lift.
OverrideOutcome = Literal["applied", "refused", "unused"]
OVERRIDE_OUTCOMES: tuple[OverrideOutcome, ...] = ("applied", "refused", "unused")

#: ``eval_sandbox``: bubblewrap where it runs (``auto``), always, or never.
SandboxMode = Literal["auto", "bwrap", "none"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "bwrap", "none")
#: The sandbox in force.
SandboxKind = Literal["bwrap", "none"]
#: ``eval_sandbox_network``: setups and command checks share the network, or have none.
SandboxNetwork = Literal["shared", "none"]
SANDBOX_NETWORKS: tuple[SandboxNetwork, ...] = ("shared", "none")

#: The rule of a drift alert (docs/results.md, "Drift alerts"): the pass rate fell on
#: consecutive runs, or the cost per case rose over the last days.
DriftRule = Literal["pass rate", "cost"]

#: The agent CLIs whose saved sessions `evalcases import` reads (docs/writing-cases.md,
#: "From an incident").
SessionCli = Literal["claude", "codex", "gemini"]
