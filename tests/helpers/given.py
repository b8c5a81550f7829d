"""Options and ini values for :func:`pytest_evalcases.session.settings.build` without a
pytest session: the defaults are the plugin's own declarations (``add_options``), read
through a stand-in for pytest's parser; a test sets what it needs on top."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from pytest_evalcases.plugin import options

#: What ``getini`` gives for an ini setting declared without a default, by its type.
_EMPTY: dict[object, Any] = {"args": [], "linelist": [], "paths": [], "bool": False}


class _Group:
    def __init__(self, found: dict[str, Any]) -> None:
        self.found = found

    def addoption(self, *flags: str, dest: str, default: Any = None, **_: Any) -> None:
        self.found[dest] = default


class _Parser:
    """Records the declared defaults, as pytest's parser would apply them."""

    def __init__(self) -> None:
        self.options: dict[str, Any] = {}
        self.ini: dict[str, Any] = {}

    def getgroup(self, name: str, description: str = "") -> _Group:
        return _Group(self.options)

    def addini(self, name: str, help: str, type: Any = None, default: Any = None) -> None:
        self.ini[name] = _EMPTY.get(type, "") if default is None else default


def _declared() -> _Parser:
    parser = _Parser()
    options.add_options(parser)  # type: ignore[arg-type]
    return parser


class Given:
    """A session's options and ini values: the declared defaults, with ``option`` and
    ``ini`` on top; the directories it makes are below the rootdir."""

    def __init__(
        self,
        rootdir: Path,
        *,
        invocation_dir: Path | None = None,
        option: dict[str, Any] | None = None,
        ini: dict[str, Any] | None = None,
    ) -> None:
        declared = _declared()
        self.rootdir = rootdir
        self.invocation_dir = invocation_dir or rootdir
        self.options = {**declared.options, **(option or {})}
        # pytest's own, which the settings read too.
        self.inis = {"tmp_path_retention_policy": "all", **declared.ini, **(ini or {})}

    def option(self, name: str) -> Any:
        return self.options[name]

    def ini(self, name: str) -> Any:
        return self.inis[name]

    def session_dir(self, prefix: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=prefix, dir=self.rootdir))
