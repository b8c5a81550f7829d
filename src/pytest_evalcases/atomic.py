"""Writing report files atomically: a reader never sees half a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pytest_evalcases.errors import EvalcasesError


def write_atomic(path: Path, text: str, *, replace: bool = True) -> Path:
    """Write ``text`` to ``path`` through a temporary file renamed into place, and return
    where it landed.

    Unless ``replace``, an existing file is never overwritten: the name gets a ``-1``,
    ``-2``, ... suffix instead (two runs in the same millisecond, two shards writing into
    one directory). The file gets the permissions the umask allows, like any other.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".tmp-{path.stem}-", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes the file private
        if replace:
            os.replace(tmp, path)
            return path
        return _place(Path(tmp), path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _place(tmp: Path, path: Path) -> Path:
    for n in range(10_000):
        target = path if n == 0 else path.with_name(f"{path.stem}-{n}{path.suffix}")
        try:
            # A hard link fails when the name exists: no-clobber and atomic.
            os.link(tmp, target)
            return target
        except FileExistsError:
            continue
        except OSError:
            # Filesystems without hard links: check, then rename.
            if target.exists():
                continue
            os.replace(tmp, target)
            return target
    raise EvalcasesError(f"{path}: no free file name")
