"""The runs of a stored results file and their recordings, found by run
(docs/replay.md): what replay, reuse and regrade start from.

A run is found by its case, variant and repetition, never by its directory's name: a
session run with ``--eval-repeat 3`` names its directories ``case.r0`` … and one run
once names it ``case``, yet repetition 0 of either is the same run. Its recording is
where the results file's ``recording`` says, relative to the results file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_evalcases.results.reader import ResultsFileError, load, read_dir
from pytest_evalcases.results.record import RunRecord

#: What ``--eval-replay`` / ``--eval-regrade`` given without a file mean.
NEWEST = ""

RunKey = tuple[str, str, int]


@dataclass(frozen=True)
class RecordedRun:
    """One run of a stored results file."""

    record: RunRecord
    #: The run's recording directory (absolute); ``None`` when it was not recorded.
    directory: Path | None


@dataclass(frozen=True)
class RecordedSession:
    """The runs of one stored results file, by case id, variant and repetition."""

    path: Path
    runs: dict[RunKey, RecordedRun]

    def find(self, case_id: str, variant: str, repetition: int) -> RecordedRun | None:
        """The run of ``case_id`` for ``variant`` and ``repetition``, if the file has it."""
        return self.runs.get((case_id, variant, repetition))


def load_session(path: Path) -> RecordedSession:
    """The runs of the results file at ``path``; a :class:`ResultsFileError` names the
    file when it is not one. A case entry that is a file's load error is no run."""
    document = load(path)
    runs: dict[RunKey, RecordedRun] = {}
    for record in document.cases:
        if record.kind == "file":
            continue
        directory = path.parent / record.recording if record.recording else None
        runs[(record.case_id, record.variant, record.repetition)] = RecordedRun(record, directory)
    return RecordedSession(path, runs)


def newest_results_file(directory: Path) -> Path:
    """The newest results file of ``directory`` that reads, by the date it records; a
    :class:`ResultsFileError` when there is none."""
    files = read_dir(directory).files
    if not files:
        raise ResultsFileError(
            f"{directory}: no results file to replay from (run the suite live first)"
        )
    return files[-1].path
