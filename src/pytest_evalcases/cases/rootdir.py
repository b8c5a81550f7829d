"""Where ``defends`` paths start, for the commands that run outside pytest
(``evalcases lint``): pytest's rootdir and ``eval_config_root``, found the way pytest
finds its configuration file.

Inside pytest the plugin asks pytest; here the configuration files are read directly,
in pytest's order of precedence, so that both give the same answer.
"""

from __future__ import annotations

import configparser
import os
import sys
from pathlib import Path
from typing import Any

from pytest_evalcases import defaults

#: pytest's configuration files, in the order pytest tries them in each directory.
CONFIG_FILES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
#: Without a pytest configuration file, pytest's rootdir is the nearest directory with
#: one of these (a ``pyproject.toml`` first, at any depth, then a ``setup.py``).
FALLBACK_MARKERS = ("pyproject.toml", "setup.py")


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The rootdir and the pytest settings of the configuration file pytest would use
    for ``start``; ``None`` when there is none."""
    start = start.resolve()
    here = start if start.is_dir() else start.parent
    for candidate in (here, *here.parents):
        for name in CONFIG_FILES:
            path = candidate / name
            if not path.is_file():
                continue
            settings = pytest_settings(path)
            if settings is not None:
                return candidate, settings
    return None


def defends_root(start: Path, invocation_dir: Path | None = None) -> Path:
    """The directory ``defends`` paths are relative to, for case files at ``start``, as
    pytest started in ``invocation_dir`` (default: the current directory) on them has
    it: the ``eval_config_root`` of pytest's configuration file, else its directory
    (the rootdir). Without one, pytest's rootdir is the nearest directory with a
    ``pyproject.toml``, else with a ``setup.py``, else the deepest directory holding
    both ``invocation_dir`` and ``start`` (``start`` when that is the filesystem root)."""
    found = find_config(start)
    if found is not None:
        rootdir, settings = found
        value = settings.get("eval_config_root")
        return rootdir / str(value).strip() if value else rootdir
    here = start.resolve() if start.resolve().is_dir() else start.resolve().parent
    for marker in FALLBACK_MARKERS:
        for candidate in (here, *here.parents):
            if (candidate / marker).is_file():
                return candidate
    invoked = (invocation_dir or Path.cwd()).resolve()
    common = Path(os.path.commonpath([invoked, here]))
    return here if common == Path(common.anchor) else common


def results_dir(start: Path) -> Path:
    """Where pytest run at ``start`` writes results files: ``eval_results_dir`` of its
    configuration file (relative to the rootdir), else the default there; without a
    configuration file, the default relative to ``start``."""
    found = find_config(start)
    if found is None:
        return defaults.RESULTS_DIR
    rootdir, settings = found
    value = settings.get("eval_results_dir")
    return rootdir / (str(value).strip() if value else defaults.RESULTS_DIR)


def pytest_settings(path: Path) -> dict[str, Any] | None:
    """The pytest settings that ``path`` holds, or ``None`` when pytest would pass it
    over (a ``tox.ini`` without ``[pytest]``, say). ``pytest.ini`` and ``pytest.toml``
    count even when empty, as they do for pytest."""
    name = path.name
    if name.endswith(".toml"):
        data = _toml(path)
        if data is None:
            return None
        if name != "pyproject.toml":
            table = data.get("pytest")
            return table if isinstance(table, dict) else {}
        tool = data.get("tool")
        pytest_table = tool.get("pytest") if isinstance(tool, dict) else None
        if not isinstance(pytest_table, dict):
            return None
        ini_options = pytest_table.get("ini_options")
        return ini_options if isinstance(ini_options, dict) else pytest_table
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    section = "tool:pytest" if name == "setup.cfg" else "pytest"
    if parser.has_section(section):
        return dict(parser.items(section))
    return {} if name in ("pytest.ini", ".pytest.ini") else None


def _toml(path: Path) -> dict[str, Any] | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pytest itself depends on tomli before Python 3.11
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return data if isinstance(data, dict) else None
