"""The recordings a session replays (``--eval-replay``, ``--eval-reuse``; docs/replay.md):
the results file to replay from, and each run's recording in it, found by run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pytest_evalcases.recording.format import RecordingError
from pytest_evalcases.recording.recorded import RecordedSession, load_session
from pytest_evalcases.recording.replay import Recording, read_recording
from pytest_evalcases.results.reader import ResultsFileError

Mode = Literal["replay", "reuse"]


@dataclass(frozen=True)
class ReplayPlan:
    """What ``--eval-replay`` / ``--eval-reuse`` asked for: the mode and the results
    file to replay from."""

    mode: Mode
    results: Path


@dataclass(frozen=True)
class Found:
    """What a run replays: its recording, or why it has none."""

    recording: Recording | None
    missing: str = ""


@dataclass
class ReplaySource:
    """The recordings of the results file a session replays from, found by run. The
    results file is read once, when the first run asks."""

    plan: ReplayPlan
    #: The session's redaction, which the recorded bodies went through: a request now
    #: goes through it too before it is compared.
    redact: Callable[[str], str] = str
    _session: RecordedSession | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def mode(self) -> Mode:
        return self.plan.mode

    def session(self) -> RecordedSession:
        """The stored results file; a :class:`ResultsFileError` names it when it does
        not read."""
        with self._lock:
            if self._session is None:
                self._session = load_session(self.plan.results)
            return self._session

    def find(self, case_id: str, variant: str, repetition: int) -> Found:
        """The recording of repetition ``repetition`` of ``case_id`` for ``variant``."""
        try:
            session = self.session()
        except ResultsFileError as exc:
            return Found(None, str(exc))
        name = f"{case_id}[{variant}]" if variant else case_id
        run = session.find(case_id, variant, repetition)
        where = self.plan.results
        if run is None:
            return Found(None, f"{where} has no run {repetition} of {name}")
        if run.directory is None:
            return Found(None, f"run {repetition} of {name} in {where} was not recorded")
        try:
            found = read_recording(run.directory, run.record.cost_usd)
        except RecordingError as exc:
            return Found(None, str(exc))
        if found is None:
            return Found(None, f"the recording of {name} in {where} is gone ({run.directory})")
        return Found(found)
