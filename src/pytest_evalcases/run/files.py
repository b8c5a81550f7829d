"""What the checks read of a workspace, and how, whatever the agent left there
(docs/case-format.md, "Paths, globs and symlinks").

A named path is followed through its symlinks and must end inside the workspace. A glob
walk never enters a symlinked directory, so neither ``ln -s / r`` nor ``ln -s . a`` can
send it out of the workspace or round a cycle; a symlink it meets is a match like a file,
which then must resolve inside. A read opens only regular files, never blocks on a FIFO,
and stops at :data:`~pytest_evalcases.defaults.CHECK_READ_LIMIT` bytes. Everything calls
:func:`~pytest_evalcases.run.deadline.tick` as it goes.
"""

from __future__ import annotations

import errno
import fnmatch
import glob
import os
import stat
from pathlib import Path

from pytest_evalcases import defaults
from pytest_evalcases.errors import PathEscapeError
from pytest_evalcases.run.deadline import tick

#: Bytes read at a time.
CHUNK = 1024 * 1024


class Unreadable(Exception):
    """A path of the workspace that a check cannot read or list (the agent removed its
    permissions, made it a FIFO, made it huge): the check fails, saying so."""


class LinkOut(Unreadable):
    """A symlink the agent made that leads out of the workspace, on the way to a path a
    check names: never read through, it fails the check that meets it."""

    def __init__(self, link: str, target: str) -> None:
        super().__init__(f"{link} is a symlink leaving the workspace (to {target}): not read")
        self.link = link


def inside(root: Path, rel: str, what: str = "path", *, top: str | None = None) -> Path:
    """``root / rel`` with its symlinks resolved; one that ends outside ``root`` is a
    :class:`PathEscapeError` naming ``what`` and ``rel``. A symlink loop resolves to
    itself (and is no file). ``top``: ``root`` resolved already."""
    top = os.path.realpath(root) if top is None else top
    target = _resolved_below(top, rel)
    if not _below(target, top):
        raise PathEscapeError(
            f"{what} {rel!r} resolves outside the workspace (to {target}); not read"
        )
    return Path(target)


def _resolved_below(top: str, rel: str) -> str:
    """``os.path.realpath(os.path.join(top, rel))`` for a resolved ``top``: when ``rel``
    climbs with no ``..`` and meets no symlink, ``top`` joined with its parts, which
    costs a ``lstat`` a part instead of one for every part of ``top`` again (every check
    resolves its paths: the resolving cost more than the check)."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if rel.startswith("/") or ".." in parts:
        return os.path.realpath(os.path.join(top, rel))
    path = top
    for part in parts:
        path = os.path.join(path, part)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return os.path.realpath(os.path.join(top, rel))
        except OSError:
            continue  # as realpath: a part that cannot be looked at is no symlink
    return path


def _below(path: str, top: str) -> bool:
    """Whether the resolved ``path`` is the resolved ``top`` or below it (strings: every
    check resolves its paths, and ``Path.parents`` cost more than the resolving)."""
    return path == top or path.startswith(top if top.endswith(os.sep) else top + os.sep)


def link_out(root: Path, rel: str) -> LinkOut | None:
    """The first symlink on the way to ``rel`` (up to its first wildcard) that resolves
    outside ``root``, as a :class:`LinkOut`; ``None`` when there is none."""
    top = os.path.realpath(root)
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    for end in range(1, len(parts) + 1):
        if glob.has_magic(parts[end - 1]):
            break
        shown = "/".join(parts[:end])
        if not os.path.islink(root / shown):
            continue
        target = os.path.realpath(root / shown)
        if not _below(target, top):
            return LinkOut(shown, target)
    return None


def glob_paths(root: Path, pattern: str) -> list[str]:
    """The paths below ``root`` (relative, ``/``-separated, sorted) that match the glob
    ``pattern`` as :func:`glob.glob` with ``recursive=True`` matches it (``*`` and ``**``
    skip hidden names), except that no symlinked directory is entered. The pattern's
    leading segments without wildcards are a named path, resolved by :func:`inside`.
    """
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    fixed = 0
    while fixed < len(parts) and not glob.has_magic(parts[fixed]):
        fixed += 1
    if fixed == len(parts):
        return [pattern] if exists(root / pattern, pattern) else []
    prefix = "/".join(parts[:fixed])
    start = inside(root, prefix) if prefix else root
    hits = {_join(prefix, hit) for hit in _walk(start, parts[fixed:], prefix)}
    return sorted(hits - {""})


def _walk(start: Path, parts: list[str], prefix: str) -> set[str]:
    """The matches of ``parts`` below ``start`` (``""`` is ``start`` itself): a walk with
    a stack (no recursion limit for a deep tree), each directory visited once per pattern
    segment. ``prefix`` is ``start`` as the pattern named it, for messages."""
    hits: set[str] = set()
    todo: list[tuple[str, int]] = [("", 0)]
    seen: set[tuple[str, int]] = set()
    while todo:
        state = todo.pop()
        if state in seen:
            continue
        seen.add(state)
        rel, index = state
        if index == len(parts):
            hits.add(rel)
            continue
        part, last = parts[index], index == len(parts) - 1
        if part == "**":
            todo.append((rel, index + 1))
            for name, directory in _entries(start, rel, prefix):
                if name.startswith("."):
                    continue
                child = _join(rel, name)
                if directory:
                    todo.append((child, index))
                elif last:
                    hits.add(child)
        elif not glob.has_magic(part):
            child = _join(rel, part)
            if last:
                if exists(start / child, _join(prefix, child)):
                    hits.add(child)
            elif stat.S_ISDIR(_mode(start / child, _join(prefix, child), follow=False)):
                todo.append((child, index + 1))
        else:
            for name, directory in _entries(start, rel, prefix):
                if name.startswith(".") and not part.startswith("."):
                    continue
                if fnmatch.fnmatchcase(name, part):
                    child = _join(rel, name)
                    if last:
                        hits.add(child)
                    elif directory:
                        todo.append((child, index + 1))
    return hits


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel and name else rel or name


def _entries(start: Path, rel: str, prefix: str) -> list[tuple[str, bool]]:
    """The names in a directory, each with whether it is a directory (a symlink is not)."""
    shown = _join(prefix, rel) or "."
    tick(f"listing {shown}")
    try:
        with os.scandir(start / rel) as entries:
            found = []
            for entry in entries:
                tick()
                try:
                    found.append((entry.name, entry.is_dir(follow_symlinks=False)))
                except OSError:
                    found.append((entry.name, False))
            return found
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise Unreadable(f"{shown}/: cannot be listed ({exc.strerror})") from None


def is_file(path: Path, rel: str) -> bool:
    """Whether ``path`` (after its symlinks) is a regular file; :class:`Unreadable` when
    that cannot be told (a directory on the way without permissions)."""
    return stat.S_ISREG(_mode(path, rel))


def is_dir(path: Path, rel: str) -> bool:
    """Whether ``path`` (after its symlinks) is a directory, as :func:`is_file` tells."""
    return stat.S_ISDIR(_mode(path, rel))


def exists(path: Path, rel: str) -> bool:
    """Whether ``path`` exists (a symlink counts, wherever it points), as :func:`is_file`
    tells."""
    return _mode(path, rel, follow=False) != 0


def _mode(path: Path, rel: str, *, follow: bool = True) -> int:
    """The file mode of ``path``; 0 when it does not exist (or is a symlink loop)."""
    try:
        return os.stat(path, follow_symlinks=follow).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return 0
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return 0
        raise Unreadable(f"{rel}: cannot be read ({exc.strerror})") from None


def open_regular(path: Path, rel: str) -> int:
    """A descriptor of the regular file ``path``; :class:`Unreadable` otherwise. Opened
    without blocking, so that a FIFO put in a file's place never holds the run."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise Unreadable(f"{rel}: cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Unreadable(f"{rel}: not a regular file")
    return fd


def read_text(path: Path, rel: str, limit: int | None = None) -> str:
    """The text of the regular file ``path`` (``rel`` names it in messages), undecodable
    bytes replaced; :class:`Unreadable` when it cannot be read or holds more than
    ``limit`` bytes (:data:`~pytest_evalcases.defaults.CHECK_READ_LIMIT`)."""
    limit = defaults.CHECK_READ_LIMIT if limit is None else limit
    fd = open_regular(path, rel)
    try:
        chunks: list[bytes] = []
        size = 0
        while True:
            tick(f"reading {rel}")
            try:
                chunk = os.read(fd, CHUNK)
            except OSError as exc:
                raise Unreadable(f"{rel}: cannot be read ({exc.strerror})") from None
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise Unreadable(
                    f"{rel}: larger than the {limit:,} bytes a check reads (the limit of "
                    'docs/case-format.md, "Time limits")'
                )
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", errors="replace")


def same_bytes(first: Path, first_rel: str, second: Path, second_rel: str) -> bool:
    """Whether two regular files hold the same bytes, compared a chunk at a time."""
    a = open_regular(first, first_rel)
    try:
        b = open_regular(second, second_rel)
        try:
            if os.fstat(a).st_size != os.fstat(b).st_size:
                return False
            while True:
                tick(f"comparing {first_rel}")
                try:
                    left, right = os.read(a, CHUNK), os.read(b, CHUNK)
                except OSError as exc:
                    raise Unreadable(f"{first_rel}: cannot be read ({exc.strerror})") from None
                if left != right:
                    return False
                if not left:
                    return True
        finally:
            os.close(b)
    finally:
        os.close(a)
