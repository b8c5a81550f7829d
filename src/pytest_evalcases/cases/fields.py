"""The field types of case files shared by their models (:mod:`.schema`,
:mod:`.scripting`): regular expressions that compile, paths confined to the workspace,
kebab-case ids, fixture directories inside the evals root, strings without NUL."""

from __future__ import annotations

import posixpath
import re
import unicodedata
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from pytest_evalcases.cases import limits
from pytest_evalcases.cases.limits import shown


def _compile(pattern: str) -> str:
    try:
        re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {shown(pattern)}: {exc}") from None
    return pattern


def _confined(path: str) -> str:
    """Reject paths that leave the workspace before anything is read."""
    if not path.strip():
        raise ValueError("path is empty")
    if _absolute(path):
        raise ValueError(f"path {shown(path)} is absolute; paths are relative to the workspace")
    if _leaves(path):
        raise ValueError(f"path {shown(path)} escapes the workspace")
    return path


def _absolute(path: str) -> bool:
    return path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path) is not None


def _leaves(path: str) -> bool:
    """Whether ``path`` climbs above where it starts (``..``, ``a/../../b``)."""
    return posixpath.normpath(path.replace("\\", "/")).split("/")[0] == ".."


def _fixture_dir(cwd: str) -> str:
    """Refuse a ``cwd`` that names a directory outside the evals root before anything
    is copied from it (a symlink that leads out is refused by the loader)."""
    if _absolute(cwd):
        raise ValueError(
            f"{shown(cwd)} is absolute; a fixture directory is relative to the evals root"
        )
    if _leaves(cwd):
        raise ValueError(f"{shown(cwd)} leaves the evals root")
    return cwd


Regex = Annotated[
    str,
    Field(max_length=limits.PATTERN_CHARS),
    AfterValidator(_compile),
    Field(description="Python regular expression (re.search, MULTILINE); (?i) etc. work"),
]
WorkspacePath = Annotated[
    str,
    Field(max_length=limits.PATH_CHARS),
    AfterValidator(_confined),
    Field(description="Path relative to the workspace (globs where the check allows)"),
]
#: A case id: lowercase letters and digits in words joined by single hyphens.
KEBAB_CASE = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
KEBAB_RULE = "must be kebab-case: lowercase letters, digits and single hyphens"
KebabId = Annotated[str, Field(max_length=limits.ID_CHARS, pattern=KEBAB_CASE)]
Tag = Annotated[str, Field(max_length=limits.TAG_CHARS)]
AgentName = Annotated[str, Field(min_length=1, max_length=limits.TAG_CHARS)]
FixtureDir = Annotated[str, Field(max_length=limits.PATH_CHARS), AfterValidator(_fixture_dir)]


def kebab_case(name: str) -> str | None:
    """The kebab-case id ``name`` most likely meant (``My_Task`` and ``MyTask`` are
    ``my-task``), for a "did you mean"; ``None`` when nothing of it is left."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", ascii_name)
    guess = re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")[: limits.ID_CHARS].strip("-")
    return guess or None


def no_nul(value: Any) -> Any:
    """A string with a NUL character validates, then fails as an argument, a path or an
    environment value (``embedded null byte``): refused here, where it names the field."""
    items = value if isinstance(value, (list, tuple)) else (value,)
    if any(isinstance(item, str) and "\x00" in item for item in items):
        raise ValueError("contains a NUL character (\\0), which no command or path can hold")
    return value
