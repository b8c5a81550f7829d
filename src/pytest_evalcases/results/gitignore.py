"""The note to keep the results directory out of git (docs/results.md, "The results
file"), said after a run and by ``evalcases new``."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from pytest_evalcases import git

#: Seconds each of the two git questions of :func:`ignore_hint` may take.
GIT_TIMEOUT = 10.0


def ignore_hint(directory: Path, here: Path) -> str:
    """A note to ignore the results directory ``directory`` in git, when it is in a git
    work tree that does not ignore it: every pytest run writes a file there, which does
    not belong in a commit (docs/results.md, "The results file"). Paths are shown
    relative to ``here``. Empty otherwise, also without git or when git fails."""
    # The directory may not exist yet (``evalcases new`` asks before any run).
    start = next((p for p in (directory, *directory.parents) if p.is_dir()), None)
    if start is None:
        return ""
    try:
        top = git.run(start, ["rev-parse", "--show-toplevel"], timeout=GIT_TIMEOUT)
        if top.returncode != 0:
            return ""
        root = Path(top.stdout.strip()).resolve()
        try:
            inside = directory.resolve().relative_to(root).as_posix()
        except ValueError:
            return ""
        probe = git.run(
            root,
            # An agent may have written to the repository: git.run runs nothing its
            # configuration names, and --no-index reads no index.
            ["check-ignore", "-q", "--no-index", f"{inside}/run.json"],
            timeout=GIT_TIMEOUT,
        )
    except (git.GitNotFound, git.GitTimedOut):
        return ""
    # check-ignore: 0 ignored, 1 not ignored, 128 a problem (say nothing then).
    if probe.returncode != 1:
        return ""
    ignore = os.path.relpath(root / ".gitignore", here)
    shown = Path(os.path.relpath(directory, here)).as_posix()
    return (
        f"every pytest run writes a results file to {shown}/, which git "
        f"does not ignore; keep them out of commits: echo {shlex.quote('/' + inside + '/')} "
        f">> {shlex.quote(ignore)}"
    )
