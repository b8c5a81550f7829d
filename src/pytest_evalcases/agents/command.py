"""The ``command`` agent: any command line, its standard output is the final answer."""

from __future__ import annotations

import shlex

from pytest_evalcases import process
from pytest_evalcases.agents.base import AgentResult, AgentSettings, Invocation, RunRequest
from pytest_evalcases.agents.output import measured_ms
from pytest_evalcases.agents.preflight import Requirements
from pytest_evalcases.errors import AgentError, UsageError


class CommandAgent:
    """Runs ``eval_agent_command``.

    ``{prompt}`` is replaced by the prompt, inside the one argument that holds it
    (``{prompt}`` alone, or ``--message={prompt}``); without it the prompt goes to
    standard input. ``{python}`` and ``{rootdir}`` (and any other placeholder in the
    settings) are replaced inside words too, never inside the prompt.
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
        self.words = shlex.split(settings.command)
        self.placeholders = dict(settings.placeholders)
        self.extra_args = settings.args

    def invocation(self, request: RunRequest) -> Invocation:
        argv: list[str] = []
        uses_prompt = False
        for word in self.words:
            parts = word.split("{prompt}")
            uses_prompt = uses_prompt or len(parts) > 1
            argv.append(request.prompt.join(self._expand(part) for part in parts))
        argv.extend(self.extra_args)
        return Invocation(tuple(argv), stdin=None if uses_prompt else request.prompt)

    def _expand(self, text: str) -> str:
        for key, value in self.placeholders.items():
            text = text.replace("{" + key + "}", value)
        return text

    def parse(self, result: process.ProcessResult, request: RunRequest) -> AgentResult:
        if result.returncode != 0:
            raise AgentError(
                f"agent command {process.exited(result.returncode)}: {result.said()}",
                kind="crash",
            )
        return AgentResult(
            text=result.stdout,
            exit_code=result.returncode,
            duration_ms=measured_ms(result),
            truncated=result.truncated,
        )
