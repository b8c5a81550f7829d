"""What a session that ran eval cases says in pytest's terminal: the ``evalcases:``
header line (docs/reference.md, "Header lines") and the ``eval gate`` summary, as
lines with their markup; :mod:`pytest_evalcases.plugin.reporting` writes them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_evalcases.errors import UsageError
from pytest_evalcases.report import messages, summary
from pytest_evalcases.sandbox import INSTALL_HINT
from pytest_evalcases.session.state import EvalSession

#: A line and its markup, in the keywords of pytest's terminal writer.
Line = tuple[str, Mapping[str, bool]]

#: The verdict line in the colours of pytest's own outcomes (its final line's).
VERDICT_MARKUP: dict[str, dict[str, bool]] = {
    "PASS": {"green": True, "bold": True},
    "BLOCKED": {"red": True, "bold": True},
    "INCONCLUSIVE": {"yellow": True, "bold": True},
}
YELLOW: Mapping[str, bool] = {"yellow": True}
PLAIN: Mapping[str, bool] = {}


@dataclass(frozen=True)
class GateSummary:
    """The terminal summary: ``section`` is the title of the section the lines go in,
    ``""`` when they need none."""

    section: str
    lines: tuple[Line, ...]


def header(state: EvalSession) -> str:
    """The ``evalcases:`` line of pytest's header."""
    settings = state.settings
    # The first variant's agent: the session's, or the one every variant names.
    agent = state.agent.name if state.agent is not None else None
    agent = agent or (settings.agent.name if settings.agent else None)
    if settings.regrade is not None:
        # No agent runs: each run is graded from what the results file stored.
        agent = f"none (regrading {messages.display_path(settings.regrade.path, Path.cwd())})"
    sandbox = ""
    if state.agent is not None:
        try:
            sandbox = state.sandbox.describe()
        except UsageError:
            # eval_sandbox = bwrap where it cannot run, a missing path: the preflight
            # stops the session and says why.
            sandbox = "not usable"
    described = summary.described_variants(state.factors()) if settings.regrade is None else {}
    return messages.session_header(agent, settings.variants, sandbox, described)


def gate_summary(state: EvalSession, *, every_case: bool) -> GateSummary:
    """The ``eval gate`` section; only the agents that were unavailable when the session
    ran no case (a plain ``pytest`` whose ini names an agent this machine lacks)."""
    skipped: list[Line] = [
        (messages.skipped_unavailable(reason), YELLOW)
        for reason in dict.fromkeys(state.unavailable.values())
    ]
    if not state.records and not (state.cases_started and state.incomplete):
        return GateSummary("", tuple(skipped))
    hint = ""
    if state.agent is None:
        hint = "no agent configured: --eval-agent, or --eval-workspace to grade directories"
    report = state.report()
    *body, verdict = summary.lines(report, hint, every_case=every_case)
    body += summary.unperturbed_lines(state.perturb_gaps)
    lines: list[Line] = [(line, PLAIN) for line in body]
    lines.append((verdict, VERDICT_MARKUP.get(report.verdict.status, PLAIN)))
    lines += [(line, YELLOW) for line in summary.did_nothing_lines(state.records)]
    lines += [(line, YELLOW) for line in summary.refused_lines(state.records)]
    if state.agent is not None and state.settings.agent_home == "inherit":
        lines.append((messages.INHERITED_HOME, PLAIN))
    for agent, files in state.machine_config().items():
        lines.append((messages.machine_config(agent, files), YELLOW))
    lines += [(line, PLAIN) for line in _sandbox_lines(state)]
    lines += skipped
    if state.results_line:
        lines.append((state.results_line, PLAIN))
    return GateSummary("eval gate", tuple(lines))


def _sandbox_lines(state: EvalSession) -> list[str]:
    """Once: that live runs were not contained; which runs were refused writes."""
    live = [r for r in state.records if r.kind != "file" and r.outcome != "skipped"]
    if not live or state.agent is None:
        return []
    lines = []
    try:
        sandbox = state.sandbox
    except UsageError:
        sandbox = None
    if sandbox is not None and not sandbox.contained:
        asked = state.settings.sandbox.mode == "none"
        hint = "eval_sandbox = auto contains them" if asked else INSTALL_HINT
        lines.append(messages.not_contained(sandbox.reason, hint))
    refused = [
        (f"{r.case_id}[{r.variant}]" if r.variant else r.case_id, r.refused_writes)
        for r in live
        if r.refused_writes
    ]
    return lines + messages.refused_writes(refused)
