"""Results files (docs/results.md): the one reader.

Every command that reads results files (``trend``, ``compare``, ``merge``, ``show``,
``--eval-baseline``, a replay's recordings) reads them here: a file that does not read
is a :class:`ResultsFileError` naming the file and the field. The fields themselves are
read by :mod:`pytest_evalcases.results.decode`; the HTML report's lenient trend reader
is :mod:`pytest_evalcases.results.headlines`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_evalcases.errors import EvalcasesError
from pytest_evalcases.results.decode import FieldError, from_dict
from pytest_evalcases.results.document import FORMAT, ResultsDocument

#: How deeply lists and objects may nest in a results file: a file the plugin writes
#: nests less than ten levels; a deeper one is refused before anything walks it.
MAX_DEPTH = 64


class ResultsFileError(EvalcasesError):
    """A results file that cannot be read: missing, not JSON, or not a results file."""


def load(path: Path) -> ResultsDocument:
    """Read a results file; anything that is not one is a :class:`ResultsFileError`
    naming the file and, for a malformed entry, the field (``cases[3].outcome``)."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise ResultsFileError(f"{path}: not a results file: no `cases` list")
    check_format(data, path)
    try:
        return from_dict(data)
    except FieldError as exc:
        raise ResultsFileError(f"{path}: not a results file: {exc.where}: {exc.problem}") from None


def load_baseline(path: Path, role: str = "a baseline") -> ResultsDocument:
    """:func:`load`, refusing a red-first file: its outcomes are inverted, so a run
    compared with it would count every case the wrong way round. ``role`` names what
    the file was to be in the message (``a baseline``, ``compared``)."""
    doc = load(path)
    if doc.is_red_first:
        raise ResultsFileError(
            f"{path}: a red-first results file (written under --eval-red-first) "
            f"cannot be {role}: its outcomes are inverted"
        )
    return doc


@dataclass(frozen=True)
class StoredFile:
    """A results file read from a directory."""

    path: Path
    document: ResultsDocument


@dataclass(frozen=True)
class Directory:
    """The results files of a directory that read, oldest first, and the others."""

    files: list[StoredFile] = field(default_factory=list)
    #: One message per file that did not read (a :class:`ResultsFileError`'s text).
    problems: list[str] = field(default_factory=list)

    @property
    def documents(self) -> list[ResultsDocument]:
        return [f.document for f in self.files]


def read_dir(directory: Path) -> Directory:
    """Every ``*.json`` of ``directory``, oldest first (by ``date``, then name);
    a file that does not read is reported in ``problems``, never raised. A missing
    directory reads as empty."""
    try:
        paths = sorted(p for p in directory.glob("*.json") if p.is_file())
    except OSError:
        return Directory()
    out = Directory()
    for path in paths:
        try:
            out.files.append(StoredFile(path, load(path)))
        except ResultsFileError as exc:
            out.problems.append(str(exc))
    out.files.sort(key=lambda f: (f.document.date, str(f.path)))
    return out


def read_json(path: Path) -> Any:
    """The parsed JSON of ``path``, no deeper than :data:`MAX_DEPTH`; anything else is
    a :class:`ResultsFileError` naming the file."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ResultsFileError(f"{path}: cannot read results file: {why}") from None
    too_deep = ResultsFileError(
        f"{path}: not a results file: nested more than {MAX_DEPTH} levels deep"
    )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsFileError(
            f"{path}:{exc.lineno}: not a results file: invalid JSON ({exc.msg})"
        ) from None
    except RecursionError:
        raise too_deep from None
    if _depth(data) > MAX_DEPTH:
        # Every later walk of the data (redaction, comparison) could recurse that deep.
        raise too_deep
    return data


def _depth(data: Any) -> int:
    """How deeply lists and objects nest in ``data`` (a scalar: 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, level = stack.pop()
        children = value.values() if isinstance(value, dict) else value
        if isinstance(value, (dict, list)):
            deepest = max(deepest, level + 1)
            stack.extend((child, level + 1) for child in children)
    return deepest


def check_format(data: dict[str, Any], path: Path) -> None:
    """Refuse a file of a format version this version does not know (a missing
    ``format``: a file written before it was recorded, read as :data:`FORMAT`)."""
    version = data.get("format", FORMAT)
    if version != FORMAT or isinstance(version, bool):
        raise ResultsFileError(
            f"{path}: results file format {version!r} is not known: this version of "
            f"pytest-evalcases reads format {FORMAT} (a newer version may have written it)"
        )
