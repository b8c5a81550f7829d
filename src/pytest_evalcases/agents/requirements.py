"""What an agent CLI needs before it can run a case: its program, its login, its
machine-wide configuration. Each driver declares its :class:`Requirements`
(``Agent.requirements``); the preflight (:mod:`pytest_evalcases.agents.preflight`)
checks them once per session."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_evalcases.agents import home


@dataclass(frozen=True)
class Credentials:
    """Where an agent CLI finds its login; any one of them is enough."""

    #: Environment variables holding a key or a token.
    variables: tuple[str, ...]
    #: The CLI's user-level directory; a login is one of its credential files.
    home: home.Home
    #: The files of it that prove a login, when not all its credential files do.
    login_files: tuple[str, ...] = ()
    #: Variables that choose another provider with credentials of its own (a cloud
    #: platform): when one is set, nothing is checked.
    providers: tuple[str, ...] = ()
    #: A bare run ignores the login files and reads only these (Claude Code's ``--bare``);
    #: empty when bare runs log in as the others do.
    bare_variables: tuple[str, ...] = ()
    #: On macOS the login may be in the keychain, which the check cannot see.
    keychain: bool = False
    #: Agent arguments that bring a provider of the user's own, with its own credentials
    #: (a Codex ``-c model_provider=...``, ``--oss``): when one is given, nothing is checked.
    provider_args: tuple[str, ...] = ()
    #: What a run answered by the scripted model sets instead of the operator's
    #: credentials: a key that is no one's where the CLI insists on one, and what keeps
    #: its other traffic at home (docs/config-contract.md, "The scripted model").
    scripted: tuple[tuple[str, str], ...] = ()


#: The key a scripted run's CLI is given: it opens nothing. Letters no text holds: the
#: recording withholds a credential header's value wherever it appears.
SCRIPTED_KEY = "Qz7Xv2Lp9Wt4Hk8N"
#: A home to copy a login from that holds none (below a file: nothing is there).
_NO_HOME = os.path.join(os.devnull, "evalcases-no-home")


#: A proxy address nothing listens at (the discard port), for a scripted run's requests
#: to anywhere but this machine.
_NOWHERE = "http://127.0.0.1:9"
_PROXY_VARIABLES = (
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
)


def scripted_env(
    credentials: Credentials, env: Mapping[str, str], *, own_home: bool
) -> dict[str, str]:
    """``env`` for a run the scripted model answers: none of the operator's keys,
    tokens or provider choices, the driver's stand-ins instead, and every request to
    another machine sent to a proxy that is not there. With ``own_home`` (the
    run gets a fresh home, docs/agents.md, "The agent's home"), no login file is copied
    into it either: the CLI has nothing of the operator's to send."""
    mine = {*credentials.variables, *credentials.providers, *credentials.bare_variables}
    scripted = {name: value for name, value in env.items() if name not in mine}
    scripted.update(credentials.scripted)
    # Whatever the CLI would send elsewhere (a login its settings choose, telemetry)
    # goes to a proxy that is not there: only this machine is reached.
    for name in _PROXY_VARIABLES:
        scripted[name] = _NOWHERE
    scripted["NO_PROXY"] = scripted["no_proxy"] = "127.0.0.1,localhost,::1"
    if own_home:
        scripted[credentials.home.variable] = _NO_HOME
    return scripted


@dataclass(frozen=True)
class Requirements:
    """What an agent CLI needs before it can run a case."""

    #: The command that installs the program (``npm install -g ...``).
    install: str = ""
    #: Where the program's name comes from, when the user chose it, and how to correct it.
    program_from: str = ""
    fix: str = ""
    credentials: Credentials | None = None
    #: Whether ``PROGRAM --version`` says the agent's version (not an interpreter's).
    version: bool = True
    #: The machine-wide configuration the CLI reads on every run, whatever its home and
    #: workspace (an administrator's policy): pairs of an environment variable that
    #: moves it (``""``: none) and the default file or directory.
    machine_config: tuple[tuple[str, str], ...] = ()
