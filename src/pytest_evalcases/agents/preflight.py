"""Before the first run: the agent's program, its version and its credentials, checked
once per session (docs/agents.md, "Before the first run").

A missing CLI or a missing login would otherwise fail every case with the same error.
The drivers describe what they need as
:class:`~pytest_evalcases.agents.requirements.Requirements` (their ``requirements``; a
driver that declares none gets the program check only); :func:`check` turns a missing
piece into one :class:`UsageError` for the session.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_evalcases import process
from pytest_evalcases.agents import base, home
from pytest_evalcases.agents.requirements import Credentials, Requirements
from pytest_evalcases.errors import UsageError
from pytest_evalcases.redact import redact

#: How long ``PROGRAM --version`` may take before the version is recorded as unknown:
#: a node CLI starting on a loaded CI machine can take several seconds.
VERSION_TIMEOUT = 30.0


@dataclass(frozen=True)
class Needs:
    """What the collected items ask of the agent: how many runs, how many of them bare,
    and how many the scripted model answers (which need no credential)."""

    runs: int
    bare: int = 0
    scripted: int = 0


@dataclass(frozen=True)
class Checked:
    """The outcome of a preflight that passed: the program, and its version for the pins."""

    program: str | None
    version: str | None
    #: The files of the machine-wide configuration the agent reads, where there are
    #: any (:func:`machine_files`).
    machine_config: tuple[Path, ...] = ()


#: How many files of a machine-wide configuration directory are named and pinned.
MACHINE_FILES = 50


def machine_files(requirements: Requirements, env: Mapping[str, str]) -> tuple[Path, ...]:
    """The files of the agent's machine-wide configuration that exist (a directory's
    files, sorted, at most :data:`MACHINE_FILES`): configuration no case sets, read by
    every run (docs/agents.md, "Machine-wide configuration")."""
    found: list[Path] = []
    for variable, default in requirements.machine_config:
        path = Path((env.get(variable) if variable else None) or default)
        try:
            if path.is_file():
                found.append(path)
            elif path.is_dir():
                found += sorted(p for p in path.rglob("*") if p.is_file())
        except OSError:
            continue
    return tuple(found[:MACHINE_FILES])


def program_of(agent: base.Agent, cwd: Path) -> str | None:
    """The program the agent runs: the first word of its command line."""
    request = base.RunRequest(prompt="version", workspace=cwd, bare=True, timeout=1.0, env={})
    try:
        argv = agent.invocation(request).argv
    except Exception:  # a third-party driver: no check rather than no run
        return None
    return argv[0] if argv else None


def check(
    agent: base.Agent,
    needs: Needs,
    env: Mapping[str, str],
    cwd: Path,
    *,
    platform: str = sys.platform,
    timeout: float = VERSION_TIMEOUT,
    with_version: bool = True,
) -> Checked:
    """Check the agent for ``needs``; :class:`UsageError` names what is missing.
    Without ``with_version`` its version is not read (a second look at the same agent)."""
    requirements = agent.requirements or Requirements()
    program = program_of(agent, cwd)
    if program is None:
        return Checked(None, None)
    if not base.on_path(program, env):
        raise UsageError(missing_program(agent.name, program, requirements))
    credentials = requirements.credentials
    # A run the scripted model answers logs in nowhere (docs/config-contract.md).
    live = needs.runs > needs.scripted
    if credentials is not None and live and not _own_provider(credentials, agent.args):
        problem = credential_problem(agent.name, credentials, needs, env, platform)
        if problem:
            raise UsageError(problem)
    wanted = with_version and requirements.version
    version = read_version(program, env, cwd, timeout) if wanted else None
    return Checked(program, version, machine_files(requirements, env))


def _own_provider(credentials: Credentials, args: Sequence[str]) -> bool:
    return any(marker in arg for arg in args for marker in credentials.provider_args)


def missing_program(name: str, program: str, requirements: Requirements) -> str:
    """One line: the program that is not on PATH, and how to get it."""
    origin = f" ({requirements.program_from})" if requirements.program_from else ""
    if requirements.install:
        remedy = f"install it with `{requirements.install}`, or put it on PATH"
    else:
        remedy = requirements.fix or "install it, or choose another agent with --eval-agent"
    return f"agent {name!r}: program {program!r}{origin} not found on PATH; {remedy}"


def credential_problem(
    name: str, credentials: Credentials, needs: Needs, env: Mapping[str, str], platform: str
) -> str:
    """Why the agent cannot log in, or ``""`` when it can (as far as can be seen)."""
    if any(env.get(v) for v in credentials.providers):
        return ""
    bare_only = bool(needs.bare and credentials.bare_variables)
    if bare_only and any(env.get(v) for v in credentials.bare_variables):
        return ""
    directory = home.source_dir(credentials.home, env)
    files = [directory / f for f in credentials.login_files or credentials.home.credentials]
    shown = _either([str(f) for f in files])
    logged_in = (
        any(env.get(v) for v in credentials.variables)
        or any(f.is_file() for f in files)
        or (credentials.keychain and platform == "darwin")
    )
    if logged_in and bare_only:
        # A bare run reads neither the other variables, nor the login, nor the keychain.
        others = [v for v in credentials.variables if v not in credentials.bare_variables]
        one = "one" if len(credentials.bare_variables) > 1 else "it"
        cases = "1 collected case runs" if needs.bare == 1 else f"{needs.bare} collected cases run"
        return (
            f"agent {name!r}: {cases} bare (`{name} --bare`), which ignores "
            f"{_either(others)}, the login in {shown} and the keychain and reads only "
            f"{_either(credentials.bare_variables)}; set {one}, "
            "or write `bare: false` on those cases"
        )
    if logged_in:
        return ""
    place = credentials.home
    variable = f"${place.variable}/{place.subdir}" if place.subdir else f"${place.variable}"
    where = f"{variable}, default ~/{place.default}"
    return (
        f"agent {name!r} has no credentials: set {_either(credentials.variables)}, "
        f"or log in so that {shown} exists ({where})"
    )


def read_version(program: str, env: Mapping[str, str], cwd: Path, timeout: float) -> str | None:
    """``program --version``, first non-empty line of its output; ``None`` on failure."""
    try:
        result = process.run(
            [program, "--version"], cwd=cwd, env=dict(env), timeout=timeout, max_output=16 * 1024
        )
    except OSError:
        return None
    if result.timed_out or result.returncode != 0:
        return None
    for line in (result.stdout + "\n" + result.stderr).splitlines():
        if line.strip():
            return redact(line.strip())[:200]
    return None


def _either(names: list[str] | tuple[str, ...]) -> str:
    """``A``, ``A or B``, ``A, B or C``."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
