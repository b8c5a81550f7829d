"""One run of one case: workspace, setup, agent, checks. Plain Python, no pytest.

:func:`execute` either returns a :class:`RunReport` (every check evaluated, no stop
at the first failure) or raises :class:`~pytest_evalcases.errors.RunError` when no
verdict was possible; errored attempts are retried with a fresh workspace.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pytest_evalcases import defaults
from pytest_evalcases.agents.base import Agent, AgentResult, RunRequest, ToolCall, run_agent
from pytest_evalcases.cases.loading import LoadedCase
from pytest_evalcases.cases.registry import CheckContext, CheckRegistry
from pytest_evalcases.errors import RunError, SetupError
from pytest_evalcases.kinds import AgentHome
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run.workspace import Variant, populate, run_setup

OUTPUT_FILE = Path(".evalcases") / "output.txt"


@dataclass
class RunReport:
    """What one run produced."""

    checks: list[CheckRecord] = field(default_factory=list)
    agent: AgentResult | None = None
    workspace: Path | None = None
    attempts: int = 1
    duration: float = 0.0

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed_checks(self) -> list[CheckRecord]:
        return [c for c in self.checks if not c.passed]


@dataclass(frozen=True)
class RunContext:
    """Session-wide inputs of every run."""

    registry: CheckRegistry
    agent: Agent | None
    default_timeout: float
    retries: int = 0
    transcript: bool = False
    base_env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    #: ``eval_agent_home``: ``isolated`` gives the agent a fresh home per run.
    agent_home: AgentHome = defaults.AGENT_HOME


def execute(
    case: LoadedCase,
    variant: Variant,
    ctx: RunContext,
    new_workspace: Callable[[], Path],
) -> RunReport:
    """Run ``case`` for ``variant``; retry errored attempts up to ``ctx.retries`` times."""
    start = time.monotonic()
    for attempt in range(1, ctx.retries + 2):
        workspace: Path | None = None
        try:
            if variant.graded_dir is not None:
                report = _grade_directory(case, variant, ctx)
            else:
                workspace = new_workspace()
                report = _run_live(case, variant, ctx, workspace)
        except RunError as exc:
            if attempt > ctx.retries:
                if ctx.retries:
                    exc.args = (f"{exc} (after {attempt} attempts)",)
                exc.workspace = str(workspace) if workspace is not None else None
                exc.attempts = attempt
                raise
            continue
        report.attempts = attempt
        report.duration = time.monotonic() - start
        return report
    raise AssertionError("unreachable")


def case_env(
    base: Mapping[str, str], case: LoadedCase, variant: Variant, workspace: Path
) -> dict[str, str]:
    """The agent's environment: pytest's own plus the ``EVALCASES_*`` variables."""
    env = dict(base)
    env["EVALCASES_CASE_ID"] = case.id
    env["EVALCASES_WORKSPACE"] = str(workspace)
    env["EVALCASES_VARIANT"] = variant.name
    return env


def _run_live(case: LoadedCase, variant: Variant, ctx: RunContext, workspace: Path) -> RunReport:
    if ctx.agent is None:
        raise RunError("no agent configured (--eval-agent)", kind="no-agent")
    if case.prompt is None:
        where = "task.md" if case.kind == "task" else "`prompt:`"
        raise RunError(
            f"case {case.id!r} has no prompt ({where}); it can only be graded with "
            "--eval-workspace",
            kind="case",
        )
    env = case_env(ctx.base_env, case, variant, workspace)
    populate(workspace, case.fixture, variant.overlays)
    if case.setup:
        run_setup(workspace, case.setup, env)
    with agent_home(ctx.agent, env, ctx.agent_home) as home_env:
        request = RunRequest(
            prompt=case.prompt,
            workspace=workspace,
            bare=case.bare,
            timeout=case.timeout or ctx.default_timeout,
            env={**env, **home_env},
            needs_transcript=case.needs_transcript or ctx.transcript,
        )
        result = run_agent(ctx.agent, request)
    tool_inputs = bool(getattr(ctx.agent, "tool_inputs", True))
    checks = _evaluate(case, ctx, workspace, result.text, result.tool_calls, env, tool_inputs)
    return RunReport(checks=checks, agent=result, workspace=workspace)


@contextmanager
def agent_home(agent: Agent, env: Mapping[str, str], mode: AgentHome) -> Iterator[dict[str, str]]:
    """The environment variables that give ``agent`` a fresh home of its own for one run
    (none with ``inherit``, or for an agent without an ``isolate`` method). The home
    holds copies of credentials: it goes when the run ends, whatever its outcome."""
    isolate = getattr(agent, "isolate", None)
    if mode == "inherit" or isolate is None:
        yield {}
        return
    root = Path(tempfile.mkdtemp(prefix="evalcases-home-"))
    try:
        try:
            variables = dict(isolate(root, env))
        except OSError as exc:
            raise SetupError(f"could not make the agent's home in {root}: {exc}") from None
        yield variables
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _grade_directory(case: LoadedCase, variant: Variant, ctx: RunContext) -> RunReport:
    assert variant.graded_dir is not None
    per_case = variant.graded_dir / case.id
    workspace = per_case if per_case.is_dir() else variant.graded_dir
    if not workspace.is_dir():
        raise RunError(f"graded directory {workspace} does not exist", kind="workspace")
    output_file = workspace / OUTPUT_FILE
    output = output_file.read_text("utf-8", errors="replace") if output_file.is_file() else None
    env = case_env(ctx.base_env, case, variant, workspace)
    checks = _evaluate(case, ctx, workspace, output, None, env, True)
    agent = AgentResult(text=output) if output is not None else None
    return RunReport(checks=checks, agent=agent, workspace=workspace)


def _evaluate(
    case: LoadedCase,
    ctx: RunContext,
    workspace: Path,
    output: str | None,
    tool_calls: tuple[ToolCall, ...] | None,
    env: Mapping[str, str],
    tool_inputs: bool,
) -> list[CheckRecord]:
    check_ctx = CheckContext(
        workspace=workspace,
        fixture=case.fixture,
        output=output,
        tool_calls=tool_calls,
        env=env,
        tool_inputs=tool_inputs,
    )
    return [ctx.registry.evaluate(i, check, check_ctx) for i, check in enumerate(case.checks)]
