"""The record of one run of one case, as it travels from an xdist worker to the
controller (a plain JSON-able dict) and into results files (docs/results.md)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from pytest_evalcases import defaults
from pytest_evalcases.kinds import GRADED, OUTCOMES, Outcome, RecordKind, ReplayHow, Severity


@dataclass(frozen=True)
class JudgeRecord:
    """A judge check's judgement in one run (docs/judge.md): the judge's answer and
    reason, who judged, and whether a failure of the check blocks."""

    #: ``True``: the judge answered yes (the check passed).
    yes: bool
    reason: str
    #: The judge's agent (``script``: the case's scripted judge) and model, if named.
    judge: str
    model: str | None = None
    #: ``asked``: the judge was asked in this run; ``scripted``: the case's script
    #: answered; ``stored``: the judgement of the run replayed or regraded.
    source: str = "asked"
    #: The judge's provider is the agent's (same-provider bias, disclosed).
    same_provider: bool = False
    #: The check's calibration: its kappa and labels; ``blocking`` when they suffice.
    kappa: float | None = None
    labels: int = 0
    blocking: bool = False
    #: The judge's exchange with its model, relative to the results file's directory
    #: (``<stem>.runs/<run>.judge-<check id>``); ``None`` when it was not recorded.
    recording: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _JUDGE_FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JudgeRecord:
        return cls(**{k: v for k, v in data.items() if k in _JUDGE_FIELDS})


_JUDGE_FIELDS = tuple(f.name for f in fields(JudgeRecord))


@dataclass(frozen=True)
class CheckRecord:
    """One check's verdict in one run, as reported and stored."""

    id: str
    type: str
    description: str | None
    passed: bool
    message: str
    #: The skill a ``skill_used`` / ``skill_not_used`` check names (docs/skills.md).
    skill: str | None = None
    #: The check's ``mode:``: the failure category its failure stands for
    #: (docs/results.md, "Failure modes"); ``None`` when the case gave none.
    mode: str | None = None
    #: A ``judge`` check's judgement (docs/judge.md); ``None`` for every other check.
    judge: JudgeRecord | None = None

    @property
    def blocks(self) -> bool:
        """Whether the check's failure can block: every check's but an uncalibrated
        judge's, which is reported and never blocks (docs/judge.md)."""
        return self.judge is None or self.judge.blocking

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "description": self.description,
            "passed": self.passed,
            "message": self.message,
        }
        if self.skill is not None:
            data["skill"] = self.skill
        if self.mode is not None:
            data["mode"] = self.mode
        if self.judge is not None:
            data["judge"] = self.judge.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckRecord:
        judge = data.get("judge")
        return cls(
            id=str(data.get("id", "")),
            type=str(data.get("type", "")),
            description=data.get("description"),
            passed=bool(data.get("passed")),
            message=str(data.get("message", "")),
            skill=str(data["skill"]) if isinstance(data.get("skill"), str) else None,
            mode=str(data["mode"]) if isinstance(data.get("mode"), str) else None,
            judge=JudgeRecord.from_dict(judge) if isinstance(judge, dict) else None,
        )


@dataclass(frozen=True)
class TurnRecord:
    """One turn of a run's conversation (docs/conversations.md), as stored: its own
    answer's length, tokens, cost, duration and tool calls, never the conversation's
    so far."""

    answer_chars: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    #: Seconds, as the CLI or the plugin measured the turn's run.
    duration: float | None = None
    #: Tool calls of the turn; ``None`` when the agent gave no transcript.
    calls: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _TURN_FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TurnRecord:
        return cls(**{k: v for k, v in data.items() if k in _TURN_FIELDS})


_TURN_FIELDS = tuple(f.name for f in fields(TurnRecord))


@dataclass
class RunRecord:
    """One run of one case (case x variant x repetition)."""

    case_id: str
    file: str
    line: int
    defends: str
    severity: Severity
    variant: str = ""
    repetition: int = 0
    outcome: Outcome = "error"
    kind: RecordKind = "case"
    description: str | None = None
    tags: list[str] = field(default_factory=list)
    min_pass_rate: float = defaults.CASE_MIN_PASS_RATE
    checks: list[CheckRecord] = field(default_factory=list)
    duration: float = 0.0
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    model: str | None = None
    error_kind: str | None = None
    error: str | None = None
    workspace: str | None = None
    attempts: int = 1
    nodeid: str = ""
    #: The fixture directory the workspace was copied from (absolute), if any.
    fixture: str | None = None
    #: The agent's turns (model requests) as its CLI counted them, when it says.
    turns: int | None = None
    #: Tool calls the agent CLI refused for want of permission (``TOOL: input``).
    permission_denials: list[str] = field(default_factory=list)
    #: Paths outside the workspace the sandbox refused the agent (docs/sandbox.md).
    refused_writes: list[str] = field(default_factory=list)
    #: The agent's final answer was empty and it changed no file of the workspace: its
    #: negative checks passed by default (docs/results.md).
    did_nothing: bool = False
    #: How severe a failed run's failure is: its most severe failed check's severity (a
    #: task directory's LOW checks failing alone: ``advisory``, the run ``xfailed``);
    #: ``None`` for a run that did not fail (docs/results.md).
    failure_severity: Severity | None = None
    #: A failed (or advisory-failed, ``xfailed``) run's failure mode (one of
    #: ``kinds.FAILURE_MODES``); ``None`` for a run that did not fail
    #: (docs/results.md, "Failure modes").
    failure_mode: str | None = None
    #: The run's exchange with the model API, relative to the results file's directory
    #: (``<stem>.runs/<run>/exchange.jsonl``); ``None`` when it was not recorded
    #: (docs/replay.md, "Recording").
    recording: str | None = None
    #: How the run was replayed (``--eval-replay``, ``--eval-reuse``): ``full``,
    #: ``partial``, ``live`` or ``diverged``; ``None`` when it was not (docs/replay.md).
    replay: ReplayHow | None = None
    #: Replayed: the tokens of the responses answered from the recording, and the part
    #: of the recorded run's cost they stand for (an approximation, docs/replay.md).
    saved_tokens: int | None = None
    saved_usd: float | None = None
    #: Regraded (``--eval-regrade``): what the stored run reported spending when it was
    #: recorded. The regraded run's own ``tokens_in``, ``tokens_out`` and ``cost_usd``
    #: are ``None``: a regrade runs no agent, and the recorded figures are counted once,
    #: in the file that recorded them (docs/replay.md, "Regrade").
    recorded_tokens_in: int | None = None
    recorded_tokens_out: int | None = None
    recorded_cost_usd: float | None = None
    #: A perturbed run's perturbation, ``CLASS-K`` (``typo-3``); ``None`` for a run of
    #: the prompt as written (docs/perturbation.md).
    perturbation: str | None = None
    #: The scripted model answered the run (``script:``, docs/config-contract.md): it
    #: spent nothing, and its ``tokens_in``, ``tokens_out`` and ``cost_usd`` are
    #: ``None``, out of every live figure (docs/results.md).
    scripted: bool = False
    #: The run graded a directory that holds an agent's work (``--eval-workspace``, a
    #: task directory's snapshot): no agent ran, and its ``duration`` is the grading's,
    #: left out of the wall times (docs/results.md, "Metrics").
    graded_dir: bool = False
    #: The case's ``quarantine:`` reason: the run was skipped with it (docs/results.md,
    #: "Overrides and quarantines"); ``None`` for a case not quarantined.
    quarantine: str | None = None
    #: Each turn of a conversation (``follow_ups``, docs/conversations.md); empty for a
    #: run of one prompt, and then not written.
    conversation: list[TurnRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The record as a results file's case entry: the case's id is ``id``.

        Made for every report of every run: a shallow copy (the lists copied too), not
        ``dataclasses.asdict``'s deep one, which costs ten times as much."""
        data: dict[str, Any] = {"id": self.case_id}
        for name in _FIELDS:
            data[name] = getattr(self, name)
        data["tags"] = list(self.tags)
        data["permission_denials"] = list(self.permission_denials)
        data["refused_writes"] = list(self.refused_writes)
        data["checks"] = [check.to_dict() for check in self.checks]
        if self.conversation:
            data["conversation"] = [turn.to_dict() for turn in self.conversation]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecord:
        """The record of a case entry; :class:`ValueError` for an unknown outcome."""
        known = cls.__dataclass_fields__
        values = {k: v for k, v in data.items() if k in known}
        if "case_id" not in values and "id" in data:
            values["case_id"] = data["id"]
        outcome = values.get("outcome", "error")
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
        values["checks"] = [
            CheckRecord.from_dict(c) for c in values.get("checks") or [] if isinstance(c, dict)
        ]
        values["conversation"] = [
            TurnRecord.from_dict(t) for t in values.get("conversation") or [] if isinstance(t, dict)
        ]
        return cls(**values)

    @property
    def failed_as(self) -> Severity:
        """The severity a failed run counts under: :attr:`failure_severity`, or the
        case's in a results file written before that key existed."""
        return self.failure_severity or self.severity

    @property
    def reached_verdict(self) -> bool:
        """A verdict was reached: passed, failed, or an advisory failure (xfailed)."""
        return self.outcome in GRADED


#: The record's fields in its dictionary's order (``case_id`` is written as ``id``).
_FIELDS = tuple(f.name for f in fields(RunRecord) if f.name not in ("case_id", "conversation"))
