"""The ``judge`` check (docs/judge.md): a model asked a yes/no question about a run's
final answer and its workspace's changes, after the agent. The judge is an agent run
of its own (the session's agent CLI, or ``eval_judge_agent``), on a read-only copy of
the workspace, in the sandbox; its answer must be in a fixed format, anything else is
an error of kind ``judge``, never a pass. A case's scripted judge (the check's
``script:``) answers without a request; a replayed or regraded run keeps the
judgement it stored. Plain Python, no pytest.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_evalcases import defaults
from pytest_evalcases.agents.base import Agent, AgentResult, RunRequest
from pytest_evalcases.cases.loading import LoadedCase
from pytest_evalcases.cases.registry import CheckContext, Outcome, check_id
from pytest_evalcases.cases.schema import Judge
from pytest_evalcases.errors import RunError
from pytest_evalcases.kinds import AgentHome, Spent, total_spent
from pytest_evalcases.redact import shorten
from pytest_evalcases.results.calibration import CheckCalibration
from pytest_evalcases.results.record import CheckRecord, JudgeRecord
from pytest_evalcases.run.agenthome import agent_home
from pytest_evalcases.run.conversation import converse
from pytest_evalcases.run.files import Unreadable, read_text
from pytest_evalcases.run.workspace import Overlay, populate
from pytest_evalcases.sandbox import Sandbox

if TYPE_CHECKING:
    # The proxy's modules (http.server, http.client) load with the first recorded run.
    from pytest_evalcases.recording.recorder import Recorder

#: The judge's answer: exactly these two lines (surrounding blank lines aside).
ANSWER = re.compile(r"\A\s*VERDICT:[ \t]*(yes|no)[ \t]*\n[ \t]*REASON:[ \t]*(\S[^\n]*?)\s*\Z")

PROMPT = """\
You are the judge of an automated evaluation. Answer one yes/no question about what a \
coding agent did. Do not change any file: the workspace is a read-only copy.

QUESTION: {question}

THE TASK THE AGENT WAS GIVEN:
{prompt}

THE AGENT'S FINAL ANSWER:
{answer}

THE WORKSPACE'S CHANGES AGAINST THE FIXTURE IT STARTED FROM:
{changes}

Answer in exactly two lines and nothing else:
VERDICT: yes|no
REASON: <one line>
"""

#: The model provider behind each built-in agent CLI: a judge of the same provider as
#: the agent is disclosed (same-provider bias, docs/judge.md).
PROVIDERS = {"claude": "anthropic", "codex": "openai", "gemini": "google"}


@dataclass(frozen=True)
class JudgeSetup:
    """Who judges a session's judge checks, and what their calibration says."""

    #: The judge's agent (``eval_judge_agent``, ``eval_judge_model``); ``None``: the
    #: run's own agent judges.
    agent: Agent | None = None
    #: The calibration report by check id (``eval_judge_calibration``); a check id
    #: not in it is uncalibrated.
    calibration: Mapping[str, CheckCalibration] = field(default_factory=dict)
    #: ``eval_judge_reask``: a replayed or regraded run asks the judge again rather
    #: than keeping the judgement it stored.
    reask: bool = False


def parse(text: str) -> tuple[bool, str]:
    """The judge's yes or no, and its reason; a ``judge`` error for anything but the
    two lines of the fixed format."""
    found = ANSWER.match(text)
    if found is None:
        raise RunError(
            "the judge's answer is not in the fixed format (a line `VERDICT: yes` or "
            "`VERDICT: no`, then a line `REASON: ...`, nothing else); it said: "
            f"{shorten(text.strip(), 300)!r}",
            kind="judge",
        )
    return found.group(1) == "yes", found.group(2)


def prompt(question: str, task: str, answer: str, changes: str) -> str:
    """What the judge is asked."""
    return PROMPT.format(
        question=question,
        prompt=task.strip() or "(none)",
        answer=answer.strip() or "(empty)",
        changes=changes or "(no changes)",
    )


def changes(fixture: Path | None, workspace: Path, limit: int = defaults.JUDGE_DIFF_CHARS) -> str:
    """The workspace's changes against ``fixture`` (an empty one when ``None``) as
    unified diffs of text files and one line per added, removed or binary file, at
    most ``limit`` characters; ``.git`` is left out. Only regular files are read (a
    symlink is shown as its target, a FIFO or device as a name), as checks read files
    (docs/case-format.md, "Paths, globs and symlinks")."""
    before = _files(fixture) if fixture is not None else {}
    after = _files(workspace)
    parts: list[str] = []
    for rel in sorted(before.keys() | after.keys()):
        old, new = before.get(rel), after.get(rel)
        if old is not None and new is not None and _same(old, new):
            continue
        parts.append(_diff(rel, old, new))
        if sum(len(p) for p in parts) > limit:
            break
    text = "\n".join(parts)
    if len(text) > limit:
        text = text[:limit] + "\n… (the rest of the changes is cut)"
    return text


def _files(root: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in names:
            path = Path(directory) / name
            found[path.relative_to(root).as_posix()] = path
    return found


def _same(a: Path, b: Path) -> bool:
    try:
        one, other = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    if stat.S_IFMT(one.st_mode) != stat.S_IFMT(other.st_mode):
        return False
    if stat.S_ISLNK(one.st_mode):
        return os.readlink(a) == os.readlink(b)
    if not stat.S_ISREG(one.st_mode):
        # A FIFO or device is never opened: it could block, or never end.
        return True
    return one.st_size == other.st_size and a.read_bytes() == b.read_bytes()


def _lines(path: Path, rel: str) -> list[str] | str | None:
    """A regular file's lines; a symlink's ``-> target``; ``None`` for anything else
    (binary, unreadable, a FIFO, a device)."""
    if path.is_symlink():
        return f"-> {os.readlink(path)}"
    try:
        text = read_text(path, rel)
    except Unreadable:
        return None
    return None if "\0" in text else text.splitlines()


def _text(path: Path | None, rel: str) -> list[str] | None:
    if path is None:
        return []
    found = _lines(path, rel)
    if isinstance(found, str):
        return [found]
    return found


def _diff(rel: str, old: Path | None, new: Path | None) -> str:
    before, after = _text(old, rel), _text(new, rel)
    if before is None or after is None:
        return f"binary or unreadable file changed: {rel}"
    head = "new file" if old is None else "deleted" if new is None else "changed"
    lines = difflib.unified_diff(before, after, f"a/{rel}", f"b/{rel}", lineterm="")
    return f"{head}: {rel}\n" + "\n".join(lines)


@contextlib.contextmanager
def read_only_copy(workspace: Path) -> Iterator[Path]:
    """A copy of ``workspace`` whose files and directories are read-only; it goes
    when the judge is done."""
    root = Path(tempfile.mkdtemp(prefix="evalcases-judge-"))
    copy = root / "workspace"
    try:
        shutil.copytree(workspace, copy, symlinks=True, ignore=_special)
        for directory, _, names in os.walk(copy, topdown=False):
            for name in names:
                path = os.path.join(directory, name)
                if not os.path.islink(path):
                    os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) & ~0o222)
            os.chmod(directory, 0o555)
        yield copy
    finally:
        for directory, _, _ in os.walk(root):
            with contextlib.suppress(OSError):
                os.chmod(directory, 0o755)
        shutil.rmtree(root, ignore_errors=True)


def _special(directory: str, names: list[str]) -> set[str]:
    """The FIFOs, sockets and devices among ``names``: never copied (a FIFO would block)."""
    found = set()
    for name in names:
        mode = os.lstat(os.path.join(directory, name)).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            found.add(name)
    return found


def same_provider(judge: str, agent: str | None) -> bool:
    """Whether the judge's agent and the run's agent are served by one provider."""
    if agent is None or judge == "script":
        return False
    return PROVIDERS.get(judge, judge) == PROVIDERS.get(agent, agent)


@dataclass
class Judging:
    """The judge of one run: asks (or takes the stored or scripted judgement of) each
    judge check of the case, and keeps what it found and what it spent."""

    case: LoadedCase
    setup: JudgeSetup
    #: The run's own agent (the judge by default); ``None`` in a regrade.
    agent: Agent | None
    #: The agent that ran, by name (for the same-provider disclosure).
    agent_name: str | None
    repetition: int = 0
    #: The judgements the replayed or regraded run stored, by check id.
    stored: Mapping[str, JudgeRecord] = field(default_factory=dict)
    #: The variant's configuration laid over the fixture: part of what the agent found,
    #: never shown to the judge as a change of the agent's.
    overlays: tuple[Overlay, ...] = ()
    #: Where the judge runs: the session's sandbox, the run's environment, its home.
    sandbox: Sandbox = field(default_factory=Sandbox)
    env: Mapping[str, str] = field(default_factory=dict)
    home: AgentHome = defaults.AGENT_HOME
    #: The session's recorder and the run's name beside the results file: the judge's
    #: exchange with its model is stored as ``<name>.judge-<check id>``.
    recorder: Recorder | None = None
    name: str | None = None
    judgements: dict[str, JudgeRecord] = field(default_factory=dict)
    spends: list[Spent | None] = field(default_factory=list)

    @property
    def spent(self) -> Spent | None:
        """What the judge's runs reported spending together."""
        return total_spent(self.spends)

    def __call__(self, check: Judge, ctx: CheckContext) -> Outcome:
        ident = self._id(check)
        stored = None if self.setup.reask else self.stored.get(ident)
        if stored is not None:
            found = replace(stored, source="stored")
        elif check.script is not None:
            answer = check.script[min(self.repetition, len(check.script) - 1)]
            yes, reason = parse(answer)
            found = JudgeRecord(yes, reason, "script", source="scripted")
        else:
            found = self._ask(check, ctx)
        calibration = self.setup.calibration.get(ident)
        found = replace(
            found,
            kappa=calibration.kappa if calibration is not None else None,
            labels=calibration.n if calibration is not None else 0,
            blocking=calibration is not None and calibration.calibrated,
        )
        self.judgements[ident] = found
        said = "yes" if found.yes else "no"
        message = f"the judge ({found.judge}) answered {said}: {found.reason}"
        if not found.blocking:
            message += " [uncalibrated judge: reported, never blocks]"
        return Outcome(found.yes, message)

    def attach(self, records: Sequence[CheckRecord]) -> tuple[CheckRecord, ...]:
        """``records`` with each judge check's judgement."""
        return tuple(
            replace(r, judge=self.judgements[r.id]) if r.id in self.judgements else r
            for r in records
        )

    def _id(self, check: Judge) -> str:
        for index, one in enumerate(self.case.checks):
            if one is check:
                return check_id(one, index)
        return check.id or "judge"

    def _ask(self, check: Judge, ctx: CheckContext) -> JudgeRecord:
        if self.case.script is not None:
            # The run's environment holds no credential of the operator's: a judge CLI
            # started in it has no model to ask (docs/config-contract.md).
            raise RunError(
                "a judge check of a scripted case needs a `script:` of its own: the "
                "scripted model plays the agent's model, not the judge's (docs/judge.md)",
                kind="judge",
            )
        agent = self.setup.agent or self.agent
        if agent is None:
            raise RunError(
                "a judge check needs a judge: no agent is configured to ask "
                "(eval_judge_agent, --eval-agent), and the run stored no judgement",
                kind="judge",
            )
        with tempfile.TemporaryDirectory(prefix="evalcases-judge-base-") as base:
            # What the agent found: the fixture with the variant's overlays.
            populate(Path(base), self.case.fixture, self.overlays)
            shown = changes(Path(base), ctx.workspace)
        asked = prompt(check.question, self.case.prompt or "", ctx.output or "", shown)
        with (
            read_only_copy(ctx.workspace) as copy,
            agent_home(agent, self.env, self.home) as (home_env, home_paths),
        ):
            request = RunRequest(
                prompt=asked,
                workspace=copy,
                bare=True,
                timeout=defaults.JUDGE_TIMEOUT,
                env={**self.env, **home_env},
                sandbox=self.sandbox,
                writable=home_paths,
            )
            try:
                result, recording = self._run(agent, request, ident=self._id(check))
            except RunError as exc:
                self.spends.append(exc.spent)
                raise RunError(f"the judge ({agent.name}) failed: {exc}", kind="judge") from None
        self.spends.append(result.spent)
        yes, reason = parse(result.text)
        return JudgeRecord(
            yes,
            reason,
            agent.name,
            model=result.models[0] if result.models else None,
            same_provider=same_provider(agent.name, self.agent_name),
            recording=recording,
        )

    def _run(
        self, agent: Agent, request: RunRequest, *, ident: str
    ) -> tuple[AgentResult, str | None]:
        """The judge's run, through the recording proxy when the session records: its
        exchange stored beside the run's (docs/judge.md, "Who judges")."""
        recorder = self.recorder
        recorded = recorder is not None and recorder.place is not None and self.name
        api = agent.model_api(request.env) if recorded else None
        if recorder is None or api is None:
            return converse(agent, request, ()), None
        with recorder.channel(api.upstream, request.env) as channel:
            if api.variable:
                request = replace(request, env={**request.env, api.variable: channel.url})
            else:
                request = replace(request, base_url=channel.url)
            recording = None
            try:
                result = converse(agent, request, ())
            finally:
                # Stored also when the judge failed; a full disk costs the recording only.
                name = f"{self.name}.judge-{ident}"
                header = {"run": name, "case": self.case.id, "check": ident, "agent": agent.name}
                with contextlib.suppress(OSError):
                    recording = recorder.store(channel, name, header)
        return result, recording
