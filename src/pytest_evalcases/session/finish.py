"""The end of a run on the controller: pins, the baseline comparison, the results file.

Called once from the plugin's ``pytest_sessionfinish``, after every record arrived
(under xdist they travel from the workers on the reports). Plain Python over the
session object.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_evalcases.agents import preflight
from pytest_evalcases.agents.base import Agent
from pytest_evalcases.errors import EvalcasesError, UsageError
from pytest_evalcases.results import baseline, override
from pytest_evalcases.results import writer as resultsfile
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.gitignore import ignore_hint
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.session import ci, pins
from pytest_evalcases.session.state import EvalSession, relative_path


def finish(state: EvalSession, invocation_dir: Path) -> None:
    """Compare with the baseline and write the results file, when eval items ran (or
    began, in a run that did not finish).

    Sets ``state.baseline_result``, decides the gate (:meth:`EvalSession.report`) and
    sets ``state.results_line`` (what the summary says about the file).
    """
    records = state.records
    if not resultsfile.executed(records) and not (state.cases_started and state.incomplete):
        # An interrupted run writes its file, also when its first case was cut short.
        return
    settings = state.settings
    options = settings.results
    inputs = pins.PinInputs(
        # The baseline's agent (the first variant's that runs one); each variant's
        # own is in the pins' `variants`.
        agent_name=_agent_name(state),
        agent_version=_version(state),
        agent_args=_agent_args(state),
        config_root=settings.config_root or settings.rootdir,
        config_patterns=options.config_patterns,
        variants=settings.variants,
        case_files=tuple(_absolute(invocation_dir, r.file) for r in records if r.file),
        fixtures=tuple(Path(r.fixture) for r in records if r.fixture),
        rootdir=settings.rootdir,
        agent_home=settings.agent_home,
        sandbox=_sandbox(state),
        variant_agents=_variant_agents(state),
        perturbation=settings.perturb.pins() if settings.perturb is not None else None,
        machine_config=tuple(f for files in state.machine_config().values() for f in files),
        recordings=settings.record.root if settings.record is not None else None,
    )
    collected = pins.collect(inputs, records)
    complete = not state.incomplete
    if state.baseline_doc is not None and options.baseline is not None and not settings.red_first:
        state.baseline_result = baseline.check_run(
            state.baseline_doc,
            records,
            whole=resultsfile.complete_suite(complete, state.selection, options.shard),
            pins=collected,
            tolerance=options.tolerance,
            label=_display(options.baseline),
        )
    doc = resultsfile.document(
        # The gate decides once, here, for the file, the summary and the exit status.
        state.report(),
        started=state.started,
        finished=datetime.now(timezone.utc),
        complete=complete,
        incomplete_reasons=state.incomplete,
        pins=collected,
        sources={v.name: v.source for v in settings.variants},
        shard=options.shard,
        selection=state.selection,
        overrider=override.author(settings.rootdir, os.environ) if settings.override else None,
    )
    target = settings.results_file(state.started)
    if target is None:
        return
    # --eval-save names the file: an earlier run's is replaced.
    replace = options.save_path is not None
    if settings.regrade is not None:
        doc = doc.with_changes(regraded_from=relative_path(settings.regrade.path, target.parent))
    try:
        written = resultsfile.write(doc, target, replace=replace, redact=state.redact)
    except (OSError, EvalcasesError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        state.unsaved = f"results file not written: {_display(target)}: {why}"
        state.results_line = state.unsaved
        _forget_recordings(state)
        return
    state.results_file = written
    state.results_line = f"results: {_display(written)}{_status(doc)}"
    state.workflow_commands = ci.github_actions(
        written, os.environ, invocation_dir, settings.rootdir
    )
    if options.save_path is None:
        # Once per session: the directory fills the working tree run after run.
        hint = ignore_hint(written.parent, Path.cwd())
        if hint:
            state.results_line += "\n" + hint


def _forget_recordings(state: EvalSession) -> None:
    """Remove what this session stored beside a results file it could not write: its
    runs' directories in ``<stem>.runs/``, then that directory when nothing else is in
    it (an earlier run's, for a replaced ``--eval-save`` file, stays). No run of it can
    be read back without its results file (docs/results.md, "The results file")."""
    place = state.settings.record
    if place is None:
        return
    for stored in _stored(state.records):
        run = place.root / stored
        if run.parent == place.directory and not run.is_symlink():
            shutil.rmtree(run, ignore_errors=True)
    try:
        for left in place.directory.iterdir():
            if left.is_dir() and not left.is_symlink() and not any(left.iterdir()):
                left.rmdir()
        place.directory.rmdir()
    except OSError:
        pass


def _stored(records: Iterable[RunRecord]) -> Iterator[str]:
    """What the runs stored beside the results file: each run's directory and its
    judge's (docs/judge.md)."""
    for record in records:
        if record.recording:
            yield record.recording
        for check in record.checks:
            if check.judge is not None and check.judge.recording:
                yield check.judge.recording


def sweep_recordings(state: EvalSession) -> None:
    """Remove the recordings beside the results file that it does not list: runs whose
    reports never reached the controller (an interrupted xdist run: the workers went on
    with the items they held), or that were cut short before their item reported. The
    results file is the index of its ``.runs`` directory (docs/replay.md). Called once
    every worker and every run started ahead has stopped."""
    place = state.settings.record
    if place is None or state.results_file is None or not place.directory.is_dir():
        return
    listed = set(_stored(state.records))
    for run in place.directory.iterdir():
        if run.relative_to(place.root).as_posix() in listed:
            continue
        if run.is_dir() and not run.is_symlink():
            shutil.rmtree(run, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                run.unlink()


def _status(doc: ResultsDocument) -> str:
    """`` (incomplete: interrupted)``, `` (part of the suite: 3 of 10 cases selected
    (-m critical))``, or nothing for a whole suite run to its end."""
    if not doc.complete:
        return " (incomplete: " + "; ".join(doc.incomplete_reasons) + ")"
    if doc.selection is not None and not doc.selection.whole:
        return f" (part of the suite: {doc.selection.describe()})"
    return ""


def _agent_args(state: EvalSession) -> tuple[str, ...]:
    """The arguments the agent ran with, the driver's default permissions included."""
    if state.agent is not None:
        return state.agent.args
    return state.settings.agent.args if state.settings.agent else ()


def _agent_name(state: EvalSession) -> str | None:
    if state.agent is not None:
        return state.agent.name
    return state.settings.agent.name if state.settings.agent else None


def _variant_agents(state: EvalSession) -> dict[str, dict[str, Any]]:
    """Each variant's agent for the pins, where the variants differ in more than their
    configuration (docs/variants.md); empty when they all run the session's agent."""
    if all(a is state.agent for a in state.agents.values()):
        return {}
    found: dict[str, dict[str, Any]] = {}
    versions: dict[int, str | None] = {}
    for variant in state.settings.variants:
        agent = state.agents.get(variant.name)
        given = state.settings.agents.get(variant.name)
        if agent is None or given is None:
            continue
        if id(agent) not in versions:
            versions[id(agent)] = _version(state, variant.name, agent)
        found[variant.name] = {
            "agent": given.name,
            "agent_version": versions[id(agent)],
            "model": given.model,
            "args": list(agent.args),
        }
    return found


def _version(
    state: EvalSession, variant: str | None = None, agent: Agent | None = None
) -> str | None:
    """The agent's version as the preflight read it (of ``variant``'s agent, else the
    session's); asked now when no preflight ran (graded directories need no agent),
    except where ``--version`` says nothing."""
    checked = state.preflights.get(variant) if variant is not None else state.preflight
    if checked is not None:
        return checked.version
    agent = agent if agent is not None else state.agent
    if agent is None:
        return None
    found = agent.requirements
    if found is not None and not found.version:
        return None
    program = preflight.program_of(agent, state.settings.rootdir)
    if program is None:
        return None
    return preflight.read_version(
        program, os.environ, state.settings.rootdir, preflight.VERSION_TIMEOUT
    )


def _absolute(base: Path, path: str) -> Path:
    return Path(path) if os.path.isabs(path) else base / path


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def _sandbox(state: EvalSession) -> str | None:
    """The sandbox the runs had, for the pins; ``None`` without an agent."""
    if state.agent is None:
        return None
    try:
        return state.sandbox.describe()
    except UsageError:
        return None
