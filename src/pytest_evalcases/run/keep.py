"""Kept workspaces: the workspace of a failed or errored run moved out of pytest's
temporary directory, which pytest prunes to its last three sessions, to a directory
named after the results file (docs/agents.md, "Kept workspaces").

A workspace is moved (renamed) when it can be; across filesystems it is copied the way
checks read a workspace (:mod:`pytest_evalcases.run.files`): no symlink is followed (a
link is copied as a link), a FIFO, socket or device is left out, and nothing is copied
past the size limit. The kept workspaces of a directory stay within that limit: the
oldest go first.

A kept workspace is redacted as a run's recording is (:func:`scrub`): the directory is
uploaded with the results file, and an agent may have written its environment into it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_evalcases import defaults
from pytest_evalcases.redact import Redactor
from pytest_evalcases.run.files import CHUNK, Unreadable, open_regular

#: What a session's directory of kept workspaces is called after its results file's stem.
SUFFIX = ".workspaces"
MB = 1_000_000
#: In each such directory: git ignores it (and a run without a sandbox may add to it
#: while another watches the repository), and pytest does not collect it.
GITIGNORE = '# Workspaces kept by pytest-evalcases (docs/agents.md, "Kept workspaces")\n*\n'


def is_kept_dir(path: Path) -> bool:
    """Whether ``path`` is a directory of kept workspaces, which pytest must not walk:
    an agent's ``test_*.py`` or ``conftest.py`` there is not the user's."""
    if not path.name.endswith(SUFFIX):
        return False
    try:
        with open(path / ".gitignore", encoding="utf-8") as f:
            return f.read(len(GITIGNORE)) == GITIGNORE
    except (OSError, UnicodeDecodeError):
        return False


@dataclass(frozen=True)
class KeepPlace:
    """Where a session keeps the workspaces of its failed and errored runs."""

    #: The directory whose ``*.workspaces`` directories the size limit covers.
    root: Path
    #: This session's: ``root/<results-file-stem>.workspaces``.
    directory: Path
    #: ``eval_keep_max_mb``, in bytes.
    max_bytes: int
    #: The results file is replaced (``--eval-save PATH``), and with it what was kept
    #: for it: an entry of an earlier run is replaced too, or removed at the end.
    replaces: bool = False


@dataclass(frozen=True)
class Kept:
    """Where a workspace is after :func:`keep`; ``note`` says why it is not in the keep
    directory when it is not, or what was redacted in it when it is."""

    path: Path
    note: str = ""


def entry_name(
    case_id: str, variant: str, repetition: int | None, perturbation: str | None = None
) -> str:
    """``case-id``, ``case-id.variant``, ``case-id.r0``, ``case-id.variant.r0``: the
    item's name without the brackets that a shell reads as a pattern; a perturbed run's
    has ``perturb-CLASS-K`` before the repetition (docs/perturbation.md)."""
    parts = [case_id, re.sub(r"[^A-Za-z0-9_-]+", "-", variant) if variant else ""]
    if perturbation is not None:
        parts.append(f"perturb-{perturbation}")
    if repetition is not None:
        parts.append(f"r{repetition}")
    return ".".join(p for p in parts if p)


def repetition_of(name: str, case_id: str, variant_name: str) -> int:
    """The repetition of a run from its name beside the results file (``case.r2``: 2;
    ``case``: 0), as :func:`entry_name` made it."""
    found = re.search(r"\.r(\d+)$", name)
    if found and entry_name(case_id, variant_name, int(found.group(1))) == name:
        return int(found.group(1))
    return 0


def keep(workspace: Path, name: str, place: KeepPlace, redact: Redactor) -> Kept:
    """Move ``workspace`` to ``place.directory/name``, making room by removing the
    oldest workspaces kept by earlier sessions, and :func:`scrub` it with ``redact``. A
    workspace that does not fit within the limit, or that cannot be moved or copied,
    stays where it is, as it is."""
    shown = _shown(place.directory)
    try:
        if not stat.S_ISDIR(os.lstat(workspace).st_mode):
            return Kept(workspace)
    except OSError:
        # The agent removed it: its path stays in the report, which says so.
        return Kept(workspace)
    try:
        size = tree_size(workspace, defaults.KEEP_MAX_ENTRIES)
    except TooMany as exc:
        return Kept(
            workspace,
            f"not moved to {shown}: it holds more than {exc.limit:,} files and directories, "
            "the most a kept workspace may",
        )
    if size > place.max_bytes:
        return Kept(
            workspace,
            f"not moved to {shown}: its {size_text(size)} exceed eval_keep_max_mb = "
            f"{place.max_bytes / MB:g}",
        )
    if not make_room(place, size):
        return Kept(
            workspace,
            f"not moved to {shown}: the workspaces this run kept there already take "
            f"eval_keep_max_mb = {place.max_bytes / MB:g}",
        )
    try:
        _make_session_dir(place.directory)
        target = place.directory / name
        if os.path.lexists(target):
            # Left by an earlier run whose results file this one replaces.
            remove_tree(target)
        # An empty directory holds the name; a rename replaces it.
        target.mkdir()
    except OSError as exc:
        return Kept(workspace, f"not moved to {shown}: {exc.strerror or exc}")
    try:
        os.rename(workspace, target)
    except OSError:
        # Another filesystem (a tmpfs /tmp), or a workspace the agent made read-only.
        problem = _copy_or_say(workspace, target, place.max_bytes)
        if problem:
            remove_tree(target)
            return Kept(workspace, f"not moved to {shown}: {problem}")
        remove_tree(workspace)
    scrubbed = scrub(target, redact)
    # Its time is when it was kept: the oldest kept go first.
    os.utime(target, follow_symlinks=False)
    return Kept(target, scrubbed.note())


def _make_session_dir(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        ignore.write_text(GITIGNORE, encoding="utf-8")


def _copy_or_say(source: Path, target: Path, limit: int) -> str:
    """Copy ``source`` into the empty ``target``; what went wrong, else ``""``."""
    try:
        copy_tree(source, target, limit)
    except (OSError, Unreadable, TooBig) as exc:
        return str(exc)
    return ""


class TooBig(Exception):
    """A copy that would take more than the size limit."""


def copy_tree(source: Path, target: Path, limit: int) -> None:
    """Copy the directory ``source`` into the existing ``target``: directories and
    regular files with their permissions, symlinks as symlinks (never followed); FIFOs,
    sockets, devices and what cannot be read are left out. More than ``limit`` bytes is
    an error."""
    copied = 0
    modes: list[tuple[Path, int]] = []
    todo = [Path()]
    while todo:
        rel = todo.pop()
        try:
            entries = _scan(source / rel)
        except OSError:
            if rel == Path():
                raise
            continue
        for entry in entries:
            st = entry.stat(follow_symlinks=False)
            here, there = source / rel / entry.name, target / rel / entry.name
            copied += footprint(st) - (st.st_size if stat.S_ISREG(st.st_mode) else 0)
            if copied > limit:
                raise TooBig(f"more than eval_keep_max_mb to copy at {rel / entry.name}")
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(here), there)
            elif stat.S_ISDIR(st.st_mode):
                there.mkdir(mode=0o700)
                modes.append((there, st.st_mode))
                todo.append(rel / entry.name)
            elif stat.S_ISREG(st.st_mode):
                try:
                    copied += _copy_file(here, there, limit - copied, str(rel / entry.name))
                except Unreadable:
                    continue
                os.chmod(there, stat.S_IMODE(st.st_mode))
    # Last, and deepest first: a read-only directory would refuse what goes in it.
    for path, mode in reversed(modes):
        os.chmod(path, stat.S_IMODE(mode))


def _copy_file(source: Path, target: Path, budget: int, rel: str) -> int:
    """Copy one regular file, opened as checks open one (never blocking, never through
    a symlink); the bytes copied. More than ``budget`` bytes is :class:`TooBig`."""
    fd = open_regular(source, rel)
    try:
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            copied = 0
            while chunk := os.read(fd, CHUNK):
                copied += len(chunk)
                if copied > budget:
                    raise TooBig(f"more than eval_keep_max_mb to copy at {rel}")
                os.write(out, chunk)
            return copied
        finally:
            os.close(out)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Scrubbed:
    """What :func:`scrub` changed in a kept workspace: the paths it redacted, and those
    it left out, each with why."""

    redacted: tuple[str, ...] = ()
    left_out: tuple[tuple[str, str], ...] = ()

    def note(self) -> str:
        """``secrets redacted in envdump.txt; left out: big.bin (…)``, or ``""``."""
        parts = []
        if self.redacted:
            parts.append("secrets redacted in " + _listed(self.redacted))
        if self.left_out:
            parts.append("left out: " + _listed([f"{p} ({why})" for p, why in self.left_out]))
        return "; ".join(parts)


def _listed(items: Sequence[str], most: int = 5) -> str:
    more = f" and {len(items) - most} more" if len(items) > most else ""
    return ", ".join(items[:most]) + more


def scrub(top: Path, redact: Redactor, max_bytes: int | None = None) -> Scrubbed:
    """Redact the kept workspace ``top`` in place, as a run's recording is redacted
    (docs/agents.md, "Kept workspaces"): a regular file whose text holds a secret is
    replaced by its redacted text (a new file: a hard link to a file elsewhere is left
    alone), so is a symlink whose target holds one. What cannot be searched is removed:
    an entry whose name holds a secret, a file that cannot be read, and the files past
    ``max_bytes`` read in all (:data:`~pytest_evalcases.defaults.KEEP_REDACT_MAX_BYTES`;
    the smallest are read first). No symlink is followed."""
    total = defaults.KEEP_REDACT_MAX_BYTES if max_bytes is None else max_bytes
    budget = total
    redacted: list[str] = []
    left_out: list[tuple[str, str]] = []
    files: list[tuple[int, str, str, os.stat_result]] = []
    gone: list[str] = []
    _listable(str(top))
    for path, st in _walk(top):
        rel = os.path.relpath(path, top)
        if any(rel.startswith(g + os.sep) for g in gone):
            continue
        name = os.path.basename(path)
        if redact(name) != name:
            with _writable(os.path.dirname(path)):
                remove_tree(Path(path))
            gone.append(rel)
            left_out.append((redact(rel), "its name holds a secret"))
        elif stat.S_ISDIR(st.st_mode) and not _listable(path):
            with _writable(os.path.dirname(path)):
                remove_tree(Path(path))
            gone.append(rel)
            left_out.append((rel, "could not be listed for secrets"))
        elif stat.S_ISREG(st.st_mode):
            files.append((st.st_size, rel, path, st))
        elif stat.S_ISLNK(st.st_mode):
            with contextlib.suppress(OSError):
                target = os.readlink(path)
                if redact(target) != target:
                    with _writable(os.path.dirname(path)):
                        os.unlink(path)
                        os.symlink(redact(target), path)
                    redacted.append(rel)
    for size, rel, path, st in sorted(files):
        if size > budget:
            _remove(path)
            left_out.append((rel, f"past the {size_text(total)} searched for secrets"))
            continue
        budget -= size
        try:
            if _redact_file(path, rel, st, redact):
                redacted.append(rel)
        except (OSError, Unreadable):
            _remove(path)
            left_out.append((rel, "could not be read for secrets"))
    return Scrubbed(tuple(sorted(redacted)), tuple(sorted(left_out)))


def _listable(directory: str) -> bool:
    """Whether ``directory`` can be listed, once made so for its owner (the walk is
    next to list it: one the agent closed would hide what it holds)."""
    if os.access(directory, os.R_OK | os.X_OK):
        return True
    with contextlib.suppress(OSError):
        os.chmod(directory, stat.S_IMODE(os.lstat(directory).st_mode) | 0o500)
    return os.access(directory, os.R_OK | os.X_OK)


def _redact_file(path: str, rel: str, st: os.stat_result, redact: Redactor) -> bool:
    """Replace the regular file ``path`` with its redacted text when that differs (bytes
    that are not UTF-8 stay as they are); whether it did."""
    fd = open_regular(Path(path), rel)
    try:
        chunks = []
        while chunk := os.read(fd, CHUNK):
            chunks.append(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if not redact.may_change(data):
        return False
    text = data.decode("utf-8", "surrogateescape")
    scrubbed = redact(text)
    if scrubbed == text:
        return False
    directory = os.path.dirname(path)
    with _writable(directory):
        fd, tmp = tempfile.mkstemp(prefix=".redacting-", dir=directory)
        try:
            os.write(fd, scrubbed.encode("utf-8", "surrogateescape"))
            os.fchmod(fd, stat.S_IMODE(st.st_mode))
            os.close(fd)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    return True


def _remove(path: str) -> None:
    with _writable(os.path.dirname(path)), contextlib.suppress(OSError):
        os.unlink(path)


@contextlib.contextmanager
def _writable(directory: str) -> Iterator[None]:
    """``directory`` writable by its owner while the block runs (the agent may have
    made it read-only), its mode restored after."""
    try:
        mode = stat.S_IMODE(os.lstat(directory).st_mode)
    except OSError:
        yield
        return
    changed = mode & 0o300 != 0o300
    if changed:
        with contextlib.suppress(OSError):
            os.chmod(directory, mode | 0o300)
    try:
        yield
    finally:
        if changed:
            with contextlib.suppress(OSError):
                os.chmod(directory, mode)


def _scan(directory: Path) -> list[os.DirEntry[str]]:
    with os.scandir(directory) as entries:
        return list(entries)


def _walk(top: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry below ``top`` with its ``lstat``, symlinks not followed; directories
    that cannot be listed are passed over."""
    todo = [top]
    while todo:
        try:
            entries = _scan(todo.pop())
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                todo.append(Path(entry.path))
            yield entry.path, st


def footprint(st: os.stat_result) -> int:
    """The bytes an entry costs kept: its blocks on disk (a one-byte file takes a block
    of 4 KiB, and so does a directory), and at least a regular file's size (a sparse
    file, which a copy across filesystems writes whole). Each name of a hard-linked file
    counts: a copy writes each."""
    blocks = getattr(st, "st_blocks", 0) * 512
    return max(blocks, st.st_size) if stat.S_ISREG(st.st_mode) else blocks


def tree_size(top: Path, max_entries: int | None = None) -> int:
    """The :func:`footprint` of ``top`` and everything below it; with ``max_entries``,
    :class:`TooMany` as soon as it holds more entries than that."""
    try:
        st = os.lstat(top)
    except OSError:
        return 0
    total = footprint(st)
    if not stat.S_ISDIR(st.st_mode):
        return total
    for entries, (_, st) in enumerate(_walk(top), 1):
        if max_entries is not None and entries > max_entries:
            raise TooMany(max_entries)
        total += footprint(st)
    return total


class TooMany(Exception):
    """A workspace with more entries than a kept workspace may hold."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


def sessions(root: Path) -> list[Path]:
    """The directories of kept workspaces in ``root``, oldest first: a directory of
    another name or without our ``.gitignore`` is not ours to remove."""
    try:
        entries = _scan(root)
    except OSError:
        return []
    found = [
        (_mtime(Path(e.path)), Path(e.path))
        for e in entries
        if e.is_dir(follow_symlinks=False) and is_kept_dir(Path(e.path))
    ]
    return [path for _, path in sorted(found)]


def make_room(place: KeepPlace, size: int) -> bool:
    """Remove the oldest workspaces kept by other sessions until ``size`` more bytes fit
    within the limit; whether they do. This session's own are never removed: its
    results file names them."""
    own = 0
    others: list[tuple[float, Path, int]] = []
    for session in sessions(place.root):
        try:
            entries = _scan(session)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            bytes_ = tree_size(path)
            if session == place.directory:
                own += bytes_
            else:
                others.append((_mtime(path), path, bytes_))
    total = own + sum(bytes_ for _, _, bytes_ in others)
    for _, path, bytes_ in sorted(others):
        if total + size <= place.max_bytes:
            break
        remove_tree(path)
        total -= bytes_
        _remove_if_empty(path.parent)
    return total + size <= place.max_bytes


def clean(root: Path, keep_last: int = 0) -> tuple[list[Path], int]:
    """Remove the ``*.workspaces`` directories of ``root`` but the newest ``keep_last``;
    what was removed, and how many bytes it held."""
    found = sessions(root)
    removed = found[: len(found) - keep_last] if keep_last else found
    freed = 0
    for path in removed:
        freed += tree_size(path)
        remove_tree(path)
    return removed, freed


def forget_others(place: KeepPlace, referenced: set[Path]) -> None:
    """Remove what the keep directory of a replaced results file holds but this run did
    not keep (an earlier run's workspace of a case that passed now); remove the
    directory when it is empty."""
    try:
        entries = _scan(place.directory)
    except OSError:
        return
    if place.replaces:
        for entry in entries:
            if not entry.name.startswith(".") and Path(entry.path) not in referenced:
                remove_tree(Path(entry.path))
    _remove_if_empty(place.directory)


def _remove_if_empty(directory: Path) -> None:
    """Remove a directory of kept workspaces that keeps none (its ``.gitignore`` aside)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    if all(name.startswith(".") for name in names):
        remove_tree(directory)


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything below it, also what the agent made read-only or
    unreadable; symlinks are removed, never followed."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return
    except OSError:
        return
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    # Top down, each directory opened before the walk lists it; a symlink (which
    # chmod would follow, out of the workspace) is not touched.
    for top, dirs, _ in os.walk(path):
        for name in dirs:
            child = os.path.join(top, name)
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(os.lstat(child).st_mode):
                    os.chmod(child, 0o700)
    shutil.rmtree(path, ignore_errors=True)


def _mtime(path: Path) -> float:
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return time.time()


def size_text(size: int) -> str:
    """``812 bytes``, ``5.03 kB``, ``12.5 MB``, ``1,234 MB``."""
    if size < 1000:
        return f"{size} bytes"
    if size < MB:
        return f"{size / 1000:.3g} kB"
    mb = size / MB
    return f"{mb:.3g} MB" if mb < 100 else f"{mb:,.0f} MB"


def _shown(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
