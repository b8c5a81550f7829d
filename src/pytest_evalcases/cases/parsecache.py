"""Parsed case files kept between runs, so that unchanged files skip the YAML parser, and
an index of valid files, so that collecting them needs neither parser nor validator."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_evalcases import __version__
from pytest_evalcases.cases.limits import shown_path
from pytest_evalcases.kinds import SEVERITIES, Severity


@dataclass(frozen=True)
class CaseEntry:
    """What collection needs of a case: its item's name and place, the severity marker
    and tags, and what ``--eval-defends`` / ``--eval-changed`` select on. The case
    itself is loaded when its item runs."""

    id: str
    #: 0-based line of the case in its file.
    line: int
    severity: Severity
    tags: tuple[str, ...]
    defends: str
    #: ``perturb: false`` makes no perturbed items (docs/perturbation.md).
    perturb: bool = True
    #: The prompt, which says which perturbation classes can change it (``None``: the
    #: case has none, or ``perturb: false``), and how many ``paraphrases:`` it has.
    prompt: str | None = None
    paraphrases: int = 0

    def to_list(self) -> list[Any]:
        return [
            self.id,
            self.line,
            self.severity,
            list(self.tags),
            self.defends,
            self.perturb,
            self.prompt,
            self.paraphrases,
        ]

    @classmethod
    def from_list(cls, raw: Any) -> CaseEntry:
        """An entry read back from the cache; ``ValueError`` when it is not one."""
        if not isinstance(raw, list) or len(raw) != 8:
            raise ValueError(raw)
        case_id, line, severity, tags, defends, perturb, prompt, paraphrases = raw
        if not (
            isinstance(case_id, str)
            and isinstance(line, int)
            and severity in SEVERITIES
            and isinstance(tags, list)
            and all(isinstance(t, str) for t in tags)
            and isinstance(defends, str)
            and isinstance(perturb, bool)
            and (prompt is None or isinstance(prompt, str))
            and isinstance(paraphrases, int)
        ):
            raise ValueError(raw)
        return cls(case_id, line, severity, tuple(tags), defends, perturb, prompt, paraphrases)


@dataclass(frozen=True)
class FileIndex:
    """A case file that validated: its cases' entries, under which evals root, and the
    fixture directories it needs (a deleted fixture makes the file worth loading again)."""

    evals_root: str
    entries: tuple[CaseEntry, ...]
    fixtures: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.evals_root,
            "cases": [e.to_list() for e in self.entries],
            "fixtures": list(self.fixtures),
        }

    @classmethod
    def from_dict(cls, raw: Any) -> FileIndex:
        if not isinstance(raw, dict):
            raise ValueError(raw)
        root, cases, fixtures = raw.get("root"), raw.get("cases"), raw.get("fixtures")
        if not isinstance(root, str) or not isinstance(cases, list) or not cases:
            raise ValueError(raw)
        if not isinstance(fixtures, list) or not all(isinstance(f, str) for f in fixtures):
            raise ValueError(raw)
        return cls(root, tuple(CaseEntry.from_list(c) for c in cases), tuple(fixtures))


class ParseCache:
    """Parsed case files by path, valid while the file's modification time, size and
    inode stay the same.

    Constructing Python objects from YAML is most of what loading a case file costs; an
    unchanged file skips it (and is still validated, so new check types apply). A file
    that validated with built-in check types only also keeps a :class:`FileIndex`, from
    which collection builds its items without loading it: the file is loaded, from the
    parsed data, when one of its items runs. The plugin keeps the entries in pytest's
    cache directory.
    """

    def __init__(self, files: dict[str, Any] | None = None) -> None:
        self.files: dict[str, Any] = files or {}
        self.changed = False
        #: Fixture directories seen to exist in this session (many files share one).
        self._dirs: dict[str, bool] = {}

    @staticmethod
    def _stamp(path: Path) -> list[int] | None:
        try:
            st = path.stat()
        except OSError:
            return None
        return [st.st_mtime_ns, st.st_size, st.st_ino]

    def _entry(self, path: Path) -> list[Any] | None:
        entry = self.files.get(str(path))
        if not isinstance(entry, list) or len(entry) not in (3, 4):
            return None
        if entry[0] != self._stamp(path):
            return None
        return entry

    def get(self, path: Path) -> tuple[Any, list[int]] | None:
        """The parsed data and the cases' 0-based lines, when still valid."""
        entry = self._entry(path)
        if entry is None:
            return None
        return entry[1], entry[2]

    def index(self, path: Path, evals_root: Path) -> FileIndex | None:
        """The index of an unchanged file that validated, for the same evals root and
        with its fixture directories still there; ``None`` when it must be loaded."""
        entry = self._entry(path)
        if entry is None or len(entry) != 4:
            return None
        try:
            index = FileIndex.from_dict(entry[3])
        except ValueError:
            return None
        if index.evals_root != str(evals_root):
            return None
        if not all(self._is_dir(f) for f in index.fixtures):
            return None
        return index

    def _is_dir(self, path: str) -> bool:
        known = self._dirs.get(path)
        if known is None:
            known = self._dirs[path] = os.path.isdir(path)
        return known

    def put(
        self, path: Path, data: Any, lines: Sequence[int], index: FileIndex | None = None
    ) -> None:
        stamp = self._stamp(path)
        if stamp is None or shown_path(path) != str(path):
            return  # gone, or a name that is not UTF-8, which the cache could not save
        try:
            json.dumps(data)
        except (TypeError, ValueError):
            return  # YAML dates and the like: parse this file every time
        entry: list[Any] = [stamp, data, list(lines)]
        if index is not None:
            entry.append(index.to_dict())
        self.files[str(path)] = entry
        self.changed = True


#: The installed package whose modules decide whether a case file is valid.
PACKAGE_DIR = Path(__file__).resolve().parent.parent


def cache_version(package_dir: Path = PACKAGE_DIR) -> str:
    """The plugin's version and a digest of ``path:size:mtime`` of every ``.py`` file
    under ``package_dir``, in path order: the key of the parse cache, so that an upgrade
    or an edit of an editable install invalidates what earlier runs cached, and a module
    moved or added cannot be forgotten by a list of names."""
    stamps = []
    for dirpath, dirnames, filenames in os.walk(package_dir):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = Path(dirpath, name)
            try:
                stat = path.stat()
            except OSError:
                continue
            rel = path.relative_to(package_dir).as_posix()
            stamps.append(f"{rel}:{stat.st_size}:{stat.st_mtime_ns}")
    digest = hashlib.sha256("\n".join(stamps).encode("utf-8")).hexdigest()[:16]
    return f"{__version__}:{digest}"
