"""Whether a pytest session gives the plugin a reason to look at its settings: an
``--eval-*`` option given, or an ``eval_*`` value the configuration may set
(docs/reference.md, "Sessions without eval cases"). Imported by every pytest session
that has the plugin installed: it stays small."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from pathlib import Path

#: The prefix of every command-line option of the plugin.
OPTION_PREFIX = "--eval-"
#: The prefix of every ini value of the plugin, and a line of a configuration file
#: (INI or TOML) that sets one.
INI_PREFIX = "eval_"
INI_LINE = re.compile(rf"^\s*{INI_PREFIX}\w+\s*[=:]", re.MULTILINE)


def eval_option_given(arguments: Iterable[object]) -> bool:
    """Whether an ``--eval-*`` option is among ``arguments`` (the command line's and the
    ini's ``addopts``) or in ``PYTEST_ADDOPTS`` (pytest accepts no abbreviation of an
    option's name)."""
    given = [*arguments, *shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))]
    return any(str(arg).startswith(OPTION_PREFIX) for arg in given)


def sets_ini(overrides: Iterable[object], inipath: Path | None) -> bool:
    """Whether ``-o`` (``overrides``), or the configuration file at ``inipath``, may set
    an ``eval_*`` value: a line of the file that starts with one is enough (a session
    that runs no case then still checks its settings)."""
    if any(str(o).lstrip().startswith(INI_PREFIX) for o in overrides):
        return True
    if inipath is None:
        return False
    try:
        text = inipath.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return True
    return INI_LINE.search(text) is not None
