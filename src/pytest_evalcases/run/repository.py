"""Without a sandbox, the git work tree a run must leave as it found it: what it held
before the run, and the files the run changed there (docs/sandbox.md, "Without
bubblewrap"). A change is an ``escaped-workspace`` error."""

from __future__ import annotations

from pytest_evalcases import containment
from pytest_evalcases.errors import RunError
from pytest_evalcases.run.runner import RunContext


def watch(ctx: RunContext) -> containment.TreeState | None:
    """Without a sandbox, the repository's working tree before the run. A repository
    that git read at the session's start and cannot read now (an earlier run broke it)
    leaves the run unwatched: it is an ``escaped-workspace`` error, not run."""
    if ctx.sandbox.contained or ctx.repository is None:
        return None
    state = containment.tree_state(ctx.repository)
    if state is None:
        raise RunError(
            f"git cannot read the repository ({ctx.repository}) any more, so what the run "
            "would change there cannot be seen (did an earlier run change it?); runs are "
            "not contained (eval_sandbox = none): see docs/sandbox.md",
            kind="escaped-workspace",
        )
    return state


def check_tree(ctx: RunContext, before: containment.TreeState) -> None:
    """An ``escaped-workspace`` error naming the files of the repository's working tree
    that the run changed (docs/sandbox.md, "Without bubblewrap")."""
    after = containment.tree_state(before.root, since=before)
    if after is None:
        return
    changed = [
        path
        for path in containment.changed_files(before, after, ignore=ctx.session_paths)
        if not _SESSION_NAMES.intersection(path.split("/"))
    ]
    if changed:
        shown = ", ".join(changed[:10]) + (
            f" and {len(changed) - 10} more" if len(changed) > 10 else ""
        )
        raise RunError(
            f"the run changed the repository outside its workspace ({before.root}): {shown}; "
            "runs are not contained (eval_sandbox = none): see docs/sandbox.md",
            kind="escaped-workspace",
        )


#: Directories that pytest itself writes in the repository during a session.
_SESSION_NAMES = frozenset({"__pycache__", ".pytest_cache"})
