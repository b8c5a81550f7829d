"""One run of one case: workspace, setup, agent, checks. Plain Python, no pytest.

:func:`execute` either returns a :class:`RunReport` (every check evaluated, no stop
at the first failure) or raises :class:`~pytest_evalcases.errors.RunError` when no
verdict was possible; errored attempts are retried with a fresh workspace.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_evalcases import containment, defaults, process
from pytest_evalcases.agents.base import (
    TIMEOUT_HINT,
    Agent,
    AgentResult,
    RunRequest,
    model_api,
    run_agent,
)
from pytest_evalcases.cases.loading import LoadedCase
from pytest_evalcases.cases.registry import CheckContext, CheckRegistry
from pytest_evalcases.errors import RunError, SetupError
from pytest_evalcases.kinds import AgentHome, Replayed, Spent, total_spent
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run.budget import NO_USAGE, BudgetSpent, limit_checks, runaway_checks
from pytest_evalcases.run.failfast import NotStarted, Stops, Unreachable, identity, stops
from pytest_evalcases.run.files import Unreadable, inside, read_text
from pytest_evalcases.run.scheduler import Backoff
from pytest_evalcases.run.workspace import EntryState, Variant, populate, run_setup, snapshot
from pytest_evalcases.sandbox import Sandbox
from pytest_evalcases.text import plural

if TYPE_CHECKING:
    # The proxy's modules (http.server, http.client) load with the first recorded run.
    from pytest_evalcases.run.proxy import Channel
    from pytest_evalcases.run.recording import Recorder
    from pytest_evalcases.run.replay import Replay, ReplaySource

OUTPUT_FILE = Path(".evalcases") / "output.txt"


@dataclass
class RunReport:
    """What one run produced."""

    checks: list[CheckRecord] = field(default_factory=list)
    agent: AgentResult | None = None
    workspace: Path | None = None
    attempts: int = 1
    duration: float = 0.0
    #: The agent's final answer was empty and the workspace is as the run started it
    #: (after ``setup``): negative checks pass such a run by default (docs/results.md).
    did_nothing: bool = False
    #: The run's recorded exchange, relative to the results file's directory.
    recording: str | None = None
    #: How the run was replayed (``--eval-replay``, ``--eval-reuse``); ``None``: it was not.
    replayed: Replayed | None = None
    #: What each attempt of the run reported spending, in order (``agent`` is the last
    #: one's): retried attempts were paid for too.
    spends: tuple[Spent | None, ...] = ()
    #: A regraded run: what the stored run reported spending when it was recorded. The
    #: regrade itself spent nothing (docs/replay.md, "Regrade").
    recorded_spent: Spent | None = None

    @property
    def spent(self) -> Spent | None:
        """What all the run's attempts reported spending together (the agent's, for a
        report the runner did not fill in)."""
        if self.spends:
            return total_spent(self.spends)
        return self.agent.spent if self.agent is not None else None

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
    #: ``eval_sandbox``: where the agent, the setup and the command checks run.
    sandbox: Sandbox = field(default_factory=Sandbox)
    #: Without a sandbox, the git work tree a run must leave as it found it, and the
    #: paths in it the session itself writes (caches, results).
    repository: Path | None = None
    session_paths: tuple[Path, ...] = ()
    #: The ids of the session's collected cases: a graded directory with a subdirectory
    #: of one of these names holds one directory per case (:func:`graded_workspace`).
    case_ids: frozenset[str] = frozenset()
    #: When the next run may start after rate limits; shared with the scheduler.
    backoff: Backoff = field(default_factory=Backoff)
    #: Where live runs' model traffic is recorded (``eval_record``); ``None``: nowhere.
    recorder: Recorder | None = None
    #: The recordings that runs are answered from (``--eval-replay``, ``--eval-reuse``).
    replay: ReplaySource | None = None
    #: The agents and credentials whose runs are not started any more (docs/agents.md,
    #: "Failing fast"); shared by the session's runs.
    stops: Stops = field(default_factory=Stops)


@dataclass(frozen=True)
class OuterLimit:
    """A limit on the whole run of a case set outside it: pytest-timeout's, which the
    plugin enforces itself (docs/agents.md, "pytest-timeout"). The case's ``setup``
    and its agent get what is left of it when that is less than their own limit."""

    #: When it runs out, on the ``time.monotonic()`` clock.
    end: float
    seconds: float
    #: Where it was set.
    origin: str = "--timeout, the timeout ini option, PYTEST_TIMEOUT or a timeout marker"

    def left(self) -> float:
        return self.end - time.monotonic()

    def ran_out(self, when: str, own: str) -> str:
        """Why a run stopped ``when`` this limit ran out, before ``own`` (its own limit)."""
        return (
            f"pytest-timeout's limit of {self.seconds:g}s ({self.origin}) ran out{when}, "
            f"before {own} (a case gets the shorter of the two)"
        )


def execute(
    case: LoadedCase,
    variant: Variant,
    ctx: RunContext,
    new_workspace: Callable[[], Path],
    first: Callable[[], AgentRun] | None = None,
    *,
    limit: OuterLimit | None = None,
    record_as: str | None = None,
) -> RunReport:
    """Run ``case`` for ``variant``; retry errored attempts up to ``ctx.retries`` times,
    all within ``limit`` when there is one.

    ``first``, when given, hands over the first attempt's agent run, made ahead of time
    by the scheduler (:mod:`pytest_evalcases.run.scheduler`), outside ``limit``; it
    raises what :func:`run_agent_phase` raised. The checks always run here, in the
    caller's thread. ``record_as`` names the run's recording (:func:`run_agent_phase`).
    """
    start = time.monotonic()
    # What each attempt so far reported spending.
    spends: list[Spent | None] = []
    for attempt in range(1, ctx.retries + 2):
        workspace: Path | None = None
        try:
            if variant.graded_dir is not None:
                report = _grade_directory(case, variant, ctx)
            else:
                if attempt == 1 and first is not None:
                    # The run started ahead: its time counts from its own start.
                    try:
                        ran = first()
                    except RunError as exc:
                        start = min(start, time.monotonic() - exc.duration)
                        raise
                    start = min(start, ran.began)
                else:
                    workspace = new_workspace()
                    ran = run_agent_phase(case, variant, ctx, workspace, limit, record_as=record_as)
                workspace = ran.workspace
                try:
                    report = grade(case, ctx, ran)
                except RunError as exc:
                    # The checks could not grade the run: the model was paid all the same.
                    exc.spent = exc.spent or ran.result.spent
                    raise
        except (BudgetSpent, NotStarted):
            # Not started: no attempt, nothing to retry (docs/budget.md, docs/agents.md).
            raise
        except RunError as exc:
            workspace = workspace if exc.workspace is None else Path(exc.workspace)
            spends.append(exc.spent)
            over = runaway_checks(case, exc)
            if over:
                # Over the case's own limits before it stopped: a verdict, not retried.
                return RunReport(
                    checks=over,
                    workspace=workspace,
                    attempts=attempt,
                    duration=time.monotonic() - start,
                    recording=exc.recording,
                    replayed=exc.replayed,
                    spends=tuple(spends),
                )
            if attempt > ctx.retries or exc.kind in NOT_RETRIED or stops(exc):
                if ctx.retries:
                    exc.args = (f"{exc} (after {attempt} attempts)",)
                exc.workspace = str(workspace) if workspace is not None else None
                exc.attempts = attempt
                exc.duration = time.monotonic() - start
                exc.spends = tuple(spends)
                raise
            # After a rate limit, the retry waits as every other start does.
            ctx.backoff.record(exc)
            ctx.backoff.wait()
            continue
        spends.append(report.agent.spent if report.agent is not None else None)
        report.spends = tuple(spends)
        report.attempts = attempt
        report.duration = time.monotonic() - start
        return report
    raise AssertionError("unreachable")


def case_env(
    base: Mapping[str, str], case: LoadedCase, variant: Variant, workspace: Path
) -> dict[str, str]:
    """The agent's environment: pytest's own plus the ``EVALCASES_*`` variables, and
    a fixed time for git commits where the environment names none."""
    env = dict(base)
    env["EVALCASES_CASE_ID"] = case.id
    env["EVALCASES_WORKSPACE"] = str(workspace)
    env["EVALCASES_VARIANT"] = variant.name
    # A commit's id depends on its time: at a fixed one, the commits of setup and of the
    # agent have the same ids on every run, and the requests that quote them (Claude
    # Code's system prompt, `git log` read by the agent) replay (docs/replay.md).
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        env.setdefault(name, defaults.COMMIT_DATE)
    return env


@dataclass(frozen=True)
class AgentRun:
    """A live run up to the checks: the workspace, what the agent did, and what the
    checks need to grade it (:func:`grade`)."""

    workspace: Path
    result: AgentResult
    env: Mapping[str, str]
    #: The workspace as the run started it (after ``setup``); ``None`` when it held more
    #: entries than are walked (``WORKSPACE_MAX_ENTRIES``).
    started: Mapping[str, EntryState] | None
    #: Without a sandbox, the repository's working tree before the run.
    watch: containment.TreeState | None
    #: When the run started (``time.monotonic``).
    began: float = 0.0
    #: The run's recorded exchange, relative to the results file's directory.
    recording: str | None = None
    replayed: Replayed | None = None


def run_agent_phase(
    case: LoadedCase,
    variant: Variant,
    ctx: RunContext,
    workspace: Path,
    limit: OuterLimit | None = None,
    *,
    record_as: str | None = None,
) -> AgentRun:
    """Populate ``workspace``, run the case's ``setup`` and the agent: all of a live run
    but the checks. Thread-safe: the scheduler runs it in threads of its own. A
    :class:`RunError` it raises names ``workspace`` and the seconds the phase took.

    With a recorder in ``ctx`` and ``record_as`` (the run's name beside the results
    file), an agent that talks HTTP to its model API goes through the recording proxy,
    and its exchange is stored under that name (docs/replay.md, "Recording").

    After an earlier run of the same agent and credentials ended in an authentication
    error or found its API unreachable, nothing is started: :class:`NotStarted`
    (docs/agents.md, "Failing fast")."""
    began = time.monotonic()
    key = identity(ctx.agent, ctx.base_env) if ctx.agent is not None else None
    if ctx.agent is not None and key is not None:
        try:
            ctx.stops.check(key, ctx.agent.name)
        except NotStarted:
            # Nothing was put in the workspace yet: nothing to keep.
            with contextlib.suppress(OSError):
                workspace.rmdir()
            raise
    try:
        return _run_agent(case, variant, ctx, workspace, began, limit, record_as)
    except RunError as exc:
        if key is not None:
            ctx.stops.record(key, exc)
        exc.workspace = str(workspace)
        exc.duration = time.monotonic() - began
        raise


def _run_agent(
    case: LoadedCase,
    variant: Variant,
    ctx: RunContext,
    workspace: Path,
    began: float,
    limit: OuterLimit | None,
    record_as: str | None,
) -> AgentRun:
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
    watch = _watch(ctx)
    # What the run's stored changes are relative to: the fixture as populated.
    # (A recorder with nowhere to store, replaying with recording off, stores nothing.)
    storing = ctx.recorder is not None and ctx.recorder.place is not None and record_as
    populated = snapshot(workspace) if storing else None
    if case.setup:
        _run_setup(case.setup, workspace, env, ctx, limit)
    # Without a setup nothing changed since the fixture was populated: no second walk.
    started = snapshot(workspace) if case.setup or populated is None else populated
    own = case.timeout or ctx.default_timeout
    timeout = _within(limit, own)
    hint = TIMEOUT_HINT
    if limit is not None and timeout < own:
        theirs = f"the case's own timeout of {own:g}s"
        if timeout <= 0:
            raise RunError(limit.ran_out(" before the agent started", theirs), kind="timeout")
        hint = limit.ran_out("", theirs)
    with agent_home(ctx.agent, env, ctx.agent_home) as (home_env, home_paths):
        request = RunRequest(
            prompt=case.prompt,
            workspace=workspace,
            bare=case.bare,
            timeout=timeout,
            timeout_hint=hint,
            env={**env, **home_env},
            needs_transcript=case.needs_transcript or ctx.transcript,
            hook_events=case.needs_hook_events,
            sandbox=ctx.sandbox,
            writable=home_paths,
        )
        ran: AgentResult | None = None
        recording: str | None = None
        replayed: Replayed | None = None
        error: RunError | None = None
        try:
            ran, recording, replayed = _run_recorded(ctx, request, case, variant, record_as)
        except RunError as exc:
            error = exc
    if storing and record_as is not None:
        stored = _store_run(
            ctx, case, variant, record_as, workspace, populated, started, ran, error
        )
        if error is not None:
            error.recording = error.recording or stored
        else:
            recording = recording or stored
    if error is not None:
        raise error
    assert ran is not None
    return AgentRun(
        workspace=workspace,
        result=ran,
        env=env,
        started=started,
        watch=watch,
        began=began,
        recording=recording,
        replayed=replayed,
    )


def _run_recorded(
    ctx: RunContext,
    request: RunRequest,
    case: LoadedCase,
    variant: Variant,
    record_as: str | None,
) -> tuple[AgentResult, str | None, Replayed | None]:
    """Run the agent, through the recording proxy when the run is recorded or
    replayed: the CLI's base URL points at the run's path on the proxy, which forwards
    to the API the environment named, or answers from the run's recording
    (docs/replay.md). The exchange is stored when the agent ends, also when it failed
    (the :class:`RunError` names it)."""
    assert ctx.agent is not None
    recorder, source = ctx.recorder, ctx.replay
    api = model_api(ctx.agent, request.env) if recorder is not None and record_as else None
    replay = None
    if source is not None and record_as is not None:
        replay = _replay_for(source, request, case, variant, record_as, api is not None)
    if recorder is None or record_as is None or api is None:
        return run_agent(ctx.agent, request), None, None
    reuse = source is not None and source.mode == "reuse"
    with recorder.channel(api.upstream, request.env, replay=replay, reuse=reuse) as channel:
        if api.variable:
            request = replace(request, env={**request.env, api.variable: channel.url})
        else:
            request = replace(request, base_url=channel.url)
        header: dict[str, Any] = {
            "run": record_as,
            "case": case.id,
            "variant": variant.name,
            "agent": ctx.agent.name,
            # What the requests quote of this run, for a replay to normalise.
            "workspace": str(request.workspace),
            "homes": [str(path) for path in request.writable],
        }
        ended = _run_watched(ctx.agent, request, channel)
        result = ended if isinstance(ended, AgentResult) else None
        error = ended if isinstance(ended, RunError) else None
        replayed = None
        if source is not None:
            from pytest_evalcases.run.replay import outcome

            replayed = outcome(replay, channel.diverged is not None, reuse)
        stored = _store(recorder, channel, record_as, header)
        if channel.diverged is not None and not reuse:
            # Whatever the CLI made of the refusal, the run ended there.
            error = RunError(channel.diverged.message, kind="replay-diverged")
        if error is not None:
            error.recording = stored
            error.replayed = replayed
            raise error
        assert result is not None
        return result, stored, replayed


def _run_watched(agent: Agent, request: RunRequest, channel: Channel) -> AgentResult | RunError:
    """Run the agent through ``channel``: what it produced, or the error that ended it.
    An upstream failure the proxy sees (credentials refused, API unreachable) ends the
    CLI at once and is the run's error, in the API's words; a timeout quotes the API's
    last error, when there was one (docs/agents.md, "Failing fast")."""
    outcome: AgentResult | RunError | None = None
    with process.cancellable() as token:
        channel.on_failure(lambda failure: token.cancel())
        try:
            outcome = run_agent(agent, request)
        except RunError as exc:
            outcome = exc
        except process.Cancelled:
            # Stopped by the failure, unless the session is stopping.
            if channel.failure is None:
                raise
        finally:
            channel.on_failure(None)
    failure = channel.failure
    if failure is not None:
        # Whatever the CLI made of it, if it ended first: the API's words say why.
        kind = Unreachable if failure.kind == "server" else RunError
        return kind(f"agent {agent.name!r}: {failure.message}", kind=failure.kind)
    assert outcome is not None
    if isinstance(outcome, RunError) and outcome.kind == "timeout":
        last = channel.last_error()
        if last:
            outcome.args = (f"{outcome}\nthe model API's last error: {last}",)
    return outcome


def _replay_for(
    source: ReplaySource,
    request: RunRequest,
    case: LoadedCase,
    variant: Variant,
    record_as: str,
    proxied: bool,
) -> Replay | None:
    """The recording that answers the run (repetition i replays recording i); ``None``
    under ``--eval-reuse`` when there is none. Under ``--eval-replay`` a run without one
    is an error before its CLI starts."""
    from pytest_evalcases.run.replay import Places, Replay, repetition_of

    if not proxied:
        why = "its agent does not talk to a model API through the proxy (docs/replay.md)"
        found = None
    else:
        repetition = repetition_of(record_as, case.id, variant.name)
        look = source.find(case.id, variant.name, repetition)
        found, why = look.recording, look.missing
    if found is None:
        if source.mode == "replay":
            raise RunError(f"nothing to replay: {why}", kind="replay-missing")
        return None
    redact = source.redact
    places = Places(str(request.workspace), tuple(str(p) for p in request.writable))
    return Replay(found, places, redact)


def _store(recorder: Recorder, channel: Channel, name: str, header: dict[str, Any]) -> str | None:
    """Store a run's exchange; ``None`` when it cannot be written: a full disk costs the
    recording, never the run's verdict, and a warning says so (as for ``run.json``)."""
    from pytest_evalcases.run import artifacts

    stored: list[str | None] = [None]

    def write() -> None:
        stored[0] = recorder.store(channel, name, header)

    place = recorder.place
    where = place.directory / name if place is not None else Path(name)
    artifacts.store_quietly(where, name, write)
    return stored[0]


def _store_run(
    ctx: RunContext,
    case: LoadedCase,
    variant: Variant,
    name: str,
    workspace: Path,
    populated: Mapping[str, EntryState] | None,
    started: Mapping[str, EntryState] | None,
    result: AgentResult | None,
    error: RunError | None,
) -> str | None:
    """Store what a recorded run left (docs/replay.md, "What else is stored"): its
    answer, transcript and error, and its workspace's changes relative to the fixture.
    The run's directory relative to the results file's; ``None`` when it could not be
    written (a warning says so; the run keeps its verdict)."""
    from pytest_evalcases.run import artifacts

    recorder = ctx.recorder
    assert recorder is not None
    assert recorder.place is not None
    assert ctx.agent is not None
    place = recorder.place
    directory = place.directory / name
    header = {"run": name, "case": case.id, "variant": variant.name, "agent": ctx.agent.name}

    def write() -> None:
        artifacts.store(
            directory,
            workspace,
            populated,
            started,
            header,
            None if error is not None else result,
            (error.kind, str(error)) if error is not None else None,
            tool_inputs=bool(getattr(ctx.agent, "tool_inputs", True)),
            redact=recorder.redact,
            mode=recorder.mode,
        )

    if not artifacts.store_quietly(directory, name, write):
        return None
    return directory.relative_to(place.root).as_posix()


def grade(case: LoadedCase, ctx: RunContext, ran: AgentRun) -> RunReport:
    """The checks' verdict on an agent run, and whether it left the repository alone."""
    assert ctx.agent is not None
    result, workspace = ran.result, ran.workspace
    tool_inputs = bool(getattr(ctx.agent, "tool_inputs", True))
    checks = _evaluate(case, ctx, workspace, result, ran.env, tool_inputs)
    checks += limit_checks(case, ctx.agent.name, result)
    if ran.watch is not None:
        _check_tree(ctx, ran.watch)
    refused = refusal_error(case, result)
    if refused is not None:
        raise refused
    # A workspace too big to walk is no idle one: the agent left it so, or its setup did.
    idle = (
        not result.text.strip() and ran.started is not None and snapshot(workspace) == ran.started
    )
    return RunReport(
        checks=checks,
        agent=result,
        workspace=workspace,
        did_nothing=idle,
        recording=ran.recording,
        replayed=ran.replayed,
    )


def _run_setup(
    command: str,
    workspace: Path,
    env: Mapping[str, str],
    ctx: RunContext,
    limit: OuterLimit | None,
) -> None:
    """The case's ``setup``, within what is left of ``limit``."""
    own = defaults.SETUP_TIMEOUT
    timeout = _within(limit, own)
    limited_by = ""
    if limit is not None and timeout < own:
        theirs = f"the setup's own limit of {own:g}s"
        if timeout <= 0:
            raise RunError(limit.ran_out(" before the setup started", theirs), kind="timeout")
        limited_by = limit.ran_out("", theirs)
    run_setup(workspace, command, env, timeout, sandbox=ctx.sandbox, limited_by=limited_by)


def _within(limit: OuterLimit | None, own: float) -> float:
    """``own`` seconds, or what is left of ``limit`` when that is less (to a tenth of a
    second, for messages; at most 0 when nothing is)."""
    if limit is None:
        return own
    left = limit.left()
    return own if left >= own else max(int(left * 10) / 10, 0.0)


#: The error kind of a run that changed the repository outside its workspace.
ESCAPED = "escaped-workspace"
#: The error kind of a run in which the agent was refused a tool call.
DENIED = "denied"


def refusal_error(case: LoadedCase, result: AgentResult) -> RunError | None:
    """The ``denied`` error of a run in which the agent was refused tool calls, naming
    them; ``None`` when it was refused none, or when a check of the case grades refusals
    (``tool_blocked`` / ``tool_not_blocked``). A check that held because the agent could
    not act says nothing of the configuration (docs/agents.md, "Refused tool calls")."""
    if not result.denials or case.grades_refusals:
        return None
    calls = "; ".join(denial.named for denial in result.denials[:10])
    more = f"; and {len(result.denials) - 10} more" if len(result.denials) > 10 else ""
    error = RunError(
        f"the agent CLI refused {plural(len(result.denials), 'tool call')} (its permission "
        f"rules or a hook), so the checks cannot say whether the configuration held: "
        f"denied {calls}{more}\n  hint: eval_agent_args decides what the agent may do; a "
        "case that tests a refusal grades it with tool_blocked / tool_not_blocked "
        '(docs/agents.md, "Refused tool calls")',
        kind=DENIED,
    )
    error.denials = tuple(denial.named for denial in result.denials)
    return error


#: Errors that another attempt cannot mend: a run that changed the repository (the next
#: attempt would start from the changed tree and might pass), and an account that cannot
#: log in or pay, which seconds later still cannot (docs/agents.md, "Failures and errors").
#: A replay that diverged, or had nothing to replay, would do the same again. A refused
#: tool call is the configuration's: another attempt that happens not to make it would
#: hide it. Nor is an API that could not be reached: the retry would not be started
#: (docs/agents.md, "Failing fast").
NOT_RETRIED = frozenset(
    {ESCAPED, DENIED, "authentication", "billing", "replay-diverged", "replay-missing", NO_USAGE}
)


def _watch(ctx: RunContext) -> containment.TreeState | None:
    """Without a sandbox, the repository's working tree before the run. A repository
    that git read at the session's start and cannot read now (an earlier run broke it)
    leaves the run unwatched: it is an ``escaped-workspace`` error, not run."""
    if ctx.sandbox.contained or ctx.repository is None:
        return None
    state = containment.tree_state(ctx.repository)
    if state is None:
        raise RunError(
            f"git cannot read the repository ({ctx.repository}) any more, so what the run "
            "would change there cannot be seen (did an earlier run change it?); runs are "
            "not contained (eval_sandbox = none): see docs/sandbox.md",
            kind=ESCAPED,
        )
    return state


def _check_tree(ctx: RunContext, before: containment.TreeState) -> None:
    """An ``escaped-workspace`` error naming the files of the repository's working tree
    that the run changed (docs/sandbox.md, "Without bubblewrap")."""
    after = containment.tree_state(before.root, since=before)
    if after is None:
        return
    changed = [
        path
        for path in containment.changed_files(before, after, ignore=ctx.session_paths)
        if not _SESSION_NAMES.intersection(path.split("/"))
    ]
    if changed:
        shown = ", ".join(changed[:10]) + (
            f" and {len(changed) - 10} more" if len(changed) > 10 else ""
        )
        raise RunError(
            f"the run changed the repository outside its workspace ({before.root}): {shown}; "
            "runs are not contained (eval_sandbox = none): see docs/sandbox.md",
            kind=ESCAPED,
        )


#: Directories that pytest itself writes in the repository during a session.
_SESSION_NAMES = frozenset({"__pycache__", ".pytest_cache"})


@contextmanager
def agent_home(
    agent: Agent, env: Mapping[str, str], mode: AgentHome
) -> Iterator[tuple[dict[str, str], tuple[Path, ...]]]:
    """The environment variables that give ``agent`` a fresh home of its own for one run
    (none with ``inherit``, or for an agent without an ``isolate`` method), and the
    paths of the home the agent writes to (in a sandbox they are writable). The home
    holds copies of credentials: it goes when the run ends, whatever its outcome."""
    isolate = getattr(agent, "isolate", None)
    if mode == "inherit" or isolate is None:
        own = getattr(agent, "home_paths", None)
        yield {}, tuple(own(env)) if own is not None else ()
        return
    root = _new_home()
    try:
        try:
            variables = dict(isolate(root, env))
        except OSError as exc:
            raise SetupError(f"could not make the agent's home in {root}: {exc}") from None
        yield variables, (root,)
    finally:
        shutil.rmtree(root, ignore_errors=True)


#: Seconds after which a home left behind (its run was killed) is removed.
STALE_HOME_SECONDS = 24 * 3600


def _new_home() -> Path:
    """A new, private directory for one agent home: below the user's cache directory
    (``$XDG_CACHE_HOME/pytest-evalcases/agent-homes``), not the system's temporary one,
    where Codex refuses to set up its own sandbox's helpers. Homes that a killed run
    left behind for a day go. The system's temporary directory when the cache is not
    writable."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parent = cache / "pytest-evalcases" / "agent-homes"
    try:
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _remove_stale(parent)
        return Path(tempfile.mkdtemp(prefix="home-", dir=parent))
    except OSError:
        return Path(tempfile.mkdtemp(prefix="evalcases-home-"))


def _remove_stale(parent: Path) -> None:
    old = time.time() - STALE_HOME_SECONDS
    for entry in os.scandir(parent):
        try:
            if entry.stat(follow_symlinks=False).st_mtime < old:
                shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue


def _grade_directory(case: LoadedCase, variant: Variant, ctx: RunContext) -> RunReport:
    assert variant.graded_dir is not None
    workspace = graded_workspace(variant.graded_dir, case.id, ctx.case_ids)
    output = _graded_output(workspace)
    env = case_env(ctx.base_env, case, variant, workspace)
    agent = AgentResult(text=output) if output is not None else None
    checks = _evaluate(case, ctx, workspace, agent, env, True)
    return RunReport(checks=checks, agent=agent, workspace=workspace)


def graded_workspace(graded: Path, case_id: str, case_ids: frozenset[str]) -> Path:
    """Where case ``case_id`` is graded in the graded directory ``graded``: in
    ``graded/<case-id>/`` when ``graded`` holds per-case directories (a subdirectory
    named like one of ``case_ids``, or like ``case_id``), else in ``graded`` itself
    (docs/agents.md, "No agent: grading existing directories"). A case without its
    directory beside those of others is an error, never graded against ``graded``."""
    if not graded.is_dir():
        raise RunError(f"graded directory {graded} does not exist", kind="workspace")
    own = graded / case_id
    if own.is_dir():
        return own
    try:
        names = [entry.name for entry in os.scandir(graded) if entry.is_dir()]
    except OSError as exc:
        raise RunError(
            f"graded directory {graded}: {exc.strerror or exc}", kind="workspace"
        ) from None
    others = sorted(name for name in names if name in case_ids)
    if not others:
        return graded
    shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    raise RunError(
        f"no directory for case {case_id} in {graded}: it holds per-case directories "
        f"({shown}), so each case is graded in its own {graded}/<case-id>/",
        kind="workspace",
    )


def _graded_output(workspace: Path) -> str | None:
    """The graded directory's final answer, ``None`` without one; read as checks read
    files (docs/case-format.md, "Paths, globs and symlinks"): a symlink out of the
    directory is an error, and so is a file that cannot be read."""
    if not os.path.lexists(workspace / OUTPUT_FILE):
        return None
    path = inside(workspace, str(OUTPUT_FILE), "the graded final answer")
    try:
        return read_text(path, str(workspace / OUTPUT_FILE))
    except Unreadable as exc:
        raise RunError(f"the graded final answer {exc}", kind="no-output") from None


def _evaluate(
    case: LoadedCase,
    ctx: RunContext,
    workspace: Path,
    result: AgentResult | None,
    env: Mapping[str, str],
    tool_inputs: bool,
) -> list[CheckRecord]:
    check_ctx = CheckContext(
        workspace=workspace,
        fixture=case.fixture,
        output=result.text if result is not None else None,
        tool_calls=result.tool_calls if result is not None else None,
        env=env,
        tool_inputs=tool_inputs,
        sandbox=ctx.sandbox,
        agent=ctx.agent.name if ctx.agent is not None else None,
        denials=result.denials if result is not None else None,
    )
    return [ctx.registry.evaluate(i, check, check_ctx) for i, check in enumerate(case.checks)]
