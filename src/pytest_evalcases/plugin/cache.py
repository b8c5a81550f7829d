"""The parse cache kept in pytest's cache (``.pytest_cache``) between runs.

An entry is valid only for the plugin that wrote it: its key is the plugin's version
and the size and modification time of every module of the installed package, so an
upgrade or an edit of an editable install invalidates what earlier runs cached, and a
module moved or added cannot be forgotten by a list of names.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from pytest_evalcases import __version__
from pytest_evalcases.cases.parsecache import ParseCache

#: The key of the parsed case files in pytest's cache.
PARSE_CACHE_KEY = "evalcases/parsed"
#: The installed package whose modules decide whether a case file is valid.
PACKAGE_DIR = Path(__file__).resolve().parent.parent


def cache_version(package_dir: Path = PACKAGE_DIR) -> str:
    """The plugin's version and a digest of ``path:size:mtime`` of every ``.py`` file
    under ``package_dir``, in path order."""
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


def load(config: pytest.Config) -> ParseCache | None:
    """The case files parsed by earlier runs, from pytest's cache (``-p no:cacheprovider``
    and ``--cache-clear`` do without)."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return None
    stored = cache.get(PARSE_CACHE_KEY, None)
    if isinstance(stored, dict) and stored.get("version") == cache_version():
        files = stored.get("files")
        return ParseCache(files if isinstance(files, dict) else None)
    return ParseCache()


def save(config: pytest.Config, parse_cache: ParseCache | None, *, writer: bool) -> None:
    """Store what this run parsed, when it changed; ``writer`` is whether this process
    writes (under xdist every worker collects the same files: one of them writes)."""
    cache = getattr(config, "cache", None)
    if cache is None or parse_cache is None or not parse_cache.changed or not writer:
        return
    cache.set(PARSE_CACHE_KEY, {"version": cache_version(), "files": parse_cache.files})
