"""Running git: the one place the plugin calls it, through :func:`process.run`.

``--eval-changed``, ``--eval-config git:REF`` and the working-tree check of runs without
a sandbox ask git about the repository; they share the environment (no optional locks, C
locale so that messages are stable), the bounded wait and the way a missing git is
reported. An agent without a sandbox may have written the repository's configuration (or
the user's), so no git command here runs a program that configuration names: the
settings that would (a file-system monitor, hooks, a pager, credential helpers, an
editor) are overridden on every command line (docs/sandbox.md, "Without bubblewrap");
:func:`filter_overrides` does the same for content filters. No command here prints a
patch, the one output for which git runs ``diff.external``.
"""

from __future__ import annotations

import os
import re
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


#: ``-c`` settings that keep a git command from running what a configuration names. They
#: outrank every configuration file, the system's, the user's and the repository's, and
#: reach the git commands git itself starts (in submodules).
NEUTRAL = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=true",
    "core.askPass=",
    "core.sshCommand=false",
    "core.alternateRefsCommand=",
    "sequence.editor=true",
    "credential.helper=",
    "gpg.program=false",
    "protocol.allow=never",
)
#: Variables that would name a program; the user's, but dropped all the same.
_PROGRAM_VARIABLES = ("GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _PROGRAM_VARIABLES}
    # Read-only questions must not take the index lock another git process holds.
    env.update(GIT_OPTIONAL_LOCKS="0", LC_ALL="C", GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0")
    return env


#: The commands that run content filters on the working tree's files.
_FILTERING = frozenset({"status", "diff", "add", "archive", "checkout", "restore", "stash"})


def _command(repo: Path, args: Sequence[str], filters: Sequence[str] | None) -> list[str]:
    neutral = [option for setting in NEUTRAL for option in ("-c", setting)]
    if args and args[0] in _FILTERING:
        neutral += filter_overrides(repo) if filters is None else filters
    return ["git", *neutral, "-C", str(repo), *args]


def run(
    repo: Path,
    args: Sequence[str],
    *,
    stdin: str | None = None,
    timeout: float = GIT_TIMEOUT,
    filters: Sequence[str] | None = None,
) -> ProcessResult:
    """``git -C repo ARGS``; the result whatever the exit status. ``filters``: the
    :func:`filter_overrides` when the caller has them already.

    Raises :class:`GitNotFound` and :class:`GitTimedOut`.
    """
    command = _command(repo, args, filters)
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
    filters: Sequence[str] | None = None,
) -> ProcessResult:
    """``git -C repo ARGS > output``: for binary output (file contents), which
    :func:`run` would decode as text. The result's ``stdout`` is empty."""
    command = shlex.join(_command(repo, args, filters)) + " > " + shlex.quote(str(output))
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


def filter_overrides(repo: Path) -> list[str]:
    """``-c`` options that turn off every content filter the configuration defines
    (``filter.NAME.clean``, ``smudge``, ``process``): ``git status`` and ``git diff`` run
    a clean filter on a file whose timestamps changed. Reading the configuration runs
    nothing. Empty when there is none, or git cannot say. (Git LFS is such a filter:
    without it, a file whose timestamps changed since the index was written compares as
    its content, not its pointer, and counts as changed.)"""
    return filters_in(run(repo, CONFIG_LIST).stdout)


#: The configuration git reads, each setting after the file it comes from.
CONFIG_LIST = ("config", "--list", "-z", "--show-origin")


def filters_in(listing: str) -> list[str]:
    """The :func:`filter_overrides` of a listing of :data:`CONFIG_LIST`."""
    fields = listing.split("\0")
    overrides: list[str] = []
    for setting in fields[1::2]:
        key = setting.partition("\n")[0]
        if _FILTER_KEY.fullmatch(key.lower()) and f"{key}=" not in overrides:
            overrides += ["-c", f"{key}="]
    return overrides


_FILTER_KEY = re.compile(r"filter\..+\.(?:clean|smudge|process)")
