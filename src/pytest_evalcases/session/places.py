"""Where a session writes what outlives it, and which stored session it reads: its
kept workspaces (docs/agents.md, "Kept workspaces"), its recordings, and the results
file ``--eval-regrade``, ``--eval-replay`` or ``--eval-reuse`` read (docs/replay.md).

The controller decides them once; its xdist workers take them as it decided
(:class:`WorkerInput`): the results file is named after the controller's start, and the
newest results file may change while the session runs.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_evalcases.errors import UsageError
from pytest_evalcases.recording.format import SUFFIX as RECORDING_SUFFIX
from pytest_evalcases.recording.format import RecordPlace
from pytest_evalcases.results import writer as resultsfile
from pytest_evalcases.results.reader import ResultsFileError
from pytest_evalcases.run import keep
from pytest_evalcases.run.keep import KeepPlace
from pytest_evalcases.session.given import Given, number

if TYPE_CHECKING:
    from pytest_evalcases.recording.recorded import RecordedSession
    from pytest_evalcases.recording.source import ReplayPlan

#: The options that run the agent against a recording: never with ``--eval-regrade``,
#: which runs none (docs/replay.md).
REPLAY_OPTIONS = {"eval_replay": "--eval-replay", "eval_reuse": "--eval-reuse"}


@dataclass(frozen=True)
class WorkerInput:
    """Where to keep workspaces and to record, and what to regrade or replay: decided
    once by the controller (:func:`decide`), and handed as it is to each xdist worker,
    across the process boundary as one JSON text (:meth:`to_json`)."""

    keep: KeepPlace | None = None
    record: RecordPlace | None = None
    #: ``--eval-regrade``'s results file.
    regrade: Path | None = None
    replay: ReplayPlan | None = None
    #: The file in which the controller keeps ``--eval-budget``'s account, which each
    #: worker reads before starting a run (docs/budget.md); ``None`` without a budget.
    spend_file: Path | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=str)

    @classmethod
    def from_json(cls, text: str) -> WorkerInput:
        data: dict[str, Any] = json.loads(text)
        keep, record, regrade, replay = (data[k] for k in ("keep", "record", "regrade", "replay"))
        spend_file = data.get("spend_file")
        plan: ReplayPlan | None = None
        if replay is not None:
            from pytest_evalcases.recording.source import ReplayPlan

            plan = ReplayPlan(**_paths(replay))
        return cls(
            keep=KeepPlace(**_paths(keep)) if keep is not None else None,
            record=RecordPlace(**_paths(record)) if record is not None else None,
            regrade=Path(regrade) if regrade is not None else None,
            replay=plan,
            spend_file=Path(spend_file) if spend_file is not None else None,
        )


#: The fields of the places that are paths (JSON has them as text).
_PATH_FIELDS = frozenset({"root", "directory", "results"})


def _paths(values: dict[str, Any]) -> dict[str, Any]:
    return {k: Path(v) if k in _PATH_FIELDS else v for k, v in values.items()}


def decide(
    given: Given, results: resultsfile.ResultsSettings, results_dir: Path, started: datetime
) -> WorkerInput:
    """The places of a session that started at ``started``, with ``results`` written
    to ``results_dir``; :class:`UsageError` names a bad option."""
    regrade = regrade_file(given, results_dir)
    written = results_file(results, results_dir, started)
    replaces = written is not None and written == results.save_path
    kept = keep_place(given, written, replaces=replaces, started=started)
    record = record_place(given, written, regrade=regrade is not None)
    return WorkerInput(
        keep=kept, record=record, regrade=regrade, replay=replay_plan(given, results_dir, record)
    )


def results_file(
    results: resultsfile.ResultsSettings, results_dir: Path, started: datetime
) -> Path | None:
    """The results file of a session that started at ``started``: ``--eval-save``'s,
    else one named after the start in ``results_dir``; ``None`` with ``--eval-no-save``."""
    if not results.save:
        return None
    return results.save_path or results_dir / f"{resultsfile.file_stem(started)}.json"


def keep_place(
    given: Given, written: Path | None, *, replaces: bool, started: datetime
) -> KeepPlace | None:
    """Where this session keeps the workspaces of its failed and errored runs: in
    ``<stem>.workspaces`` beside its results file ``written``, or below ``--eval-keep``
    / ``eval_keep_dir``. ``None`` leaves them in pytest's temporary directory:
    ``eval_keep_max_mb = 0``, or no results file and no keep directory given."""
    max_mb = number(given, "eval_keep_max_mb")
    if max_mb < 0:
        raise UsageError(f"ini option eval_keep_max_mb expects a number >= 0, got {max_mb:g}")
    if max_mb == 0:
        return None
    option, ini = given.option("eval_keep"), given.ini("eval_keep_dir")
    if option:
        root = given.invocation_dir / option
    elif ini:
        root = given.rootdir / ini
    elif written is None:
        return None
    else:
        root = written.parent
    stem = written.stem if written is not None else resultsfile.file_stem(started)
    return KeepPlace(
        root=root,
        directory=root / f"{stem}{keep.SUFFIX}",
        max_bytes=int(max_mb * keep.MB),
        replaces=replaces,
    )


def record_place(given: Given, written: Path | None, *, regrade: bool) -> RecordPlace | None:
    """Where this session records its live runs: ``<stem>.runs`` beside its results file
    ``written`` (docs/replay.md, "Recording"). ``None`` with ``eval_record = false`` or
    without a results file (``--eval-no-save``)."""
    if not given.ini("eval_record") or written is None or regrade:
        # A regrade runs no agent: its runs name the recordings they were graded from.
        return None
    return RecordPlace(
        root=written.parent, directory=written.parent / f"{written.stem}{RECORDING_SUFFIX}"
    )


def regrade_file(given: Given, results_dir: Path) -> Path | None:
    """``--eval-regrade``'s results file: the one given (relative to the invocation
    directory), else the newest of the results directory; ``None`` without the option."""
    chosen: str | None = given.option("eval_regrade")
    if chosen is None:
        return None
    others = [
        flag for dest, flag in REPLAY_OPTIONS.items() if given.option(dest) not in (None, False)
    ]
    if others:
        raise UsageError(f"--eval-regrade and {' and '.join(others)} cannot be combined")
    if given.option("eval_workspace") or given.ini("eval_workspaces"):
        raise UsageError(
            "--eval-regrade and --eval-workspace (or eval_workspaces) cannot be combined"
        )
    if chosen:
        path = given.invocation_dir / chosen
        if not path.is_file():
            raise UsageError(f"--eval-regrade: no such results file: {path}")
        return path
    from pytest_evalcases.recording.recorded import newest_results_file

    try:
        return newest_results_file(results_dir)
    except ResultsFileError as exc:
        raise UsageError(f"--eval-regrade: {exc}") from None


def regrading(path: Path) -> RecordedSession:
    """The stored runs of ``--eval-regrade``'s results file; a :class:`UsageError`
    names the file when it is not one."""
    from pytest_evalcases.recording.recorded import load_session

    try:
        return load_session(path)
    except ResultsFileError as exc:
        raise UsageError(f"--eval-regrade: {exc}") from None


def replay_plan(given: Given, results_dir: Path, record: RecordPlace | None) -> ReplayPlan | None:
    """What ``--eval-replay`` / ``--eval-reuse`` replay from (docs/replay.md): the
    results file given, else the newest of the results directory, read here once to say
    at the start when it is not one."""
    replay, reuse = given.option("eval_replay"), given.option("eval_reuse")
    # (--eval-regrade with either was refused with the regraded file.)
    if replay is not None and reuse is not None:
        raise UsageError("--eval-replay and --eval-reuse cannot be used together: choose one")
    if replay is None and reuse is None:
        return None
    option = "--eval-replay" if replay is not None else "--eval-reuse"
    if reuse is not None and record is None:
        raise UsageError(
            "--eval-reuse records the runs that go live, and this session records nothing "
            "(--eval-no-save or eval_record = false): use --eval-replay, or record"
        )
    from pytest_evalcases.recording.recorded import load_session, newest_results_file
    from pytest_evalcases.recording.source import ReplayPlan

    chosen = replay if replay is not None else reuse
    try:
        path = given.invocation_dir / chosen if chosen else newest_results_file(results_dir)
        load_session(path)
    except ResultsFileError as exc:
        raise UsageError(f"{option}: {exc}") from None
    return ReplayPlan(mode="replay" if replay is not None else "reuse", results=path)
