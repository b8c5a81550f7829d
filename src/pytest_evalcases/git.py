"""Running git: the one place the plugin calls it, through :func:`process.run`.

``--eval-changed`` and ``--eval-config git:REF`` both ask git about the repository; they
share the environment (no optional locks, C locale so that messages are stable), the
bounded wait and the way a missing git is reported.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from pytest_evalcases import process
from pytest_evalcases.process import ProcessResult

#: Seconds one git command may take.
GIT_TIMEOUT = 120.0
#: git's output is read whole (tree listings of large repositories are big).
MAX_OUTPUT = 1 << 30


class GitNotFound(Exception):
    """git is not installed (not on ``PATH``)."""


class GitTimedOut(Exception):
    """A git command ran longer than its timeout; the message is the command."""


def _env() -> dict[str, str]:
    # Read-only questions must not take the index lock another git process holds.
    return {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}


def run(
    repo: Path, args: Sequence[str], *, stdin: str | None = None, timeout: float = GIT_TIMEOUT
) -> ProcessResult:
    """``git -C repo ARGS``; the result whatever the exit status.

    Raises :class:`GitNotFound` and :class:`GitTimedOut`.
    """
    command = ["git", "-C", str(repo), *args]
    try:
        result = process.run(
            command, cwd=repo, env=_env(), timeout=timeout, stdin=stdin, max_output=MAX_OUTPUT
        )
    except FileNotFoundError:
        raise GitNotFound("git is not on PATH") from None
    if result.timed_out:
        raise GitTimedOut(f"git {' '.join(args)}")
    return result


def run_to_file(
    repo: Path,
    args: Sequence[str],
    output: Path,
    *,
    stdin: str | None = None,
    timeout: float = GIT_TIMEOUT,
) -> ProcessResult:
    """``git -C repo ARGS > output``: for binary output (file contents), which
    :func:`run` would decode as text. The result's ``stdout`` is empty."""
    command = shlex.join(["git", "-C", str(repo), *args]) + " > " + shlex.quote(str(output))
    # Through the shell, so a missing git is exit status 127 rather than an exception.
    command = "command -v git >/dev/null 2>&1 || exit 127; " + command
    result = process.run(
        command, cwd=repo, env=_env(), timeout=timeout, stdin=stdin, max_output=MAX_OUTPUT
    )
    if result.timed_out:
        raise GitTimedOut(f"git {' '.join(args)}")
    if result.returncode == 127:
        raise GitNotFound("git is not on PATH")
    return result
