"""``evalcases show``: a stored run found by the name pytest gave its item, and its
transcript (docs/replay.md, "Reading a run").

A run is named as its test item is: ``case-id``, ``case-id[variant]``, ``case-id[r1]``
or ``case-id[variant-r1]`` (a node id's file part, ``evals/x.yaml::``, may come first).
The repetition may be left out when the case ran once for the variant, the variant when
the case ran in one variant only.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_evalcases.errors import EvalcasesError
from pytest_evalcases.recording import format as recording
from pytest_evalcases.recording.recorded import RecordedRun, load_session
from pytest_evalcases.report import conversation, transcript
from pytest_evalcases.results.reader import load
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.run.artifacts import RUN_FILE

#: Errors that end a run before its agent starts: nothing was sent to a model.
_BEFORE_THE_AGENT = ("case", "no-agent", "setup", "missing", "sandbox", "workspace")


class ShowError(EvalcasesError):
    """A run that cannot be shown: not in the results file, or not recorded."""


@dataclass(frozen=True)
class Wanted:
    """A run as named on the command line; ``None`` where the name leaves it open."""

    case_id: str
    variant: str | None
    repetition: int | None


def parse_name(name: str) -> list[Wanted]:
    """The runs ``name`` may mean, the likeliest first: ``x[a-r1]`` is repetition 1 of
    variant ``a``, or a variant called ``a-r1``."""
    name = name.rpartition("::")[2].strip()
    match = re.fullmatch(r"(.+?)\[(.*)\]", name)
    if match is None:
        return [Wanted(name, None, None)]
    case_id, param = match.groups()
    wanted = []
    alone = re.fullmatch(r"r(\d+)", param)
    if alone:
        wanted.append(Wanted(case_id, None, int(alone.group(1))))
    paired = re.fullmatch(r"(.+)-r(\d+)", param)
    if paired:
        wanted.append(Wanted(case_id, paired.group(1), int(paired.group(2))))
    wanted.append(Wanted(case_id, param, None))
    return wanted


def run_name(record: RunRecord, repeated: bool) -> str:
    """The run's name as pytest names its item (``case-id[variant-r0]``)."""
    params = [record.variant] if record.variant else []
    if repeated:
        params.append(f"r{record.repetition}")
    return f"{record.case_id}[{'-'.join(params)}]" if params else record.case_id


def find(results: Path, name: str) -> tuple[RecordedRun, str]:
    """The run of the results file at ``results`` that ``name`` names, and its name as
    pytest named its item; a :class:`ShowError` lists the close matches or the runs to
    choose from."""
    session = load_session(results)
    runs = list(session.runs.values())
    wanted = parse_name(name)
    case_id = wanted[0].case_id
    of_case = [r for r in runs if r.record.case_id == case_id]
    if not of_case:
        ids = sorted({r.record.case_id for r in runs})
        close = difflib.get_close_matches(case_id, ids, n=5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        if not ids:
            hint = " (it holds no run)"
        raise ShowError(f"{results}: no case {case_id!r}{hint}")
    repeated = any(r.record.repetition for r in of_case)
    names = ", ".join(run_name(r.record, repeated) for r in _ordered(of_case))
    for want in wanted:
        found = [
            r
            for r in of_case
            if (want.variant is None or r.record.variant == want.variant)
            and (want.repetition is None or r.record.repetition == want.repetition)
        ]
        if len(found) == 1:
            return found[0], run_name(found[0].record, repeated)
        if found:
            raise ShowError(f"{results}: {name} names {len(found)} runs: say which ({names})")
    raise ShowError(f"{results}: no run {name}; the runs of {case_id} are {names}")


def _ordered(runs: Sequence[RecordedRun]) -> list[RecordedRun]:
    return sorted(runs, key=lambda r: (r.record.variant, r.record.repetition))


def exchange_of(results: Path, run: RecordedRun, name: str) -> Path:
    """The stored exchange of ``run`` (called ``name``); a :class:`ShowError` says why
    there is none."""
    if run.directory is None:
        raise ShowError(f"{results}: {name} was not recorded: {_why(results, run.record)}")
    found = recording.exchange_file(run.directory)
    if found is None and (run.directory / RUN_FILE).is_file() and _by_command(results):
        raise ShowError(
            f"{results}: {name}: the command agent talks to no model API through the "
            f"proxy: only its answer and the files it changed are stored, in {run.directory}"
        )
    if found is None:
        raise ShowError(
            f"{results}: {name} was recorded in {run.directory}, which holds no "
            f"{recording.EXCHANGE} (was it removed?)"
        )
    return found


def _why(results: Path, record: RunRecord) -> str:
    if record.outcome == "error" and record.error_kind in _BEFORE_THE_AGENT:
        return f"it ended before its agent started ({record.error_kind}: {record.error})"
    if _by_command(results):
        return "the command agent talks to no model API through the proxy: never recorded"
    return (
        "recording was off (eval_record = false), or its agent's model traffic was not "
        "proxied (an agent of your own without model_api, Bedrock, Vertex AI, a model "
        "provider of your own), or the file was written before recordings existed "
        "(docs/replay.md, Recording)"
    )


def _by_command(results: Path) -> bool:
    return load(results).pins.get("agent") == "command"


def show(results: Path, name: str, *, full: bool = False) -> str:
    """The transcript of run ``name`` of the results file at ``results``."""
    run, name = find(results, name)
    path = exchange_of(results, run, name)
    read = conversation.read(path)
    source = transcript.Source(results=str(results), recording=str(path))
    return transcript.text(read, run.record, source=source, name=name, full=full)
