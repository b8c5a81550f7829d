"""``--eval-changed[=REF]``: which files changed since a git revision, and which cases
they touch: a case whose case file, fixture or ``defends`` path changed
(docs/writing-cases.md#selecting-cases).

Plain git through :mod:`pytest_evalcases.git` (no pytest). "Changed" is everything a
pull request would show plus the work in progress: commits since the merge base of REF
and ``HEAD``, staged and unstaged changes, and untracked files (not ignored ones) —
except what the plugin itself writes (results files, the HTML report): a run must not
select cases because an earlier run left its results behind.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pytest_evalcases import git
from pytest_evalcases.errors import UsageError
from pytest_evalcases.process import ProcessResult

#: Candidates for the default branch, in order; the first that exists is used.
DEFAULT_BRANCHES = ("origin/HEAD", "main", "master")
GIT_TIMEOUT = 60.0


@dataclass(frozen=True)
class ChangedFiles:
    """Files changed since ``base``, relative to the directory ``defends`` starts from."""

    #: What the user asked for (``REF``) or the default branch that was found.
    ref: str
    #: The commit compared with (the merge base), or ``None`` in a repository with no
    #: commit yet.
    base: str | None
    #: POSIX paths relative to the ``defends`` root; files outside it are left out.
    paths: tuple[str, ...]
    #: Every changed file of the repository, absolute and resolved: case files and
    #: fixtures need not lie below the ``defends`` root.
    files: tuple[Path, ...] = ()

    def touches(self, path: Path) -> bool:
        """Whether ``path`` (a file, or a directory such as a fixture) is or holds a
        changed file."""
        wanted = path.resolve()
        return any(f == wanted or wanted in f.parents for f in self.files)

    def selects(self, defends: str) -> bool:
        """Whether a case defending ``defends`` (a file, or a directory) is affected."""
        if not defends:
            return False
        wanted = PurePosixPath(defends.replace("\\", "/")).as_posix().rstrip("/")
        if wanted in ("", "."):
            return bool(self.paths)
        return any(p == wanted or p.startswith(wanted + "/") for p in self.paths)

    def describe(self) -> str:
        """``main (merge base 1a2b3c4d)``, for the terminal header."""
        if self.base is None:
            return f"{self.ref} (no commit yet)"
        return f"{self.ref} (merge base {self.base[:8]})"


def _git(repo: Path, *args: str) -> ProcessResult:
    try:
        return git.run(repo, args, timeout=GIT_TIMEOUT)
    except git.GitNotFound:
        raise UsageError("--eval-changed needs git, which is not on PATH") from None
    except git.GitTimedOut:
        raise UsageError(f"--eval-changed: git {' '.join(args)} timed out in {repo}") from None


def _commit(repo: Path, ref: str) -> str | None:
    done = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    return done.stdout.strip() if done.returncode == 0 else None


def changed_files(
    directory: Path,
    ref: str | None,
    defends_root: Path | None = None,
    exclude: Sequence[Path] = (),
) -> ChangedFiles:
    """The files changed in the repository of ``directory`` since ``ref`` (``None``: the
    default branch: ``origin/HEAD``, else ``main``, else ``master``, else ``HEAD``),
    leaving out the files and directories of ``exclude`` (the results directory).

    Raises :class:`UsageError` when ``directory`` is not in a git repository or ``ref``
    is not a revision of it.
    """
    top_run = _git(directory, "rev-parse", "--show-toplevel")
    if top_run.returncode != 0:
        raise UsageError(
            f"--eval-changed: {directory} is not in a git repository "
            f"({top_run.stderr.strip() or 'git rev-parse failed'})"
        )
    top = Path(top_run.stdout.strip())
    head = _commit(top, "HEAD")
    if ref is not None:
        target = _commit(top, ref)
        if target is None:
            raise UsageError(
                f"--eval-changed: {ref!r} is not a commit of the git repository at {top} "
                "(write --eval-changed=REF; a bare --eval-changed compares with the default "
                "branch)"
            )
        label = ref
    else:
        label, target = "HEAD", head
        for candidate in DEFAULT_BRANCHES:
            found = _commit(top, candidate)
            if found is not None:
                label, target = candidate, found
                break
    base = target
    if head is not None and target is not None and target != head:
        merge = _git(top, "merge-base", target, head)
        if merge.returncode == 0 and merge.stdout.strip():
            base = merge.stdout.strip()
    paths: set[str] = set()
    if base is not None:
        paths.update(_names(top, "diff", "--name-only", "--no-renames", "-z", base, "--"))
    else:
        paths.update(_names(top, "diff", "--name-only", "--no-renames", "-z", "--cached", "--"))
    paths.update(_names(top, "ls-files", "--others", "--exclude-standard", "-z"))
    if exclude:
        left_out = [str(p.resolve()) for p in exclude]
        resolved = top.resolve()
        paths = {n for n in paths if not _below(str(resolved / n), left_out)}
    return ChangedFiles(
        ref=label,
        base=base,
        paths=_relative(top, paths, defends_root or directory),
        files=tuple(top.resolve() / name for name in sorted(paths)),
    )


def _below(path: str, places: Sequence[str]) -> bool:
    return any(path == p or path.startswith(p.rstrip(os.sep) + os.sep) for p in places)


def _names(top: Path, *args: str) -> list[str]:
    done = _git(top, "-c", "core.quotepath=off", *args)
    if done.returncode != 0:
        raise UsageError(f"--eval-changed: git {args[0]} failed in {top}: {done.stderr.strip()}")
    return [name for name in done.stdout.split("\0") if name]


def _relative(top: Path, names: set[str], root: Path) -> tuple[str, ...]:
    """Repository paths as paths relative to ``root``; those outside it dropped."""
    root = root.resolve()
    top = top.resolve()
    out: list[str] = []
    for name in sorted(names):
        try:
            out.append((top / name).relative_to(root).as_posix())
        except ValueError:
            continue
    return tuple(out)
