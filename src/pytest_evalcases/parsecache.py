"""Parsed case files kept between runs, so that unchanged files skip the YAML parser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class ParseCache:
    """Parsed case files by path, valid while the file's modification time, size and
    inode stay the same.

    Constructing Python objects from YAML is most of what collecting a case file costs;
    an unchanged file skips it (and is still validated, so new check types apply). The
    plugin keeps the entries in pytest's cache directory.
    """

    def __init__(self, files: dict[str, Any] | None = None) -> None:
        self.files: dict[str, Any] = files or {}
        self.changed = False

    @staticmethod
    def _stamp(path: Path) -> list[int] | None:
        try:
            st = path.stat()
        except OSError:
            return None
        return [st.st_mtime_ns, st.st_size, st.st_ino]

    def get(self, path: Path) -> tuple[Any, list[int]] | None:
        """The parsed data and the cases' 0-based lines, when still valid."""
        entry = self.files.get(str(path))
        if not isinstance(entry, list) or len(entry) != 3:
            return None
        if entry[0] != self._stamp(path):
            return None
        return entry[1], entry[2]

    def put(self, path: Path, data: Any, lines: list[int]) -> None:
        stamp = self._stamp(path)
        if stamp is None:
            return
        try:
            json.dumps(data)
        except (TypeError, ValueError):
            return  # YAML dates and the like: parse this file every time
        self.files[str(path)] = [stamp, data, lines]
        self.changed = True
