"""What the authoring options say in pytest's terminal (docs/writing-cases.md):
``--eval-lint``'s findings and its total, ``--eval-red-first``'s section and
``--eval-changed``'s header and selection lines. :mod:`pytest_evalcases.plugin.authoring`
writes them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_evalcases.authoring import lint
from pytest_evalcases.cases.registry import CheckRegistry
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.session.changed import ChangedFiles
from pytest_evalcases.text import plural

#: How many changed files the header names before "and N more".
SHOWN_FILES = 10


def lint_lines(
    files: list[lint.CaseFile], root: Path, registry: CheckRegistry, base: Path
) -> tuple[list[str], list[str]]:
    """Every finding of the lint of ``files``, in file and line order, and the errors
    among them, each relative to ``base``."""
    findings = lint.lint_files(files, root, registry)
    lines = [f.format(base) for f in sorted(findings, key=_order)]
    errors = [f.format(base) for f in findings if f.level == lint.ERROR]
    return lines, errors


def _order(finding: lint.Finding) -> tuple[str, int]:
    return str(finding.path), finding.line or 0


def lint_total(lines: Sequence[str]) -> str:
    """The ``eval lint`` section's last line."""
    errors = sum(1 for line in lines if ": ERROR " in line)
    warnings = len(lines) - errors
    return f"eval lint: {plural(errors, 'error')}, {plural(warnings, 'warning')}"


def red_first_lines(records: Sequence[RunRecord]) -> list[str]:
    """The ``eval red-first`` section: which cases are red, as they should be, and
    which pass on first write; none when no case ran."""
    runs = [r for r in records if r.kind != "file"]
    red = sorted({r.case_id for r in runs if r.outcome == "passed"})
    green = sorted({r.case_id for r in runs if r.outcome == "failed"})
    if not red and not green:
        return []
    return [
        f"{plural(len(red), 'case')} red, as they should be; "
        f"{len(green)} pass{'es' if len(green) == 1 else ''} on first write "
        "(they test nothing until the case is made stricter)",
        *(f"  passes on first write: {case_id}" for case_id in green),
    ]


def changed_header(changed: ChangedFiles) -> str:
    """The header line naming the changed files."""
    paths = changed.paths
    shown = ", ".join(paths[:SHOWN_FILES])
    if len(paths) > SHOWN_FILES:
        shown += f" and {len(paths) - SHOWN_FILES} more"
    count = plural(len(paths), "changed file")
    return f"evalcases: --eval-changed since {changed.describe()}: {count}" + (
        f": {shown}" if paths else ""
    )


def changed_selects(before: int, after: int) -> str:
    """The line after collection: how many of the collected cases the changes select."""
    return (
        f"evalcases: --eval-changed selects {after} of {before} "
        f"case{'s' if before != 1 else ''} "
        "(those whose case file, fixture or defended file changed)"
    )
