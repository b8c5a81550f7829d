"""The end of a run on the controller: pins, the baseline comparison, the results file.

Called once from the plugin's ``pytest_sessionfinish``, after every record arrived
(under xdist they travel from the workers on the reports). Plain Python over the
session object.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from pytest_evalcases import defaults
from pytest_evalcases.agents.base import RunRequest
from pytest_evalcases.errors import EvalcasesError
from pytest_evalcases.results import baseline
from pytest_evalcases.results import files as resultsfile
from pytest_evalcases.session import pins
from pytest_evalcases.session.state import EvalSession


def finish(state: EvalSession, invocation_dir: Path) -> None:
    """Compare with the baseline and write the results file, when eval items ran.

    Sets ``state.baseline_result`` (which the verdict then follows) and
    ``state.results_line`` (what the summary says about the file).
    """
    records = state.records
    if not resultsfile.executed(records):
        return
    settings = state.settings
    options = settings.results
    inputs = pins.PinInputs(
        agent_name=settings.agent.name if settings.agent else None,
        agent_program=_program(state),
        # The arguments the agent ran with: the driver's default permissions included.
        agent_args=tuple(
            getattr(state.agent, "args", settings.agent.args if settings.agent else ())
        ),
        config_root=settings.config_root or settings.rootdir,
        config_patterns=options.config_patterns,
        variants=settings.variants,
        case_files=tuple(_absolute(invocation_dir, r.file) for r in records if r.file),
        fixtures=tuple(Path(r.fixture) for r in records if r.fixture),
        rootdir=settings.rootdir,
        agent_home=settings.agent_home,
    )
    doc = resultsfile.document(
        records,
        settings.min_pass_rate,
        started=state.started,
        finished=datetime.now(timezone.utc),
        complete=not state.incomplete,
        incomplete_reasons=state.incomplete,
        pins=pins.collect(inputs, records),
        sources={v.name: v.source for v in settings.variants},
        shard=options.shard,
        order=[v.name for v in settings.variants],
        mode="red-first" if settings.red_first else "run",
    )
    if state.baseline_doc is not None and options.baseline is not None:
        state.baseline_result = baseline.check(
            state.baseline_doc, doc, options.tolerance, label=_display(options.baseline)
        )
        verdict = state.report().verdict
        doc = doc.with_changes(
            verdict=verdict.status,
            verdict_reason=verdict.reason,
            baseline=state.baseline_result.to_dict(),
        )
    if not options.save:
        return
    if options.save_path is not None:
        target, replace = options.save_path, True
    else:
        directory = options.results_dir or settings.rootdir / defaults.RESULTS_DIR
        target, replace = directory / f"{resultsfile.file_stem(state.started)}.json", False
    try:
        written = resultsfile.write(doc, target, replace=replace)
    except (OSError, EvalcasesError) as exc:
        state.results_line = f"results file not written: {target}: {exc}"
        return
    status = "" if doc.complete else " (incomplete: " + "; ".join(state.incomplete) + ")"
    state.results_line = f"results: {_display(written)}{status}"


def _agent_args(state: EvalSession) -> tuple[str, ...]:
    """The arguments the agent ran with, the driver's default permissions included."""
    given = state.settings.agent.args if state.settings.agent else ()
    return tuple(getattr(state.agent, "args", given))


def _program(state: EvalSession) -> str | None:
    """The agent CLI to ask for ``--version``: the first word of its command line,
    except for the command agent (its first word is usually an interpreter)."""
    agent = state.agent
    if agent is None or agent.name == "command":
        return None
    request = RunRequest(
        prompt="version", workspace=state.settings.rootdir, bare=True, timeout=1.0, env={}
    )
    try:
        return agent.invocation(request).argv[0]
    except Exception:  # a third-party driver: no version rather than no results
        return None


def _absolute(base: Path, path: str) -> Path:
    return Path(path) if os.path.isabs(path) else base / path


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
