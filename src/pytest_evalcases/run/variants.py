"""Configuration variants for A/B runs: ``--eval-config NAME=SOURCE`` and
``--eval-variant NAME=KEY:VALUE,...`` (docs/variants.md), and the session's variants
they give, or its graded directories give (:func:`session_variants`), each with its
agent (:func:`variant_agents`).

A SOURCE is turned into the overlays that :func:`~pytest_evalcases.run.workspace.populate`
lays over every workspace of the variant:

* a directory: its contents at the workspace root;
* a single file: at its path relative to the configuration root (a file outside it
  lands at the workspace root under its own name);
* ``.``: the configuration files of the working tree (:func:`config_files`);
* ``git:REF``: the configuration files as they are at the revision REF of the
  repository that holds the configuration root; ``git:REF:PATH``: that file at its
  path, or that directory's contents at the workspace root.

``.`` and ``git:`` sources are copied once per session into a cache directory, so every
run of the variant sees the same bytes even if the working tree changes meanwhile, and
git is asked once, not once per run. Plain Python: the pytest layer turns
:class:`~pytest_evalcases.errors.UsageError` into ``pytest.UsageError``.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pytest_evalcases import defaults, git
from pytest_evalcases.errors import UsageError
from pytest_evalcases.process import ProcessResult
from pytest_evalcases.run.workspace import Overlay, Variant

if TYPE_CHECKING:
    from pytest_evalcases.agents.base import AgentSettings

#: The ini option ``eval_config_files``: what counts as agent configuration.
DEFAULT_CONFIG_FILES = defaults.CONFIG_FILES
GIT_PREFIX = "git:"
WORKING_TREE = "."
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


#: The keys of ``--eval-variant NAME=KEY:VALUE[,KEY:VALUE...]``.
VARIANT_KEYS = ("agent", "model", "args", "config")
#: A comma followed by ``KEY:`` starts the next pair; other commas belong to the value.
_PAIRS = re.compile(r",(?=\s*[A-Za-z_-]+\s*:)")


@dataclass(frozen=True)
class VariantSpec:
    """One ``--eval-config NAME=SOURCE`` or ``--eval-variant NAME=KEY:VALUE,...`` as
    given; a factor left out (``None``) takes the session's value."""

    name: str
    #: The configuration SOURCE; ``None``: the working tree's configuration files.
    source: str | None
    agent: str | None = None
    model: str | None = None
    args: tuple[str, ...] | None = None
    #: Where it was given (``--eval-config``, ``--eval-variant``, ``ini eval_variants``)
    #: and the value, for error messages.
    option: str = field(default="--eval-config", compare=False)
    given: str = field(default="", compare=False)

    @property
    def origin(self) -> str:
        return f"{self.option} {self.given or f'{self.name}={self.source}'}"


#: The name of the ``--eval-config`` spec before ``--eval-variant`` generalised it.
ConfigSpec = VariantSpec


def parse_spec(value: str) -> VariantSpec:
    """Parse ``--eval-config NAME=SOURCE``; the error quotes the value."""
    name, sep, source = value.partition("=")
    name = name.strip()
    if not sep or not name or not source.strip():
        raise UsageError(f"--eval-config expects NAME=SOURCE, got {value!r}")
    _check_name(name, f"--eval-config {value!r}")
    return VariantSpec(name, source.strip(), given=value)


def parse_variant(value: str, origin: str = "--eval-variant") -> VariantSpec:
    """Parse ``NAME=KEY:VALUE[,KEY:VALUE...]`` (docs/variants.md); ``origin`` names
    where it was given (the option, or ``ini eval_variants``) in the errors, which quote
    the value."""
    quoted = f"{origin} {value!r}"
    name, sep, rest = value.partition("=")
    name = name.strip()
    if not sep or not name or not rest.strip():
        raise UsageError(f"{origin} expects NAME=KEY:VALUE[,KEY:VALUE...], got {value!r}")
    _check_name(name, quoted)
    found: dict[str, str] = {}
    for pair in _PAIRS.split(rest):
        key, colon, val = pair.partition(":")
        key, val = key.strip(), val.strip()
        if not colon or not key:
            raise UsageError(f"{quoted}: expected KEY:VALUE, got {pair.strip()!r}")
        if key not in VARIANT_KEYS:
            raise UsageError(
                f"{quoted}: unknown key {key!r} (the keys are {', '.join(VARIANT_KEYS)})"
            )
        if key in found:
            raise UsageError(f"{quoted}: the key {key!r} is given twice")
        if not val and key != "args":
            raise UsageError(f"{quoted}: {key}: needs a value")
        found[key] = val
    args = None
    if "args" in found:
        try:
            args = tuple(shlex.split(found["args"]))
        except ValueError as exc:
            raise UsageError(f"{quoted}: args: cannot be split as a shell would: {exc}") from None
    return VariantSpec(
        name,
        found.get("config"),
        agent=found.get("agent"),
        model=found.get("model"),
        args=args,
        option=origin,
        given=value,
    )


def _check_name(name: str, quoted: str) -> None:
    if not _NAME.match(name):
        raise UsageError(
            f"{quoted}: the name {name!r} must be letters, digits, '.', '_' "
            "or '-' (it becomes part of item names such as case-id[name])"
        )


@dataclass(frozen=True)
class GitEntry:
    """A file of a git tree: where it lands in the workspace and what it is."""

    dest: str
    mode: str
    sha: str


def config_patterns(patterns: Iterable[str] | None) -> tuple[str, ...]:
    """The ``eval_config_files`` patterns, or the default ones when none are given."""
    given = tuple(p.strip().strip("/") for p in patterns or () if p.strip().strip("/"))
    return given or DEFAULT_CONFIG_FILES


def matches(rel_path: str, patterns: Iterable[str] | None = None) -> bool:
    """Whether ``rel_path`` (posix, relative to the configuration root) is a
    configuration file.

    Patterns are anchored at the root; ``*``, ``?`` and ``[...]`` match within one
    path segment and ``**`` matches any number of segments: ``AGENTS.md`` is the
    top-level file only, ``.claude/**`` everything below ``.claude``.
    """
    parts = tuple(PurePosixPath(rel_path).parts)
    return any(_match(parts, _segments(p)) for p in config_patterns(patterns))


def config_files(root: Path, patterns: Iterable[str] | None = None) -> list[str]:
    """The configuration files below ``root`` in the working tree, as sorted posix
    paths relative to ``root``.

    ``patterns`` is the ini option ``eval_config_files`` (default
    :data:`DEFAULT_CONFIG_FILES`). Directories no pattern can reach are not walked,
    ``.git`` never; symbolic links are listed, not followed.
    """
    pats = [_segments(p) for p in config_patterns(patterns)]
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).parts
        keep = []
        for d in sorted(dirnames):
            sub = (*rel_dir, d)
            if d == ".git":
                continue
            if os.path.islink(os.path.join(dirpath, d)):
                if any(_match(sub, p) for p in pats):
                    found.append("/".join(sub))
                continue
            if any(_reachable(sub, p) for p in pats):
                keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            rel = (*rel_dir, f)
            if any(_match(rel, p) for p in pats):
                found.append("/".join(rel))
    return sorted(found)


@lru_cache(maxsize=256)
def _segments(pattern: str) -> tuple[str, ...]:
    return tuple(s for s in pattern.split("/") if s and s != ".")


def _match(path: tuple[str, ...], pat: tuple[str, ...]) -> bool:
    if not pat:
        return not path
    if pat[0] == "**":
        # A trailing ``dir/**`` means what is below dir, not dir itself (as in gitignore).
        first = 1 if len(pat) == 1 else 0
        return any(_match(path[i:], pat[1:]) for i in range(first, len(path) + 1))
    return bool(path) and fnmatch.fnmatchcase(path[0], pat[0]) and _match(path[1:], pat[1:])


def _reachable(directory: tuple[str, ...], pat: tuple[str, ...]) -> bool:
    """Whether some path below ``directory`` can match ``pat``."""
    if not directory:
        return bool(pat)
    if not pat:
        return False
    if pat[0] == "**":
        return True
    return fnmatch.fnmatchcase(directory[0], pat[0]) and _reachable(directory[1:], pat[1:])


def build_variants(
    specs: Sequence[VariantSpec],
    *,
    config_root: Path,
    invocation_dir: Path,
    cache_dir: Path,
    patterns: Iterable[str] | None = None,
) -> tuple[Variant, ...]:
    """One :class:`Variant` per spec, in order (the first is the baseline).

    ``cache_dir`` is an empty directory that outlives the session's runs; ``.`` and
    ``git:`` sources are extracted below it.
    """
    pats = config_patterns(patterns)
    variants: list[Variant] = []
    tree: tuple[Overlay, ...] | None = None
    for index, spec in enumerate(specs):
        if any(v.name == spec.name for v in variants):
            raise UsageError(f"{spec.origin}: the name {spec.name!r} is given twice")
        if spec.source is None:
            # No config: the working tree's files, as a run without variants has them;
            # one copy for every such variant.
            if tree is None:
                found = config_files(config_root, pats)
                tree = (_snapshot(config_root, pats, cache_dir / "tree"),) if found else ()
            overlays = tree
        else:
            target = cache_dir / f"{index}-{spec.name}"
            overlays = _overlays(spec, config_root, invocation_dir, target, pats)
        variants.append(
            Variant(
                name=spec.name,
                overlays=overlays,
                source=spec.source or "",
                agent=spec.agent,
                model=spec.model,
                args=spec.args,
            )
        )
    return tuple(variants)


@dataclass(frozen=True)
class GradedDir:
    """A directory to grade instead of running an agent, as ``--eval-workspace
    [NAME=]DIR`` or a line of ``eval_workspaces`` gave it."""

    #: ``""`` when no name was given: the directory's own name is used.
    name: str
    path: Path
    #: Where it was given, for error messages.
    origin: str


def session_variants(
    specs: Sequence[VariantSpec],
    graded: Sequence[GradedDir],
    *,
    config_root: Path,
    invocation_dir: Path,
    cache_dir: Callable[[], Path],
    patterns: Iterable[str] | None = None,
) -> tuple[Variant, ...]:
    """The session's variants: the ``specs`` given, else one per ``graded`` directory,
    else one with the working tree's configuration files as they are now, since
    workspaces live outside the repository and the agent would otherwise see none of
    it. ``cache_dir`` makes the directory the configurations are extracted to, once per
    process (controller and each xdist worker)."""
    if not specs and graded:
        return _graded_variants(graded)
    if not specs:
        if not config_files(config_root, patterns):
            return (Variant(),)
        specs = [VariantSpec("", WORKING_TREE)]
    return build_variants(
        specs,
        config_root=config_root,
        invocation_dir=invocation_dir,
        cache_dir=cache_dir(),
        patterns=patterns,
    )


def _graded_variants(graded: Sequence[GradedDir]) -> tuple[Variant, ...]:
    variants: list[Variant] = []
    for given in graded:
        name = given.name.strip() or given.path.name
        if not given.path.is_dir():
            raise UsageError(f"{given.origin}: directory {given.path} does not exist")
        if any(v.name == name for v in variants):
            raise UsageError(f"{given.origin}: the name {name!r} is given twice; use NAME=DIR")
        variants.append(Variant(name=name, graded_dir=given.path.resolve(), source=str(given.path)))
    if len(variants) == 1 and not graded[0].name:
        variants = [Variant(graded_dir=variants[0].graded_dir, source=variants[0].source)]
    return tuple(variants)


def variant_agents(
    session: AgentSettings | None, variants: Sequence[Variant]
) -> dict[str, AgentSettings | None]:
    """Each variant's agent settings: the session's, with what the variant changes
    (docs/variants.md); ``None`` for a variant that runs no agent."""
    from pytest_evalcases.agents import known_agents

    found: dict[str, AgentSettings | None] = {}
    for v in variants:
        if v.graded_dir is not None:
            found[v.name] = None
            continue
        name = v.agent or (session.name if session is not None else "")
        if not name:
            if v.model or v.args is not None:
                key = "model" if v.model else "args"
                raise UsageError(
                    f"--eval-variant {v.name}: {key}: given, but no agent to run: add "
                    "agent:NAME to the variant, or --eval-agent / eval_agent"
                )
            found[v.name] = None
            continue
        assert session is not None  # built whenever a variant names a factor
        if v.agent and v.agent not in known_agents():
            raise UsageError(
                f"--eval-variant {v.name}: unknown agent {v.agent!r}; "
                f"known: {', '.join(known_agents())}"
            )
        if name == "command" and not session.command:
            raise UsageError(
                f"--eval-variant {v.name}: agent:command needs --eval-agent-command "
                "(or eval_agent_command)"
            )
        changes: dict[str, Any] = {"name": name}
        if v.model:
            changes["model"] = v.model
        elif v.agent and v.agent != session.name:
            # --eval-model names a model of the session's agent, not of this one.
            changes["model"] = None
        if v.args is not None:
            changes["args"] = v.args
        elif v.agent and v.agent != session.name:
            changes["args"] = ()
        found[v.name] = dataclasses.replace(session, **changes)
    return found


def _overlays(
    spec: VariantSpec, root: Path, invocation_dir: Path, target: Path, patterns: Sequence[str]
) -> tuple[Overlay, ...]:
    source = spec.source or WORKING_TREE
    if source.startswith(GIT_PREFIX):
        ref, _, git_path = source[len(GIT_PREFIX) :].partition(":")
        if not ref:
            raise UsageError(f"{spec.origin}: expected git:REF or git:REF:PATH")
        entries = git_entries(root, ref, git_path or None, patterns, origin=spec.origin)
        extract(root, entries, target, origin=spec.origin)
        return (Overlay(target, ""),)
    if source == WORKING_TREE:
        return (_snapshot(root, patterns, target),)
    path = (invocation_dir / source).resolve()
    if path.is_dir():
        if path == root.resolve():
            # The whole tree would bring .git, evals/ and the rest along: only its config.
            return (_snapshot(root, patterns, target),)
        return (Overlay(path, ""),)
    if path.is_file():
        try:
            dest = path.relative_to(root.resolve()).as_posix()
        except ValueError:
            dest = path.name
        return (Overlay(path, dest),)
    raise UsageError(
        f"{spec.origin}: {source!r} is neither a directory, a file, '.' nor git:REF[:PATH] "
        f"(looked for {path})"
    )


def _snapshot(root: Path, patterns: Sequence[str], target: Path) -> Overlay:
    """Copy the working tree's configuration files, as they are now, below ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    for rel in config_files(root, patterns):
        src, dest = root / rel, target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dest)
        else:
            shutil.copy2(src, dest)
    return Overlay(target, "")


def _git(root: Path, args: Sequence[str], origin: str) -> str:
    return _checked(lambda: git.run(root, args), args, origin).stdout


def _checked(call: Callable[[], ProcessResult], args: Sequence[str], origin: str) -> ProcessResult:
    """``call``'s git result; a failure to run as :class:`UsageError`, a non-zero exit
    as :class:`_GitFailed`."""
    try:
        done = call()
    except git.GitNotFound:
        raise UsageError(f"{origin}: git is not installed") from None
    except git.GitTimedOut:
        raise UsageError(f"{origin}: `git {' '.join(args)}` timed out") from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()
        raise _GitFailed(message[-1] if message else f"exit status {done.returncode}")
    return done


class _GitFailed(Exception):
    """A git command exited non-zero; the message is git's last line of stderr."""


def git_entries(
    root: Path, ref: str, path: str | None, patterns: Sequence[str], *, origin: str
) -> list[GitEntry]:
    """The files that ``git:REF[:PATH]`` overlays, read from the repository holding
    ``root``; ``PATH`` is relative to ``root``. Sorted by destination."""
    try:
        prefix = _git(root, ["rev-parse", "--show-prefix"], origin).strip()
    except _GitFailed:
        raise UsageError(f"{origin}: {root} is not inside a git repository") from None
    try:
        commit = _git(root, ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], origin)
    except _GitFailed:
        raise UsageError(f"{origin}: {ref!r} is not a revision of the repository") from None
    sha = commit.strip()
    if path is None:
        listed = _ls_tree(root, sha, prefix.rstrip("/"), origin)
        entries = [GitEntry(rel, mode, blob) for rel, mode, blob in listed]
        return [e for e in entries if matches(e.dest, patterns)]
    full = posix_join(prefix, path)
    if full is None:
        raise UsageError(f"{origin}: the path {path!r} leaves the repository")
    try:
        kind = _git(root, ["cat-file", "-t", f"{sha}:{full}"], origin).strip()
    except _GitFailed:
        raise UsageError(f"{origin}: {path!r} does not exist at {ref!r}") from None
    if kind == "blob":
        listed = _ls_tree(root, sha, full, origin, single=True)
        dest = posix_join("", path)
        return [GitEntry(dest or PurePosixPath(full).name, mode, b) for _, mode, b in listed]
    if kind != "tree":
        raise UsageError(f"{origin}: {path!r} at {ref!r} is a {kind}, not a file or directory")
    return [GitEntry(rel, mode, blob) for rel, mode, blob in _ls_tree(root, sha, full, origin)]


def posix_join(prefix: str, path: str) -> str | None:
    """``prefix/path`` normalised, or None when ``..`` climbs above ``prefix``'s root."""
    parts: list[str] = [p for p in prefix.split("/") if p]
    for part in path.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def _ls_tree(
    root: Path, sha: str, base: str, origin: str, *, single: bool = False
) -> list[tuple[str, str, str]]:
    """``(path relative to base, mode, blob sha)`` of the blobs below ``base`` at ``sha``."""
    args = ["ls-tree", "-z", "--full-tree"]
    if not single:
        args.append("-r")
    args.append(sha)
    if base:
        args += ["--", base]
    try:
        out = _git(root, args, origin)
    except _GitFailed as exc:
        raise UsageError(f"{origin}: git ls-tree failed: {exc}") from None
    found: list[tuple[str, str, str]] = []
    for record in out.split("\0"):
        if not record:
            continue
        meta, _, full = record.partition("\t")
        mode, kind, blob = meta.split(" ")
        if kind != "blob":  # submodules (commit entries) have no content here
            continue
        if single:
            rel = full
        elif base:
            rel = full[len(base) + 1 :] if full.startswith(base + "/") else ""
        else:
            rel = full
        if rel:
            found.append((rel, mode, blob))
    return sorted(found)


def extract(root: Path, entries: Sequence[GitEntry], target: Path, *, origin: str) -> None:
    """Write ``entries`` below ``target`` with their git modes: regular files, executable
    files and symbolic links. One ``git cat-file --batch`` for all of them."""
    target.mkdir(parents=True, exist_ok=True)
    if not entries:
        return
    request = "".join(f"{e.sha}\n" for e in entries)
    args = ["cat-file", "--batch"]
    # The blobs' bytes, binary files included: through a file, not decoded as text.
    with tempfile.TemporaryDirectory(prefix="evalcases-git-") as scratch:
        batch = Path(scratch) / "batch"
        try:
            _checked(
                lambda: git.run_to_file(root, args, batch, stdin=request),
                args,
                origin,
            )
        except _GitFailed as exc:
            raise UsageError(f"{origin}: git cat-file failed: {exc}") from None
        out = batch.read_bytes()
    pos = 0
    for entry in entries:
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split(b" ")[2])
        data = out[header_end + 1 : header_end + 1 + size]
        pos = header_end + 1 + size + 1
        dest = target / entry.dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        if entry.mode == "120000":
            os.symlink(data.decode("utf-8", "surrogateescape"), dest)
            continue
        dest.write_bytes(data)
        dest.chmod(0o755 if entry.mode == "100755" else 0o644)
