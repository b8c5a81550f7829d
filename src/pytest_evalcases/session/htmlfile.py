"""``--eval-html``: the session's HTML report, written by the controller when the
session ends (docs/variants.md, "The HTML report")."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pytest_evalcases.session.state import EvalSession


def write(state: EvalSession, path: Path, title: str) -> str:
    """Write the report of ``state`` at ``path``, with the trend of the results
    directory; the summary's line saying where it is, or why it was not written."""
    # The report and its templates are for the sessions that ask for it.
    from pytest_evalcases.report import html as html_report
    from pytest_evalcases.report.summary import unperturbed_lines

    report = state.report()
    # As in the terminal: the perturbation classes that made no item of a case.
    said = unperturbed_lines(state.perturb_gaps)
    if said:
        report = dataclasses.replace(report, notes=[*report.notes, *said])
    try:
        html_report.write(
            path,
            report,
            html_report.read_trend(state.settings.results_dir),
            title=title,
            selection=state.selection,
            results_file=_results_file(state),
        )
    except OSError as exc:
        return f"html report not written: {path}: {exc}"
    return f"html report: {path}"


def _results_file(state: EvalSession) -> Path | None:
    """The results file whose ``.runs`` directory holds this session's recordings."""
    if state.settings.record is None:
        return None
    return state.settings.results_file(state.started)
