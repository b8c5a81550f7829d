"""The sandbox of a run: bubblewrap around the agent, the case's ``setup`` and its
command checks (docs/sandbox.md).

Under ``bwrap`` a command sees the whole filesystem read-only, but for the paths it is
given to write (the run's workspace, the agent's home, ``eval_sandbox_rw``); a private
``/tmp``; ``/dev`` and ``/proc`` of its own in a new PID namespace, so it can neither
see nor signal a process outside, with the kernel's settings (``/proc/sys``) read-only;
IPC, hostname and cgroup namespaces of its own; a user namespace and no capabilities,
so that even when pytest runs as root the command can neither remount, make devices,
set file attributes nor change the host; a new session (no terminal to inject into);
and it dies with the pytest process that started it. The network is shared unless a
command is run with ``network=False`` (``eval_sandbox_network = none`` for setups and
checks).

Plain Python: :func:`choose` turns the options into a :class:`Sandbox`, and
:meth:`Sandbox.wrap` turns a command into the command that runs it contained.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_evalcases.errors import UsageError
from pytest_evalcases.kinds import SandboxKind, SandboxMode, SandboxNetwork

#: How to get bubblewrap, for the messages that say it is missing.
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; "
    "Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)"
)
#: Seconds the trial run of bubblewrap may take.
TRIAL_TIMEOUT = 10.0
#: Whom a command runs as in its user namespace when pytest runs as root: an ordinary
#: user (``nobody``, which every system names), mapped to root outside, so that the files
#: it writes are root's as before. As root inside, the user namespaces of an agent's own
#: sandbox (Codex's bubblewrap) could not map it: that needs a capability it has not.
ROOT_INSIDE_AS = 65534


@dataclass(frozen=True)
class Sandbox:
    """How the commands of a run are contained: ``bwrap``, or ``none`` at all."""

    kind: SandboxKind = "none"
    #: The bubblewrap binary (``kind == "bwrap"``).
    program: str = ""
    #: ``eval_sandbox_ro`` / ``eval_sandbox_rw``: paths also mounted inside.
    read_only: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()
    #: ``eval_sandbox_network``: whether setups and command checks reach the network.
    network: SandboxNetwork = "shared"
    #: Why runs are not contained: ``eval_sandbox = none``, or why ``auto`` fell back.
    reason: str = ""
    #: Whether commands get a user namespace of their own; not where the kernel allows
    #: none (then they run as the user pytest runs as, still without capabilities).
    user_namespace: bool = True

    @property
    def contained(self) -> bool:
        return self.kind == "bwrap"

    def describe(self) -> str:
        """The sandbox in force, for the terminal header and the pins."""
        if not self.contained:
            return "none"
        return "bwrap" + (" (no network for setups and checks)" if self.network == "none" else "")

    def wrap(
        self,
        args: Sequence[str] | str,
        *,
        cwd: Path,
        writable: Sequence[Path] = (),
        network: bool = True,
    ) -> Sequence[str] | str:
        """The command that runs ``args`` (a shell command line when a string) in the
        sandbox, writing only to ``writable`` and the sandbox's own writable paths;
        ``args`` itself without a sandbox."""
        if not self.contained:
            return args
        argv = ["/bin/sh", "-c", args] if isinstance(args, str) else list(args)
        return [
            self.program,
            *self.options(writable=writable, network=network),
            "--chdir",
            str(cwd),
            "--",
            *argv,
        ]

    def options(self, *, writable: Sequence[Path] = (), network: bool = True) -> list[str]:
        """bubblewrap's options for one command: the mounts, then the namespaces."""
        opts = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        # bubblewrap leaves the kernel's settings writable to root (it tests /proc/sys
        # for write access, which the kernel refuses even root): without this, a root
        # without capabilities could still set kernel.core_pattern.
        opts += ["--ro-bind", "/proc/sys", "/proc/sys"]
        # A private /tmp: other runs' workspaces and agent homes live in the real one.
        opts += ["--tmpfs", "/tmp"]
        mounts: list[tuple[Path, str]] = [(p, "--ro-bind-try") for p in self.read_only]
        mounts += [(p, "--bind-try") for p in (*self.writable, *writable)]
        # A mount hides what an earlier one put below it: parents first.
        for path, how in sorted(mounts, key=lambda m: len(m[0].parts)):
            opts += [how, str(path), str(path)]
        if os.environ.get("TMPDIR", "/tmp") != "/tmp":
            # Elsewhere the temporary directory is read-only like the rest.
            opts += ["--setenv", "TMPDIR", "/tmp"]
        opts += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if self.user_namespace:
            opts.append("--unshare-user")
            if os.geteuid() == 0:
                inside = str(ROOT_INSIDE_AS)
                opts += ["--uid", inside, "--gid", inside]
        # As root, bubblewrap keeps every capability unless told not to.
        opts += ["--cap-drop", "ALL", "--die-with-parent", "--new-session"]
        if not network:
            opts.append("--unshare-net")
        return opts


def choose(
    mode: SandboxMode,
    *,
    read_only: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    network: SandboxNetwork = "shared",
    visible: Sequence[Path] = (),
) -> Sandbox:
    """The sandbox for ``eval_sandbox = mode``. ``auto`` is bubblewrap where it is
    installed and a trial run of it succeeds, else ``none`` with the reason; ``bwrap``
    raises :class:`UsageError` where it cannot run. ``visible`` paths (the rootdir) stay
    visible read-only below ``/tmp``, unless they are writable already."""
    if mode == "none":
        return Sandbox(reason="eval_sandbox = none")
    for option, paths in (("eval_sandbox_ro", read_only), ("eval_sandbox_rw", writable)):
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise UsageError(f"ini option {option}: no such path: {', '.join(missing)}")
    program = shutil.which("bwrap")
    failure = "bubblewrap (bwrap) is not on PATH" if program is None else trial(program)
    user_namespace = not failure
    if program is not None and failure and not trial(program, user_namespace=False):
        # A kernel that allows no user namespaces, to root either.
        failure, user_namespace = "", False
    if program is None or failure:
        if mode == "bwrap":
            raise UsageError(f"eval_sandbox = bwrap, but {failure}; {INSTALL_HINT}")
        return Sandbox(reason=failure)
    rw = tuple(p.resolve() for p in writable)
    shown = [p.resolve() for p in (*_toolchain_in_tmp(), *visible)]
    return Sandbox(
        kind="bwrap",
        program=program,
        read_only=(
            *(p for p in shown if not any(p.is_relative_to(w) for w in rw)),
            *(p.resolve() for p in read_only),
        ),
        writable=rw,
        network=network,
        user_namespace=user_namespace,
    )


def _toolchain_in_tmp() -> tuple[Path, ...]:
    """The Python running the session and the ``PATH`` entries, where they are below
    ``/tmp``: the private ``/tmp`` would hide them, so they stay visible, read-only."""
    found: list[Path] = []
    candidates = [
        Path(sys.prefix),
        *(Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p),
    ]
    for path in candidates:
        below_tmp = path.is_absolute() and path.parts[1:2] == ("tmp",)
        if below_tmp and path not in found and path.is_dir():
            found.append(path)
    return tuple(found)


@functools.cache
def trial(program: str, *, user_namespace: bool = True) -> str:
    """Why bubblewrap cannot run here (empty when it can): a trial run with the
    namespaces the runs use. Kernels that forbid unprivileged user namespaces fail it."""
    box = Sandbox(kind="bwrap", program=program, user_namespace=user_namespace)
    argv = [program, *box.options(), "--", "true"]
    try:
        result = subprocess.run(
            argv, capture_output=True, text=True, timeout=TRIAL_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"a trial run of {program} failed: {exc}"
    if result.returncode != 0:
        said = result.stderr.strip() or f"exit status {result.returncode}"
        return f"a trial run of {program} failed: {said}"
    return ""
