"""A run's changes to its workspace as stored (docs/replay.md, "What else is stored"):
what it added or changed against the :func:`~pytest_evalcases.run.workspace.snapshot`
of the fixture as populated, as a gzipped tar archive with the secrets of the
environment redacted, and what it deleted; laid back over a fresh copy of the fixture
by :func:`restore`, never outside it nor through a symlink."""

from __future__ import annotations

import io
import os
import shutil
import stat
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_evalcases.recording.format import RecordingError
from pytest_evalcases.redact import Redactor
from pytest_evalcases.run.workspace import EntryState

#: The archive of the files a run added or changed.
CHANGES = "changes.tar.gz"


class CorruptRecording(RecordingError):
    """A stored run (its ``run.json`` or changes archive) that cannot be read back: the
    message names the file. A :class:`RecordingError`, as an unreadable exchange is."""


@dataclass(frozen=True)
class Omitted:
    """A changed path left out of the archive, and why."""

    path: str
    bytes: int
    #: ``size``, ``entries`` (past ``CHANGES_MAX_ENTRIES``; the path ``.``: the
    #: workspace held more than ``WORKSPACE_MAX_ENTRIES``, and no change is stored), ``not
    #: a regular file or symlink``, ``unreadable``, ``its name holds a secret``.
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "bytes": self.bytes, "reason": self.reason}


@dataclass(frozen=True)
class Changes:
    """What a run changed in its workspace, as stored."""

    #: The archive's name in the run's directory; ``None`` when nothing was added or changed.
    archive: str | None = None
    #: Files, symlinks and directories in the archive.
    entries: int = 0
    #: Bytes of file content in the archive, before compression.
    bytes: int = 0
    #: Paths of the fixture as populated that the run removed (a removed directory
    #: alone, not its contents).
    deleted: tuple[str, ...] = ()
    omitted: tuple[Omitted, ...] = ()
    #: Files whose content held a secret of the environment, stored redacted.
    redacted: tuple[str, ...] = ()

    @property
    def truncated(self) -> bool:
        return any(o.reason in ("size", "entries") for o in self.omitted)

    def to_dict(self) -> dict[str, Any]:
        return {
            "archive": self.archive,
            "entries": self.entries,
            "bytes": self.bytes,
            "deleted": list(self.deleted),
            "truncated": self.truncated,
            "omitted": [o.to_dict() for o in self.omitted],
            "redacted": list(self.redacted),
        }


def archive(
    workspace: Path,
    before: Mapping[str, EntryState],
    after: Mapping[str, EntryState],
    redact: Redactor,
    max_bytes: int,
    max_entries: int,
) -> tuple[bytes | None, Changes]:
    """The archive of what was added or changed (``None`` when nothing was), and its
    description: at most ``max_bytes`` of file content and ``max_entries`` entries, the
    rest listed as omitted."""
    buffer = io.BytesIO()
    entries = 0
    budget = max_bytes
    omitted: list[Omitted] = []
    redacted: list[str] = []
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as tar:
        for rel in sorted(after):
            state = after[rel]
            if not _changed(before.get(rel), state):
                continue
            if entries >= max_entries:
                omitted.append(Omitted(rel, state[1], "entries"))
                continue
            if redact(rel) != rel:
                # Names are listed in clear in the archive: a name is never redacted.
                omitted.append(Omitted(rel, state[1], "its name holds a secret"))
                continue
            info = _info(rel, state)
            info.linkname = redact(info.linkname)
            path = workspace / rel
            if stat.S_ISDIR(state[0]) or stat.S_ISLNK(state[0]):
                tar.addfile(info)
                entries += 1
                continue
            if not stat.S_ISREG(state[0]):
                omitted.append(Omitted(rel, state[1], "not a regular file or symlink"))
                continue
            if state[1] > budget:
                omitted.append(Omitted(rel, state[1], "size"))
                continue
            try:
                data = _read(path)
            except OSError:
                omitted.append(Omitted(rel, state[1], "unreadable"))
                continue
            scrubbed = _redacted(data, redact)
            if scrubbed != data:
                redacted.append(rel)
            budget -= len(data)
            info.size = len(scrubbed)
            tar.addfile(info, io.BytesIO(scrubbed))
            entries += 1
    deleted = _deleted(before, after)
    changes = Changes(
        archive=CHANGES if entries else None,
        entries=entries,
        bytes=max_bytes - budget,
        deleted=tuple(deleted),
        omitted=tuple(omitted),
        redacted=tuple(redacted),
    )
    return (buffer.getvalue() if entries else None), changes


def _changed(before: EntryState | None, after: EntryState) -> bool:
    """Whether an entry is stored: new, or changed. A directory that was there is
    stored only when its mode or kind changed (its mtime changes with its contents,
    which are stored on their own)."""
    if before is None:
        return True
    if stat.S_ISDIR(after[0]) and stat.S_ISDIR(before[0]):
        return before[0] != after[0]
    return before != after


def _deleted(before: Mapping[str, EntryState], after: Mapping[str, EntryState]) -> list[str]:
    """The paths that went, a directory alone without its contents; a path whose kind
    changed (a directory became a file) is restored from the archive instead."""
    gone = sorted(rel for rel in before if rel not in after)
    top: list[str] = []
    for rel in gone:
        if top and rel.startswith(top[-1] + os.sep):
            continue
        top.append(rel)
    return [rel.replace(os.sep, "/") for rel in top]


def _info(rel: str, state: EntryState) -> tarfile.TarInfo:
    mode, _, mtime_ns, target = state
    info = tarfile.TarInfo(rel.replace(os.sep, "/"))
    info.mode = stat.S_IMODE(mode)
    info.mtime = mtime_ns // 1_000_000_000
    if stat.S_ISDIR(mode):
        info.type = tarfile.DIRTYPE
    elif stat.S_ISLNK(mode):
        info.type = tarfile.SYMTYPE
        info.linkname = target
    return info


def _read(path: Path) -> bytes:
    """A regular file's bytes, never through a symlink (one swapped in since the walk)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        return f.read()


def _redacted(data: bytes, redact: Redactor) -> bytes:
    """``data`` with the environment's secrets redacted; bytes that are not UTF-8 pass
    through as they are, and so does a file with no hint of a secret, unread."""
    if not redact.may_change(data):
        return data
    text = data.decode("utf-8", "surrogateescape")
    scrubbed = redact(text)
    return data if scrubbed == text else scrubbed.encode("utf-8", "surrogateescape")


def restore(stored: Changes, directory: Path, workspace: Path, named: Path) -> None:
    """Lay the changes stored in ``directory`` over ``workspace`` (a fresh copy of the
    fixture with the variant's overlays): the deleted paths go, the archive's entries
    are written; ``named``: the file an error about a deleted path names.
    Nothing is written outside ``workspace`` nor through a symlink; a
    :class:`CorruptRecording` names the archive when an entry would be."""
    for rel in stored.deleted:
        target = _target(workspace, rel, named)
        _remove(target)
    if stored.archive is None:
        return
    path = directory / stored.archive
    modes: list[tuple[Path, int]] = []
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            for info in tar:
                target = _target(workspace, info.name, path)
                _remove(target, keep_dir=info.isdir())
                if info.isdir():
                    target.mkdir(exist_ok=True)
                    # Set at the end: a read-only directory would refuse its contents.
                    modes.append((target, info.mode))
                elif info.issym():
                    os.symlink(info.linkname, target)
                elif info.isfile():
                    source = tar.extractfile(info)
                    assert source is not None
                    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                    with os.fdopen(os.open(target, flags, 0o600), "wb") as f:
                        shutil.copyfileobj(source, f)
                    os.chmod(target, info.mode)
                else:
                    raise CorruptRecording(f"{path}: {info.name}: not a file, link or directory")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise CorruptRecording(f"{path}: {exc}") from None
    for directory, mode in reversed(modes):
        os.chmod(directory, mode)


def _target(workspace: Path, rel: str, source: Path) -> Path:
    """``workspace/rel``, refused when ``rel`` leaves the workspace or goes through a
    symlink in it."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        raise CorruptRecording(f"{source}: {rel!r} is not a path inside the workspace")
    here = workspace
    for part in parts[:-1]:
        here = here / part
        if os.path.islink(here) or not here.is_dir():
            raise CorruptRecording(f"{source}: {rel!r}: {here} is not a directory")
    return workspace.joinpath(*parts)


def _remove(path: Path, *, keep_dir: bool = False) -> None:
    """Whatever is at ``path``, not following a symlink; a directory stays when
    ``keep_dir`` (a directory is restored over it)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        if not keep_dir:
            shutil.rmtree(path)
    else:
        path.unlink()
