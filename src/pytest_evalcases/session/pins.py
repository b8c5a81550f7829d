"""Pins: what makes two results files comparable (docs/results.md, "Pins").

The agent and its version, the models seen, the sha256 of every configuration file of
each variant with one combined fingerprint, the sha256 of each fixture tree and case
file, the permission arguments given to the agent, the Python and package versions and
the project's lock files; and, of each variant's recorded runs, what the CLI sent its
model (:mod:`pytest_evalcases.recording.sentpins`). Plain Python; the plugin calls
:func:`collect` once, on the controller, at the end of a run. No environment value is
ever recorded.
"""

from __future__ import annotations

import hashlib
import os
import platform
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pytest_evalcases import defaults
from pytest_evalcases.kinds import AgentHome
from pytest_evalcases.recording import sentpins
from pytest_evalcases.redact import redact
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.run import variants
from pytest_evalcases.run.workspace import Overlay, Variant

PACKAGES = (
    "pytest",
    "pydantic",
    "pytest-evalcases",
    "pytest-xdist",
    "pytest-json-report",
    "PyYAML",
)

#: Agent arguments that decide what the agent may do; a run with more permissions is
#: not comparable with one with fewer. Value-taking flags keep their values.
_PERMISSION_FLAGS = {
    "--allowedTools": True,
    "--allowed-tools": True,
    "--disallowedTools": True,
    "--disallowed-tools": True,
    "--permission-mode": True,
    "--dangerously-skip-permissions": False,
    "--dangerously-bypass-approvals-and-sandbox": False,
    "-s": True,
    "--sandbox": True,
    "-a": True,
    "--ask-for-approval": True,
    "--approval-mode": True,
    "--yolo": False,
    "-y": False,
    "--full-auto": False,
}
#: ``--allowedTools`` takes several values ("Bash(git:*)" Edit ...).
_VARIADIC = {"--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools"}
_SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv"}
#: The lock files of the project's dependencies, at the rootdir.
LOCK_FILES = (
    "uv.lock",
    "poetry.lock",
    "pdm.lock",
    "Pipfile.lock",
    "requirements*.txt",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "bun.lock",
    "bun.lockb",
    "Cargo.lock",
    "go.sum",
    "Gemfile.lock",
    "composer.lock",
)


@dataclass(frozen=True)
class PinInputs:
    """What :func:`collect` needs to know about the run."""

    agent_name: str | None
    #: The first line of the agent CLI's ``--version``, read by the preflight; ``None``
    #: for the command agent, whose first word (often ``python``) says nothing of it.
    agent_version: str | None
    agent_args: tuple[str, ...]
    config_root: Path
    #: ``eval_config_files``; empty: the default patterns.
    config_patterns: tuple[str, ...]
    variants: tuple[Variant, ...]
    #: Case files and fixture directories, as absolute paths.
    case_files: tuple[Path, ...] = ()
    fixtures: tuple[Path, ...] = ()
    #: Where paths in the pins are shown relative to.
    rootdir: Path = Path()
    #: ``eval_agent_home``: whether the agent ran in a fresh home or the operator's.
    agent_home: AgentHome = defaults.AGENT_HOME
    #: ``eval_sandbox``: the sandbox in force (``bwrap``, ``none``); ``None`` without
    #: an agent.
    sandbox: str | None = None
    #: Each variant's agent as it ran, by variant name (docs/variants.md): ``agent``,
    #: ``agent_version``, ``model`` (the one asked for) and ``args``.
    variant_agents: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: ``--eval-perturb``: classes, N, seed and blocking, so that a rerun perturbs
    #: alike (docs/perturbation.md); ``None`` without perturbed runs.
    perturbation: Mapping[str, Any] | None = None
    #: The machine-wide configuration files the agents read (docs/agents.md,
    #: "Machine-wide configuration").
    machine_config: tuple[Path, ...] = ()
    #: Where the runs' recordings are (a record's ``recording`` is relative to it);
    #: ``None``: recording is off.
    recordings: Path | None = None


def collect(inputs: PinInputs, records: Sequence[RunRecord]) -> dict[str, Any]:
    """The ``pins`` object of a results file."""
    config = {
        (v.name or ""): config_files(inputs.config_root, inputs.config_patterns, v.overlays)
        for v in inputs.variants
    }
    return {
        "agent": inputs.agent_name,
        "agent_version": inputs.agent_version,
        "agent_home": inputs.agent_home if inputs.agent_name else None,
        "sandbox": inputs.sandbox if inputs.agent_name else None,
        "models": models(records),
        "config": config,
        "config_fingerprint": fingerprint(config),
        "fixtures": {
            _show(path, inputs.rootdir): tree_sha256(path) for path in sorted(set(inputs.fixtures))
        },
        "case_files": {
            _show(path, inputs.rootdir): file_sha256(path)
            for path in sorted(set(inputs.case_files))
            if path.is_file()
        },
        "permissions": permission_args(inputs.agent_args),
        "python": platform.python_version(),
        "packages": package_versions(),
        "variants": {
            name: {
                **agent,
                "args": [redact(a) for a in agent.get("args", ())],
                # What the CLI reported using, not only what it was asked for.
                "models": models(r for r in records if r.variant == name),
                # Over the files alone: two variants with the same files have the same.
                "config_fingerprint": fingerprint({"": config.get(name, {})}),
            }
            for name, agent in inputs.variant_agents.items()
        },
        "perturbation": dict(inputs.perturbation) if inputs.perturbation is not None else None,
        "machine_config": {
            str(path): file_sha256(path) for path in sorted(set(inputs.machine_config))
        },
        "lock_files": lock_files(inputs.rootdir),
        "sent": sent(records, inputs.recordings) if inputs.agent_name else {},
    }


def lock_files(rootdir: Path) -> dict[str, str]:
    """``{name: sha256}`` of the project's lock files at ``rootdir``."""
    found = {p for pattern in LOCK_FILES for p in rootdir.glob(pattern) if p.is_file()}
    return {p.name: file_sha256(p) for p in sorted(found)}


def sent(records: Sequence[RunRecord], recordings: Path | None) -> dict[str, Any]:
    """Each variant's ``pins.sent``: what the CLI sent its model, of the first request
    of each case's first recorded run (its live runs when it has any, else its scripted
    ones); ``not_recorded`` says why a variant has none."""
    runs = [r for r in records if r.kind != "file"]
    out: dict[str, Any] = {}
    for variant in sorted({r.variant for r in runs}):
        mine = [r for r in runs if r.variant == variant]
        live = [r for r in mine if not r.scripted]
        chosen = live or mine
        scripted = not live
        if recordings is None:
            out[variant] = sentpins.summary((), ("recording is off",), scripted)
            continue
        first: dict[str, RunRecord] = {}
        for record in sorted(chosen, key=lambda r: (r.case_id, r.repetition)):
            if record.recording and record.case_id not in first:
                first[record.case_id] = record
        read: list[sentpins.Sent] = []
        unread: list[str] = []
        for record in first.values():
            found = sentpins.read_run(recordings / str(record.recording))
            if isinstance(found, str):
                unread.append(found)
            else:
                read.append(found)
        if not first:
            unread.append("no run's model traffic was recorded")
        out[variant] = sentpins.summary(read, unread, scripted)
    return out


def models(records: Iterable[RunRecord]) -> list[str]:
    """Every model named in the records, sorted."""
    seen: set[str] = set()
    for record in records:
        if record.model:
            seen.update(m.strip() for m in record.model.split(",") if m.strip())
    return sorted(seen)


def config_files(
    root: Path, patterns: Sequence[str] | None, overlays: Iterable[Overlay] = ()
) -> dict[str, str]:
    """``{path: sha256}`` of a variant's configuration files.

    A variant with overlays (``--eval-config``) is exactly what its overlays lay over
    each workspace; one without is the configuration the suite defends, the files
    matching ``patterns`` under ``root``.
    """
    files: dict[str, str] = {}
    overlays = tuple(overlays)
    if not overlays:
        for rel in variants.config_files(root, patterns):
            if (root / rel).is_file():
                files[rel] = file_sha256(root / rel)
    for overlay in overlays:
        source, dest = overlay.source, overlay.dest.strip("/")
        if source.is_dir():
            for path in _walk(source):
                rel = path.relative_to(source).as_posix()
                files[f"{dest}/{rel}" if dest else rel] = file_sha256(path)
        elif source.is_file():
            files[dest or source.name] = file_sha256(source)
    return dict(sorted(files.items()))


def fingerprint(config: dict[str, dict[str, str]]) -> str:
    """One sha256 over every variant's configuration files."""
    digest = hashlib.sha256()
    for variant in sorted(config):
        for rel, sha in sorted(config[variant].items()):
            digest.update(f"{variant}\0{rel}\0{sha}\n".encode())
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_sha256(root: Path) -> str | None:
    """A sha256 over every relative path and file content below ``root``."""
    if not root.is_dir():
        return None
    digest = hashlib.sha256()
    for path in sorted(_walk(root)):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(file_sha256(path).encode() + b"\n")
    return digest.hexdigest()


def permission_args(args: Sequence[str]) -> list[str]:
    """The permission and allowed-tools arguments among the agent's extra arguments."""
    kept: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name = arg.split("=", 1)[0]
        if name not in _PERMISSION_FLAGS:
            i += 1
            continue
        kept.append(arg)
        i += 1
        if "=" in arg or not _PERMISSION_FLAGS[name]:
            continue
        while i < len(args) and not args[i].startswith("-"):
            kept.append(args[i])
            i += 1
            if name not in _VARIADIC:
                break
    return [redact(a) for a in kept]


def package_versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def _walk(root: Path) -> list[Path]:
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        # A broken symlink or a socket has no content to pin.
        files.extend(p for p in (Path(dirpath) / n for n in filenames) if p.is_file())
    return files


def _show(path: Path, rootdir: Path) -> str:
    try:
        return path.relative_to(rootdir).as_posix()
    except ValueError:
        return str(path)
