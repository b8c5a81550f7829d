"""What a session shows GitHub Actions when it ends (docs/ci.md, "Job summary and
annotations"): the job summary appended to ``$GITHUB_STEP_SUMMARY`` and the workflow
commands that annotate each failed case, both made from the results file the session
wrote (its secrets redacted), on the controller, once."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pytest_evalcases.report import github
from pytest_evalcases.report.findings import BaselineDelta, findings
from pytest_evalcases.results import reader


def github_actions(
    results_file: Path | None, environ: Mapping[str, str], invocation_dir: Path, rootdir: Path
) -> list[str]:
    """Under ``GITHUB_ACTIONS=true``: append the job summary of ``results_file`` to
    ``$GITHUB_STEP_SUMMARY`` (when it is set) and return the workflow commands to print.
    Nothing elsewhere, nor without a results file (a session that ran no case, or
    ``--eval-no-save``)."""
    if environ.get("GITHUB_ACTIONS") != "true" or results_file is None:
        return []
    try:
        doc = reader.load(results_file)
    except reader.ResultsFileError:
        return []
    workspace = environ.get("GITHUB_WORKSPACE")
    found = findings(doc, invocation_dir, Path(workspace) if workspace else rootdir)
    delta = BaselineDelta.from_dict(doc.baseline) if doc.baseline is not None else None
    target = environ.get("GITHUB_STEP_SUMMARY")
    if target:
        try:
            # Appended: each step's summary file may hold what earlier commands wrote.
            with open(target, "a", encoding="utf-8") as out:
                out.write(github.job_summary(doc, found, delta))
        except OSError as exc:
            return [
                f"::warning::job summary not written: {exc.strerror}",
                *github.workflow_commands(found),
            ]
    return github.workflow_commands(found)
