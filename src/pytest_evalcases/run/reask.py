"""The judge asked again about a stored run, with no agent: what ``evalcases calibrate``
compares with a person's labels (docs/judge.md, "`evalcases calibrate`").

The run's workspace is rebuilt as ``--eval-regrade`` rebuilds it (a fresh copy of the
case's fixture, the changes the run left laid over it: :mod:`pytest_evalcases.run.regrade`),
its final answer is the stored one, and the judge check of the case file as it is now is
asked, as a live run asks it (:class:`~pytest_evalcases.run.judge.Judging`: the same
prompt, a read-only copy in the sandbox, the check's ``script:`` when it has one).
Plain Python, no pytest.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_evalcases import defaults
from pytest_evalcases.agents.base import Agent
from pytest_evalcases.cases.discovery import Discovery
from pytest_evalcases.cases.loading import LoadedCase, load_case_file, load_task_dir
from pytest_evalcases.cases.registry import CheckContext, CheckRegistry, check_id
from pytest_evalcases.cases.schema import Judge
from pytest_evalcases.errors import CaseFileError, RunError
from pytest_evalcases.kinds import AgentHome
from pytest_evalcases.recording.recorded import RecordedRun, RecordedSession
from pytest_evalcases.results.record import JudgeRecord
from pytest_evalcases.run import artifacts
from pytest_evalcases.run.changes import CorruptRecording
from pytest_evalcases.run.judge import JudgeSetup, Judging
from pytest_evalcases.run.runner import case_env
from pytest_evalcases.run.workspace import Variant, populate
from pytest_evalcases.sandbox import Sandbox

if TYPE_CHECKING:
    from pytest_evalcases.recording.recorder import Recorder


@dataclass(frozen=True)
class Reasking:
    """Who is asked, where, and what finds the labelled runs' cases."""

    #: The project's rootdir: a run's node id names its case file relative to it.
    rootdir: Path
    #: The configured judge (``eval_judge_agent``, ``eval_judge_model``); ``None``: none
    #: configured, and only a check's ``script:`` answers.
    judge: Agent | None
    registry: CheckRegistry
    sandbox: Sandbox = field(default_factory=Sandbox)
    env: Mapping[str, str] = field(default_factory=dict)
    home: AgentHome = defaults.AGENT_HOME
    #: Records each judge's exchange with its model (``<name>.judge-<check>``); ``None``:
    #: nothing recorded.
    recorder: Recorder | None = None


def reask(session: RecordedSession, run: str, check: str, how: Reasking, name: str) -> JudgeRecord:
    """The judge's answer now on ``run`` (a node id of ``session``) to the question of
    judge check ``check``; a :class:`RunError` says why there is none (no such run or
    check, nothing stored, the judge failed or answered out of format). ``name`` is the
    run's name for the recording of the judge's exchange."""
    found = _run(session, run)
    record = found.record
    if record.variant:
        raise RunError(
            f"{run} ran configuration variant {record.variant!r}, whose overlays are not "
            "rebuilt here (use --stored)",
            kind="judge",
        )
    if record.perturbation:
        raise RunError(
            f"{run} ran perturbation {record.perturbation}, whose prompt is not rebuilt "
            "here (use --stored)",
            kind="judge",
        )
    case = _case(how, found)
    judge_check = _check(case, check)
    if found.directory is None:
        raise RunError(f"{session.path}: {run} was not recorded (recording: null)", kind="judge")
    try:
        stored = artifacts.load(found.directory)
    except CorruptRecording as exc:
        raise RunError(f"stored run unreadable: {exc}", kind="judge") from None
    if stored is None or stored.result is None:
        raise RunError(f"{found.directory}: no stored answer to judge", kind="judge")
    if stored.error is not None:
        raise RunError(f"{run} ended in an error: {stored.error[1]}", kind="judge")
    root = Path(tempfile.mkdtemp(prefix="evalcases-calibrate-"))
    try:
        workspace = root / "workspace"
        workspace.mkdir()
        try:
            populate(workspace, case.fixture)
            artifacts.restore(stored, workspace)
        except CorruptRecording as exc:
            raise RunError(f"stored run unreadable: {exc}", kind="judge") from None
        env = case_env(how.env, case, Variant(), workspace)
        judging = Judging(
            case,
            JudgeSetup(agent=how.judge, reask=True),
            None,
            stored.agent,
            repetition=record.repetition,
            sandbox=how.sandbox,
            env=env,
            home=how.home,
            recorder=how.recorder,
            name=name,
        )
        context = CheckContext(
            workspace=workspace,
            fixture=case.fixture,
            output=stored.result.text,
            tool_calls=stored.result.tool_calls,
            env=env,
            sandbox=how.sandbox,
            agent=stored.agent,
        )
        judging(judge_check, context)
        return judging.judgements[check]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run(session: RecordedSession, run: str) -> RecordedRun:
    for found in session.runs.values():
        if (found.record.nodeid or found.record.case_id) == run:
            return found
    raise RunError(f"{session.path} has no run {run}", kind="judge")


def _case(how: Reasking, found: RecordedRun) -> LoadedCase:
    """The run's case, loaded from its case file as it is now."""
    record = found.record
    named = (found.record.nodeid or "").partition("::")[0]
    candidates = [how.rootdir / named] if named else []
    candidates.append(how.rootdir / record.file)
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise RunError(f"the case file of {record.case_id} is gone: {record.file}", kind="judge")
    try:
        if path.name == "checks.yaml":
            cases = [load_task_dir(path, how.registry)]
        else:
            evals_root = Discovery(how.rootdir).evals_root(path.resolve()) or path.parent
            cases = load_case_file(path, evals_root, how.registry)
    except CaseFileError as exc:
        raise RunError(f"case file error: {exc}", kind="judge") from None
    for case in cases:
        if case.id == record.case_id:
            return case
    raise RunError(f"{path} no longer holds case {record.case_id}", kind="judge")


def _check(case: LoadedCase, check: str) -> Judge:
    for index, one in enumerate(case.checks):
        if isinstance(one, Judge) and check_id(one, index) == check:
            return one
    raise RunError(f"case {case.id} has no judge check {check!r} now", kind="judge")
