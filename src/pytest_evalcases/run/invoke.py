"""Invoking the agent for one run: the workspace populated, the case's ``setup``, the
agent's home, the agent itself (through the recording proxy when the run is recorded
or replayed, or a check reads what the CLI sent its model), and what the run stored.
All of a live run but the checks (:mod:`pytest_evalcases.run.grading`). Plain Python,
no pytest."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_evalcases import defaults, process
from pytest_evalcases.agents import atif
from pytest_evalcases.agents.base import (
    TIMEOUT_HINT,
    Agent,
    AgentResult,
    ModelRequest,
    RunRequest,
)
from pytest_evalcases.agents.requirements import scripted_env
from pytest_evalcases.cases.loading import LoadedCase
from pytest_evalcases.cases.scripting import SCRIPTED_AGENTS
from pytest_evalcases.errors import RunError
from pytest_evalcases.kinds import Replayed, error_kind
from pytest_evalcases.recording.script import Script, Turn
from pytest_evalcases.run import trajectory
from pytest_evalcases.run.agenthome import agent_home
from pytest_evalcases.run.conversation import cannot_continue, cannot_show, converse
from pytest_evalcases.run.failfast import NotStarted, Unreachable, identity
from pytest_evalcases.run.keep import repetition_of
from pytest_evalcases.run.mcp import mcp_run
from pytest_evalcases.run.repository import watch
from pytest_evalcases.run.runner import AgentRun, OuterLimit, RunContext, case_env
from pytest_evalcases.run.workspace import EntryState, Variant, populate, run_setup, snapshot

if TYPE_CHECKING:
    # The proxy's modules (http.server, http.client) load with the first recorded run.
    from pytest_evalcases.recording.channel import Channel
    from pytest_evalcases.recording.recorder import Recorder
    from pytest_evalcases.recording.replay import Replay
    from pytest_evalcases.recording.source import ReplaySource


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
    but the checks. Thread-safe: the scheduler runs it in threads of its own. A run
    that ends in a :class:`RunError` returns it in the :class:`AgentRun`, with what
    was recorded of it.

    With a recorder in ``ctx`` and ``record_as`` (the run's name beside the results
    file), an agent that talks HTTP to its model API goes through the recording proxy,
    and its exchange is stored under that name (docs/replay.md, "Recording"). So does
    the run of a case whose checks read what the CLI sent its model, recorded or not:
    its :attr:`AgentRun.requests` are what the proxy saw.

    After an earlier run of the same agent and credentials ended in an authentication
    error or found its API unreachable, nothing is started: :class:`NotStarted`
    (docs/agents.md, "Failing fast"); a scripted run starts all the same."""
    began = time.monotonic()
    # A scripted run uses no credential of the operator's: a refused or unreachable API
    # stops it not, and its failures stop no live run (docs/config-contract.md).
    live = case.script is None
    key = identity(ctx.agent, ctx.base_env) if ctx.agent is not None and live else None
    if ctx.agent is not None and key is not None:
        try:
            ctx.stops.check(key, ctx.agent.name)
        except NotStarted as exc:
            # Nothing was put in the workspace yet: nothing to keep.
            with contextlib.suppress(OSError):
                workspace.rmdir()
            return AgentRun(workspace, error=exc, began=began)
    try:
        ran = _run_agent(case, variant, ctx, workspace, began, limit, record_as)
    except RunError as exc:
        ran = AgentRun(workspace, error=exc, began=began)
    if ran.error is not None and key is not None:
        ctx.stops.record(key, ran.error)
    return ran


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
    refused = cannot_continue(ctx.agent) if case.follow_ups else None
    if refused is not None:
        raise refused
    env = case_env(ctx.base_env, case, variant, workspace)
    script = None
    if case.script is not None:
        env, script = _scripted(case, ctx, env)
    # Before anything runs; a case with `mcp:` on an agent that takes no servers is an
    # error that mcp_run words more exactly.
    if not (case.mcp and ctx.agent.mcp_config is None):
        refused = cannot_show(ctx.agent, case.transcript_checks)
        if refused is not None:
            raise refused
    populate(workspace, case.fixture, variant.overlays)
    watched = watch(ctx)
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
    with (
        agent_home(ctx.agent, env, ctx.agent_home) as (home_env, home_paths),
        mcp_run(case, ctx.agent, ctx.agent_home, home_env) as servers,
        _trajectory_place(workspace, ctx.agent.trajectory) as written,
    ):
        request = RunRequest(
            prompt=case.prompt,
            workspace=workspace,
            bare=case.bare,
            timeout=timeout,
            timeout_hint=hint,
            env={**env, **home_env},
            needs_transcript=case.needs_transcript or ctx.transcript,
            hook_events=case.needs_hook_events,
            scripted=script is not None,
            sandbox=ctx.sandbox,
            writable=(*home_paths, *servers.writable, *written),
            mcp_servers=servers.servers,
            trajectory=written[0] / atif.TRAJECTORY_FILE if written else None,
        )
        outcome: AgentResult | RunError
        recording: str | None = None
        replayed: Replayed | None = None
        requests: tuple[ModelRequest, ...] | None = None
        try:
            outcome, recording, replayed, requests = _run_recorded(
                ctx, request, case, variant, record_as, script, servers.begin
            )
        except RunError as exc:
            outcome = exc
        if isinstance(outcome, AgentResult):
            outcome = servers.attach(outcome)
    result = outcome if isinstance(outcome, AgentResult) else None
    error = outcome if isinstance(outcome, RunError) else None
    if storing and record_as is not None:
        stored = _store_run(
            ctx, case, variant, record_as, workspace, populated, started, result, error
        )
        recording = recording or stored
    return AgentRun(
        workspace=workspace,
        result=result,
        error=error,
        env=env,
        started=started,
        watch=watched,
        began=began,
        recording=recording,
        replayed=replayed,
        requests=requests,
        variant=variant.name,
        repetition=repetition_of(record_as, case.id, variant.name) if record_as else 0,
        name=record_as,
    )


@contextlib.contextmanager
def _trajectory_place(workspace: Path, wanted: bool) -> Iterator[tuple[Path, ...]]:
    """A directory beside ``workspace`` for an agent that writes its trajectory
    (docs/trajectories.md), removed when the run ends; none when not ``wanted``."""
    if not wanted:
        yield ()
        return
    place = workspace.parent / f"{workspace.name}.trajectory"
    place.mkdir(exist_ok=True)
    try:
        yield (place,)
    finally:
        shutil.rmtree(place, ignore_errors=True)


def _run_recorded(
    ctx: RunContext,
    request: RunRequest,
    case: LoadedCase,
    variant: Variant,
    record_as: str | None,
    script: Script | None = None,
    begin: Callable[[int], None] | None = None,
) -> tuple[AgentResult | RunError, str | None, Replayed | None, tuple[ModelRequest, ...] | None]:
    """Run the agent, through the recording proxy when the run is recorded, replayed or
    scripted, or its case reads what the CLI sent its model: the CLI's base URL points
    at the run's path on the proxy, which forwards to the API the environment named, or
    answers from the run's recording (docs/replay.md) or from the case's script
    (docs/config-contract.md). What the agent produced or the error that ended it, with
    the exchange's recording, stored when the agent ends, also when it failed, and the
    requests the case's checks read (``None`` when they are not known: the run did not
    go through the proxy)."""
    assert ctx.agent is not None
    recorder = ctx.recorder
    # A scripted run replays nothing: its script is its answers, every time.
    source = ctx.replay if script is None else None
    recorded = record_as is not None and (
        source is not None or (recorder is not None and recorder.place is not None)
    )
    proxied = recorder is not None and (recorded or case.reads_requests or script is not None)
    api = ctx.agent.model_api(request.env) if proxied else None
    replay = None
    if source is not None and record_as is not None:
        replay = _replay_for(source, request, case, variant, record_as, api is not None)
    if recorder is None or api is None:
        if script is not None:
            raise RunError(
                f"agent {ctx.agent.name!r}: the scripted model answers through the plugin's "
                "own proxy, which this run has none of",
                kind="case",
            )
        return converse(ctx.agent, request, case.follow_ups, begin), None, None, None
    reuse = source is not None and source.mode == "reuse"
    with recorder.channel(
        api.upstream, request.env, replay=replay, reuse=reuse, script=script
    ) as channel:
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
        ended = _run_watched(ctx.agent, request, channel, case.follow_ups, begin)
        replayed = None
        if source is not None:
            from pytest_evalcases.recording.replay import outcome

            replayed = outcome(replay, channel.diverged is not None, reuse)
        stored = None
        if recorded and record_as is not None:
            stored = _store(recorder, channel, record_as, header)
        requests = channel.requests() if case.reads_requests else None
        if channel.diverged is not None and not reuse:
            # Whatever the CLI made of the refusal, the run ended there.
            ended = RunError(channel.diverged.message, kind="replay-diverged")
        return ended, stored, replayed, requests


def _scripted(
    case: LoadedCase, ctx: RunContext, env: dict[str, str]
) -> tuple[dict[str, str], Script]:
    """The environment of a run the scripted model answers, and its script: none of
    the operator's credentials, the driver's stand-ins instead (docs/config-contract.md,
    "The scripted model"). A case whose agent's model the plugin cannot play is an
    error naming the agent, before anything runs."""
    agent = ctx.agent
    assert agent is not None
    assert case.script is not None
    credentials = agent.requirements.credentials if agent.requirements is not None else None
    scripted = (
        scripted_env(credentials, env, own_home=ctx.agent_home != "inherit" and agent.has_home)
        if credentials is not None and credentials.scripted
        else None
    )
    api = agent.model_api(scripted) if scripted is not None else None
    if scripted is None or api is None:
        raise RunError(
            f"{case.file}:{case.line + 1}: `script:` plays the model of "
            f"{', '.join(SCRIPTED_AGENTS)} only, over HTTP, and this run's agent is "
            f"{agent.name!r}",
            kind="case",
        )
    turns = tuple(
        Turn(
            shell=t.shell,
            tool=t.tool,
            input=dict(t.input or {}),
            text=t.text,
            mcp=(t.mcp.server, t.mcp.tool) if t.mcp is not None else None,
        )
        for t in case.script
    )
    return scripted, Script(api.dialect, turns)


def _run_watched(
    agent: Agent,
    request: RunRequest,
    channel: Channel,
    follow_ups: tuple[str, ...],
    begin: Callable[[int], None] | None = None,
) -> AgentResult | RunError:
    """Run the agent through ``channel``, each turn of its conversation on the same
    channel, which is told where each begins: what it produced, or the error that
    ended it.
    An upstream failure the proxy sees (credentials refused, API unreachable) ends the
    CLI at once and is the run's error, in the API's words; a timeout quotes the API's
    last error, when there was one (docs/agents.md, "Failing fast")."""
    outcome: AgentResult | RunError | None = None
    with process.cancellable() as token:
        channel.on_failure(lambda failure: token.cancel())
        try:
            outcome = converse(agent, request, follow_ups, _both(channel.begin_turn, begin))
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
        made = Unreachable if failure.kind == "server" else RunError
        return made(f"agent {agent.name!r}: {failure.message}", kind=error_kind(failure.kind))
    assert outcome is not None
    if isinstance(outcome, RunError) and outcome.kind == "timeout":
        last = channel.last_error()
        if last:
            outcome = outcome.reworded(f"{outcome}\nthe model API's last error: {last}")
    return outcome


def _both(
    first: Callable[[int], None], then: Callable[[int], None] | None
) -> Callable[[int], None]:
    """``first`` and then ``then`` (when there is one), told the same turn."""
    if then is None:
        return first

    def told(turn: int) -> None:
        first(turn)
        then(turn)

    return told


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
    from pytest_evalcases.recording.normalise import Places
    from pytest_evalcases.recording.replay import Replay

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
    agent = ctx.agent
    assert agent is not None
    place = recorder.place
    directory = place.directory / name
    header = {"run": name, "case": case.id, "variant": variant.name, "agent": agent.name}

    def write() -> None:
        artifacts.store(
            directory,
            workspace,
            populated,
            started,
            header,
            None if error is not None else result,
            (error.kind, str(error)) if error is not None else None,
            tool_inputs=agent.tool_inputs,
            redact=recorder.redact,
            mode=recorder.mode,
            about=trajectory.About(
                name,
                case.id,
                variant.name,
                agent.name,
                ctx.agent_version,
                (case.prompt or "", *case.follow_ups),
            ),
        )

    if not artifacts.store_quietly(directory, name, write):
        return None
    return directory.relative_to(place.root).as_posix()


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
