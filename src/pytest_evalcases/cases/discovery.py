"""Which files are case files (docs/case-format.md), and which directories pytest must not walk.

Plain path logic, no pytest: the plugin's collection hooks ask a :class:`Discovery`.
Which of the files it finds hold cases, rather than data beside them, their content
says (:func:`looks_like_case`): the loader asks once it has parsed them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

CASE_SUFFIXES = (".yaml", ".yml", ".json")
TASK_FILE = "checks.yaml"
EVALS_DIR = "evals"
#: Below an evals root these hold fixture repositories and results, never cases.
EXCLUDED_DIRS = ("fixtures", "results")
#: A file below an evals root is a case file when its top level is a mapping with one
#: of these keys (or when it does not parse); any other is data, not collected.
CASE_KEYS = ("checks", "prompt", "defends", "cases")


def looks_like_case(data: object) -> TypeGuard[dict[str, Any]]:
    """Whether parsed data is a case file's: a mapping with one of :data:`CASE_KEYS`
    (``golden.json`` beside the cases, a list or a plain value, is data)."""
    return isinstance(data, dict) and any(key in data for key in CASE_KEYS)


@dataclass(frozen=True)
class Found:
    """A case file: ``task`` for a task directory's ``checks.yaml``, else ``case``."""

    kind: str
    evals_root: Path


@dataclass(frozen=True)
class Discovery:
    """The rules of docs/case-format.md for one rootdir and its ini options."""

    rootdir: Path
    #: ``eval_paths``: directories whose case files count besides ``evals/``.
    eval_paths: tuple[Path, ...] = ()
    #: ``eval_ignore``: paths whose files are never case files.
    ignore: tuple[Path, ...] = ()
    #: The evals roots found so far, by their path parts (one Path per root, not per file).
    _roots: dict[tuple[str, ...], Path] = field(default_factory=dict, compare=False, repr=False)

    def evals_root(self, path: Path) -> Path | None:
        """The nearest enclosing ``evals`` directory (below the rootdir), or the
        ``eval_paths`` entry that holds ``path``."""
        for base in self.eval_paths:
            if base == path or base in path.parents:
                return base
        # Called for every file pytest walks: plain tuple work, no Path per parent.
        parts = path.parts
        root_parts = self.rootdir.parts
        below_root = parts[: len(root_parts)] == root_parts
        # The rootdir itself counts (a pytest.ini inside evals/ makes it the rootdir);
        # directories above it do not.
        floor = len(root_parts) - 1 if below_root else 1
        for index in range(len(parts) - 2, floor - 1, -1):
            if parts[index] == EVALS_DIR:
                key = parts[: index + 1]
                root = self._roots.get(key)
                if root is None:
                    root = self._roots[key] = Path(*key)
                return root
        return None

    def _ignored(self, path: Path) -> bool:
        return any(p == path or p in path.parents for p in self.ignore)

    def skip_dir(self, path: Path) -> bool:
        """Whether pytest should not walk ``path`` at all: a ``fixtures`` / ``results``
        directory under an evals root (a fixture repository's own ``test_*.py`` and
        ``conftest.py`` are not the user's tests), or a symbolic link there to a
        directory it is in (``ln -s . evals/again``: walked, it would collect the suite
        again and again until the path is too long). ``eval_ignore`` paths are walked:
        they hold no case files, but may hold tests."""
        if path.name in EXCLUDED_DIRS:
            return path.is_dir() and self.evals_root(path / "_") is not None
        return os.path.islink(path) and self.evals_root(path / "_") is not None and _loops(path)

    def case_file(self, path: Path) -> Found | None:
        """What ``path`` is, when it is a case file."""
        name = path.name
        if self.ignore and self._ignored(path):
            return None
        if name == TASK_FILE:
            return Found("task", path.parent)
        if not name.endswith(CASE_SUFFIXES) or name.startswith(("_", ".")):
            return None
        root = self.evals_root(path)
        if root is None:
            return None
        if any(part in EXCLUDED_DIRS for part in path.parts[len(root.parts) : -1]):
            return None
        return Found("case", root)

    def may_hold_cases(self, paths: Iterable[Path], skip_dir: Callable[[str], bool]) -> bool:
        """Whether collecting ``paths`` may find a case file: one of them is a case
        file, lies in an evals root, or holds an ``eval_paths`` entry, an ``evals``
        directory or a task directory's ``checks.yaml`` below it. The walk enters the
        directories pytest enters: never one whose name ``skip_dir`` accepts (its
        ``norecursedirs``), nor one twice through symbolic links.

        A session for which this is false collects no case file, and the plugin does
        not start (docs/reference.md, "Sessions without eval cases")."""
        walk: list[Path] = []
        for path in paths:
            if os.path.isdir(path):
                if self.evals_root(path / "_") is not None:
                    return True
                if any(path == base or path in base.parents for base in self.eval_paths):
                    return True
                walk.append(path)
            elif self.case_file(path) is not None:
                return True
        seen: set[str] = set()
        while walk:
            directory = walk.pop()
            try:
                with os.scandir(directory) as entries:
                    listed = list(entries)
            except OSError:
                continue
            for entry in listed:
                if entry.name == TASK_FILE:
                    return True
                if not _is_dir(entry) or skip_dir(entry.name):
                    continue
                if entry.name == EVALS_DIR or Path(entry.path) in self.eval_paths:
                    return True
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if target in seen:
                        continue
                    seen.add(target)
                walk.append(Path(entry.path))
        return False

    def passed_over(self, directory: Path) -> list[tuple[Path, Found]]:
        """The case files in ``directory`` that are neither regular files nor
        directories, which a walk that keeps to regular files passes over without a
        word: a dangling or looping symbolic link, a FIFO, a device, a socket.

        Outside an evals root only a task directory's ``checks.yaml`` can be one: one
        ``lstat`` there instead of a listing."""
        if self.evals_root(directory / "_") is None:
            candidates = [directory / TASK_FILE] if os.path.lexists(directory / TASK_FILE) else []
        else:
            try:
                with os.scandir(directory) as entries:
                    candidates = [Path(entry.path) for entry in entries]
            except OSError:
                return []
        found = []
        for path in sorted(candidates):
            case = self.case_file(path)
            # A regular file or a directory (through links too) pytest collects or walks.
            if case is not None and not (os.path.isfile(path) or os.path.isdir(path)):
                found.append((path, case))
        return found


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _loops(link: Path) -> bool:
    """Whether ``link`` leads to the directory it is in, or to one above it."""
    target = os.path.realpath(link)
    here = os.path.realpath(link.parent)
    return here == target or here.startswith(target.rstrip(os.sep) + os.sep)
