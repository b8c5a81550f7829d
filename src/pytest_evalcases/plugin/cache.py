"""The parse cache kept in pytest's cache (``.pytest_cache``) between runs, under the
key :func:`pytest_evalcases.cases.parsecache.cache_version`: an entry is valid only for
the plugin that wrote it."""

from __future__ import annotations

import pytest

from pytest_evalcases.cases.parsecache import ParseCache, cache_version

#: The key of the parsed case files in pytest's cache.
PARSE_CACHE_KEY = "evalcases/parsed"


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
