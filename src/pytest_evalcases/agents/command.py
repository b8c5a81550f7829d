"""The ``command`` agent: any command line, its standard output is the final answer."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
from dataclasses import replace
from pathlib import Path

from pytest_evalcases import process
from pytest_evalcases.agents import atif
from pytest_evalcases.agents.base import (
    AgentBase,
    AgentResult,
    AgentSettings,
    Invocation,
    RunRequest,
)
from pytest_evalcases.agents.output import agent_error, classify, measured_ms
from pytest_evalcases.agents.requirements import Requirements
from pytest_evalcases.errors import AgentError, UsageError


class CommandAgent(AgentBase):
    """Runs ``eval_agent_command``.

    ``{prompt}`` is replaced by the prompt, inside the one argument that holds it
    (``{prompt}`` alone, or ``--message={prompt}``); without it the prompt goes to
    standard input. ``{python}`` and ``{rootdir}`` (and any other placeholder in the
    settings) are replaced inside words too, never inside the prompt, as they are:
    like the prompt, no shell splits them.

    A case with ``follow_ups`` runs the command again for each follow-up, with
    ``{session}`` the id the first run printed as a line ``EVALCASES_SESSION=<id>``
    (left out of the answer), also in the variable ``EVALCASES_SESSION``; a command
    line without ``{session}`` cannot continue a session (docs/conversations.md).

    A command that declares it writes its trajectory in ATIF (ini
    ``eval_agent_trajectory = true``, or ``{trajectory}`` or ``EVALCASES_TRAJECTORY`` in
    the command line) is told where in the variable ``EVALCASES_TRAJECTORY`` (and
    ``{trajectory}``); the tool calls of that file are the run's transcript, and a file
    that is not ATIF is an error of kind ``parse`` naming it (docs/trajectories.md).
    Without the declaration the command shows no tool calls.

    A failure is an error: ``authentication`` when the command's own words say so
    (HTTP 401, "invalid api key", "unauthorized"), ``config`` when a relative path of
    the command line is missing in the workspace it runs in, else ``crash``.
    """

    name = "command"
    #: The first word is the user's; ``--version`` of it says nothing (often ``python``).
    requirements = Requirements(
        program_from="the first word of eval_agent_command",
        fix="correct eval_agent_command (ini) or --eval-agent-command",
        version=False,
    )

    def __init__(self, settings: AgentSettings) -> None:
        if not settings.command:
            raise UsageError(
                "--eval-agent command needs a command line: set eval_agent_command "
                "(ini) or --eval-agent-command"
            )
        super().__init__(settings)
        self.words = shlex.split(settings.command)
        self.placeholders = dict(settings.placeholders)
        #: Only a command line that takes the session can be given a follow-up.
        self.continues = any(SESSION_PLACEHOLDER in word for word in self.words)
        self.trajectory = settings.trajectory or any(
            TRAJECTORY_PLACEHOLDER in word or atif.TRAJECTORY_VARIABLE in word
            for word in self.words
        )
        self.transcript = self.trajectory

    def invocation(self, request: RunRequest) -> Invocation:
        argv: list[str] = []
        uses_prompt = False
        session = request.session if request.follow_up and request.session is not None else ""
        trajectory = str(request.trajectory) if request.trajectory is not None else ""
        for word in self.words:
            parts = word.split("{prompt}")
            uses_prompt = uses_prompt or len(parts) > 1
            argv.append(
                request.prompt.join(self._expand(part, session, trajectory) for part in parts)
            )
        argv.extend(self.args)
        env: tuple[tuple[str, str], ...] = ((SESSION_VARIABLE, session),) if session else ()
        if trajectory:
            env = (*env, (atif.TRAJECTORY_VARIABLE, trajectory))
        return Invocation(tuple(argv), stdin=None if uses_prompt else request.prompt, env=env)

    def _expand(self, text: str, session: str, trajectory: str) -> str:
        for key, value in self.placeholders.items():
            text = text.replace("{" + key + "}", value)
        return text.replace(SESSION_PLACEHOLDER, session).replace(
            TRAJECTORY_PLACEHOLDER, trajectory
        )

    def parse(self, result: process.ProcessResult, request: RunRequest) -> AgentResult:
        if result.returncode != 0:
            status = process.exited(result.returncode)
            said = result.said()
            kind = classify(result.stderr, result.stdout)
            if kind == "authentication":
                raise AgentError(
                    f"agent command {status} and could not authenticate: {said}",
                    kind="authentication",
                )
            if kind == "rate-limit":
                # The scheduler backs off before the next start (docs/reference.md,
                # "Rate limits"), for the delay the command named when it did.
                raise agent_error(f"agent command ({status})", kind, said)
            missing = self._missing_relative_path(result, request)
            if missing:
                rootdir = self.placeholders.get("rootdir", "")
                raise AgentError(
                    f"agent command {status}: {said}\n  hint: the command runs in the "
                    f"case's workspace, where {missing!r} does not exist; write "
                    f"{{rootdir}}/{missing} in eval_agent_command ({{rootdir}} is pytest's "
                    f"rootdir, {rootdir})",
                    kind="config",
                )
            raise AgentError(f"agent command {status}: {said}", kind="crash")
        named = _SESSION_LINE.findall(result.stdout)
        answer = AgentResult(
            text=_SESSION_LINE.sub("", result.stdout) if named else result.stdout,
            session=named[-1] if named else None,
            exit_code=result.returncode,
            duration_ms=measured_ms(result),
            truncated=result.truncated,
        )
        return self._with_trajectory(answer, request.trajectory)

    def _with_trajectory(self, answer: AgentResult, path: Path | None) -> AgentResult:
        """``answer`` with the tool calls, usage and model of the trajectory the command
        wrote at ``path``; as it is when it wrote none. The file is removed once read:
        each prompt of a conversation writes its own."""
        if path is None or not path.exists():
            return answer
        try:
            written = atif.read(path)
        except atif.Malformed as exc:
            raise AgentError(f"agent command: {exc}", kind="parse") from None
        except OSError as exc:
            raise AgentError(
                f"agent command: its trajectory {path} cannot be read: {exc.strerror or exc}",
                kind="parse",
            ) from None
        finally:
            with contextlib.suppress(OSError):
                path.unlink()
        return replace(
            answer,
            tool_calls=atif.tool_calls(written),
            usage=atif.usage(written),
            cost_usd=written.final_metrics.total_cost_usd if written.final_metrics else None,
            models=atif.models(written),
        )

    def _missing_relative_path(self, result: process.ProcessResult, request: RunRequest) -> str:
        """A relative path of the command line that exists below the rootdir but not in
        the workspace, when the command's output says a file was not found; else ``""``."""
        rootdir = self.placeholders.get("rootdir")
        if not rootdir or not _NOT_FOUND.search(result.stderr + result.stdout):
            return ""
        for word in self.words:
            if "{" in word:
                continue  # the prompt, a placeholder: not the user's relative path
            path = word.partition("=")[2] if word.startswith("-") else word
            if not path or os.path.isabs(path) or path.startswith("~"):
                continue
            in_root = os.path.join(rootdir, path)
            if os.path.exists(in_root) and not os.path.exists(request.workspace / path):
                return path
        return ""


#: Where the command line takes the path of the trajectory file (docs/trajectories.md).
TRAJECTORY_PLACEHOLDER = "{trajectory}"
#: Where a follow-up's command line takes the session (docs/conversations.md).
SESSION_PLACEHOLDER = "{session}"
#: The line a command prints to name its session, and the variable a follow-up gets it in.
SESSION_VARIABLE = "EVALCASES_SESSION"
_SESSION_LINE = re.compile(rf"^{SESSION_VARIABLE}=(\S+)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)

#: How interpreters and shells say that a file they were given does not exist.
_NOT_FOUND = re.compile(
    r"no such file|can't open file|cannot open|cannot find module|not found", re.IGNORECASE
)
