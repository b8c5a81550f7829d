"""The texts a run's item reports: its header, why it failed, why it reached no
verdict, its usage line, the red-first verdict and a case file's load error.

Plain functions of plain values, so that what the user reads is unit-tested without
pytest. The texts are the ones docs/writing-cases.md and docs/agents.md show.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pytest_evalcases.errors import CaseFileError, RunError
from pytest_evalcases.text import check_label, plural

if TYPE_CHECKING:
    from pytest_evalcases.agents.base import AgentResult
    from pytest_evalcases.results.factors import Factors
    from pytest_evalcases.results.record import CheckRecord
    from pytest_evalcases.run.runner import RunReport
    from pytest_evalcases.run.workspace import Variant


class CaseHead(Protocol):
    """What the header names of a case (a loaded case has these)."""

    @property
    def id(self) -> str: ...
    @property
    def severity(self) -> str: ...
    @property
    def defends(self) -> str: ...


#: The summary's word on ``eval_agent_home = inherit``.
INHERITED_HOME = (
    "agent home: inherited (eval_agent_home = inherit): the operator's own agent "
    "configuration reached the model beside the configuration under test"
)


def skipped_unavailable(reason: str) -> str:
    """That the eval cases of a run that did not ask for them were skipped, and why
    (docs/agents.md, "Beside your other tests")."""
    return (
        f"eval cases skipped: {reason} (a run that asks for eval cases, such as "
        "`pytest evals/` or `--eval-agent`, stops here with a usage error)"
    )


def machine_config(agent: str, files: Sequence[Path]) -> str:
    """That the runs of ``agent`` read machine-wide configuration no case sets."""
    shown = ", ".join(str(f) for f in files[:5])
    more = f" and {len(files) - 5} more" if len(files) > 5 else ""
    return (
        f"machine-wide configuration that no case sets reaches the runs of {agent}: "
        f'{shown}{more} (docs/agents.md, "Machine-wide configuration")'
    )


def display_path(path: Path | str, base: Path) -> str:
    """``path`` relative to ``base`` (the invocation directory) when it can be."""
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return str(path)


def case_file_message(error: CaseFileError, base: Path) -> str:
    """``case file error: FILE:LINE: FIELD: reason``, the file relative to ``base``."""
    where = display_path(error.path, base)
    if error.line is not None:
        where += f":{error.line}"
    field = f" {error.field}:" if error.field else ""
    return f"case file error: {where}:{field} {error.reason}"


def session_header(
    agent: str | None,
    variants: Sequence[Variant],
    sandbox: str = "",
    described: Mapping[str, Factors] | None = None,
) -> str:
    """``evalcases: agent NAME; ...``, pytest's header line: what the run grades or
    runs, with which configuration, and in which sandbox (when it runs an agent).
    ``described``: the variants that differ in more than their configuration (an agent
    or a model matrix), with what each is made of."""
    name = agent or "none"
    graded = [v.name or v.source for v in variants if v.graded_dir is not None]
    if graded:
        return f"evalcases: grading {', '.join(graded)}"
    if described:
        agents = sorted({f.agent for f in described.values() if f.agent})
        line = f"evalcases: agent{'s' if len(agents) > 1 else ''} {', '.join(agents) or 'none'}"
        line += "; variants " + ", ".join(
            f"{v.name} ({described[v.name].describe()})" for v in variants if v.name in described
        )
        return line + (f"; sandbox {sandbox}" if sandbox else "")
    line = f"evalcases: agent {name}"
    configs = [f"{v.name} ({v.source or 'the working tree'})" for v in variants if v.name]
    if configs:
        line += f"; configurations {', '.join(configs)}"
    elif variants and variants[0].overlays:
        line += "; configuration from the working tree"
    return line + (f"; sandbox {sandbox}" if sandbox else "")


def not_contained(reason: str, hint: str) -> str:
    """The summary's word on runs without a sandbox (docs/sandbox.md)."""
    why = f" ({reason})" if reason else ""
    return (
        f"sandbox: none{why}: runs were not contained, the agent could change files "
        f"outside its workspace; {hint}"
    )


def refused_writes(refused: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    """The summary's lines on runs the sandbox refused writes outside the workspace."""
    if not refused:
        return []
    lines = [f"sandbox: {len(refused)} run(s) tried to write outside the workspace (refused):"]
    for who, paths in refused:
        more = f" and {len(paths) - 5} more" if len(paths) > 5 else ""
        lines.append(f"  {who}: {', '.join(paths[:5])}{more}")
    return lines


def header(case: CaseHead, variant: str) -> str:
    """``case ID [VARIANT] (SEVERITY) defends PATH``: the first line of every text."""
    defends = f" defends {case.defends}" if case.defends else ""
    shown = f" [{variant}]" if variant else ""
    return f"case {case.id}{shown} ({case.severity}){defends}"


def usage_line(agent: AgentResult | None) -> str:
    """``tokens 10 in / 5 out · cost $0.0100 · model M``; empty without usage."""
    if agent is None:
        return ""
    parts = []
    if agent.usage.input_tokens is not None or agent.usage.output_tokens is not None:
        parts.append(
            f"tokens {agent.usage.input_tokens or 0} in / {agent.usage.output_tokens or 0} out"
        )
    if agent.cost_usd is not None:
        parts.append(f"cost ${agent.cost_usd:.4f}")
    if agent.models:
        parts.append("model " + ", ".join(agent.models))
    return " · ".join(parts)


def failure_text(
    head: str,
    description: str | None,
    report: RunReport,
    failed: Sequence[CheckRecord],
    *,
    graded: bool,
    redact: Callable[[str], str],
    note: str = "",
) -> str:
    """Why a run failed: every failed check, the workspace, usage and attempts.

    ``graded`` is whether the workspace is a graded directory (``--eval-workspace``);
    ``note`` why the workspace is not where kept workspaces go.
    """
    lines = [head]
    if description:
        lines.append(f"  {description}")
    lines.append(f"{len(failed)} of {len(report.checks)} checks failed:")
    for check in failed:
        desc = f" ({check.description})" if check.description else ""
        lines.append(f"  FAILED {check_label(check.id, check.type)}{desc}: {check.message}")
    if report.workspace is not None:
        kept = "graded directory" if graded else "workspace kept"
        lines.append(f"{kept}: {report.workspace}" + (f" ({note})" if note else ""))
    lines += refusal_lines(report.agent)
    refused = report.agent.refused_writes if report.agent is not None else ()
    if refused:
        lines.append("the sandbox refused writes outside the workspace: " + ", ".join(refused[:10]))
    usage = usage_line(report.agent)
    if usage:
        lines.append(usage)
    if report.attempts > 1:
        lines.append(f"attempts: {report.attempts} (earlier ones errored)")
    return redact("\n".join(lines))


def refusal_lines(agent: AgentResult | None) -> list[str]:
    """The tool calls the agent CLI refused, one line each under a heading; none when it
    refused none (docs/agents.md, "Refused tool calls")."""
    denied = (agent.denials if agent is not None else None) or ()
    if not denied:
        return []
    return [
        f"the agent CLI refused {plural(len(denied), 'tool call')} (its permission rules or "
        "a hook; eval_agent_args decides what it may do):",
        *(f"  denied {denial.named}" for denial in denied),
    ]


def checks_text(
    checks: Sequence[CheckRecord], agent: AgentResult | None, redact: Callable[[str], str]
) -> str:
    """Every check of a run that passed, each with its result and what it found, then the
    usage line: the report section that ``-rP`` / ``-rA`` and JUnit's ``system-out`` show
    (docs/writing-cases.md, "4. Strengthen the rule, then green")."""
    lines = []
    for check in checks:
        result = "PASSED" if check.passed else "FAILED"
        desc = f" ({check.description})" if check.description else ""
        lines.append(f"{result} {check_label(check.id, check.type)}{desc}: {check.message}")
    lines += refusal_lines(agent)
    usage = usage_line(agent)
    if usage:
        lines.append(usage)
    return redact("\n".join(lines))


#: How much of one reason the one-line summary of a run quotes; pytest cuts the line
#: to the terminal's width, except on CI and under ``-vv``, where it prints it whole.
REASON_CHARS = 160


def _first_line(text: str, limit: int = REASON_CHARS) -> str:
    line = text.strip().split("\n", 1)[0].rstrip()
    more = line != text.strip()
    if len(line) > limit:
        line, more = line[: limit - 1].rstrip(), True
    return line + ("…" if more else "")


def failure_line(failed: Sequence[CheckRecord], redact: Callable[[str], str]) -> str:
    """The one line that says why a run failed, for pytest's short test summary and
    ``--tb=line``: the failed checks' ids first (what survives a narrow terminal), then
    their reasons, e.g. ``no-print failed: pattern 'print(' found in a.py:3``."""
    ids = ", ".join(c.id for c in failed)
    reasons = "; ".join(_first_line(c.message) for c in failed)
    return redact(f"{ids} failed: {reasons}")


def error_line(error: RunError, redact: Callable[[str], str]) -> str:
    """The one line that says why a run reached no verdict: its kind, then its message's
    first line, e.g. ``no verdict (timeout): the agent ran past 600 s``."""
    return redact(f"no verdict ({error.kind}): {_first_line(str(error))}")


def error_text(
    head: str,
    error: RunError,
    workspace: Path | None,
    redact: Callable[[str], str],
    *,
    note: str = "",
) -> str:
    """Why a run reached no verdict: the error's kind and message, the workspace
    (``note``: why it is not where kept workspaces go)."""
    lines = [f"{head}: no verdict ({error.kind})", str(error)]
    if workspace is not None:
        lines.append(f"workspace kept: {workspace}" + (f" ({note})" if note else ""))
    return redact("\n".join(lines))


def perturbed_text(
    perturbation: str, failed: Sequence[CheckRecord], redact: Callable[[str], str]
) -> str:
    """The xfail reason of a perturbed run that failed while perturbed runs are advisory
    (docs/perturbation.md)."""
    checks = "; ".join(f"{c.id}: {c.message}" for c in failed)
    return redact(f"perturbed prompt {perturbation} failed (advisory): {checks}")


def advisory_text(
    failed: Sequence[CheckRecord], redact: Callable[[str], str], severity: str = "advisory"
) -> str:
    """The xfail reason of an advisory failure: an advisory case's, or a task
    directory's (of ``severity``) whose failed checks are all ``LOW``, or a case's
    whose failed checks are all uncalibrated judge checks (docs/judge.md)."""
    only = "uncalibrated judge" if not any(c.blocks for c in failed) else "LOW"
    what = (
        "advisory case failed"
        if severity == "advisory"
        else f"advisory failure of a {severity} case, only {only} checks failed"
    )
    return redact(f"{what}: " + "; ".join(f"{c.id}: {c.message}" for c in failed))


def red_first_line(checks: int) -> str:
    """``--eval-red-first``: why a case that passes on first write failed."""
    return (
        "passes on first write: it tests nothing "
        f"(all {checks} checks hold against the current configuration)"
    )


def red_first_text(head: str, checks: int) -> str:
    """``--eval-red-first``: the failure of a case that passes on first write."""
    return f"{head}\n{red_first_line(checks)}"
