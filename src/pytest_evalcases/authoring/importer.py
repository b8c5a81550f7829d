"""``evalcases import``: a real agent session turned into a case (docs/writing-cases.md,
"From an incident").

The case takes the chosen user turn's prompt verbatim and a fixture of the repository
as it was when the session started (``git archive`` of that commit, under the evals
root's ``fixtures/<id>/``). What the incident broke (``defends``) and the check that
fails when it recurs are the author's: they are written as ``TODO``, which ``evalcases
lint`` reports as "TODO left for the author", and the agent's tool calls of that turn
are listed in comments as candidate ``tool_not_called`` checks.
"""

from __future__ import annotations

import json
import re
import shlex
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from pytest_evalcases import git
from pytest_evalcases.authoring import importing
from pytest_evalcases.authoring.importing.session import Session, Turn
from pytest_evalcases.authoring.new import next_step
from pytest_evalcases.cases import limits
from pytest_evalcases.cases.discovery import Discovery
from pytest_evalcases.cases.fields import KEBAB_CASE, KEBAB_RULE
from pytest_evalcases.errors import UsageError
from pytest_evalcases.kinds import SessionCli
from pytest_evalcases.text import plural

#: What marks a value the author must still write; lint reports it (authoring/lint.py).
TODO = "TODO"
#: The placeholder check's description: lint knows it by its TODO.
TODO_CHECK = "TODO: a check that fails when the incident recurs"
#: How many words of the prompt make the case id, and its longest length.
ID_WORDS = 6
ID_CHARS = 48
#: The longest tool input quoted in a candidate check (the start of it, escaped).
INPUT_CHARS = 80
_CLI_NAMES = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}


@dataclass(frozen=True)
class Fixture:
    """The repository state the session started from, and how it was found."""

    #: The directory the session ran in; in a git repository, the repository's top.
    source: Path | None
    #: The commit archived into the fixture; ``None`` when there is none to take.
    commit: str | None
    #: How the commit was found, or why there is no fixture (for a comment and the user).
    note: str
    #: The branch the fixture's repository gets: the session's, else the checked-out one.
    branch: str = "main"
    #: The directory of the session below the repository's top (``sub/``), or "".
    prefix: str = ""

    @property
    def tree(self) -> str:
        """What ``git archive`` takes: the commit, or ``COMMIT:sub/`` for a subdirectory."""
        return f"{self.commit}:{self.prefix}" if self.prefix else str(self.commit)


@dataclass(frozen=True)
class Imported:
    """What ``evalcases import`` wrote, and what to run next."""

    case: Path
    fixture: Path | None
    turn: int
    turns: int
    note: str
    command: str
    #: What to add to the configuration so that a plain pytest collects the case.
    hint: str
    #: The first line of each user turn's prompt, first to last.
    prompts: tuple[str, ...]


def import_session(
    cli: SessionCli,
    session_file: Path,
    at: int | None,
    output: Path | None,
    cwd: Path,
) -> Imported:
    """Read ``session_file`` (saved by ``cli``), write the case of user turn ``at``
    (1-based; the last when ``None``) to ``output`` (default ``evals/<id>.yaml``, the id
    from the prompt) and its fixture; never overwrite either."""
    session = importing.read(cli, (cwd / session_file).resolve())
    count = len(session.turns)
    number = count if at is None else at
    if not 1 <= number <= count:
        raise UsageError(f"--at {at}: the session has {plural(count, 'user turn')} (1 to {count})")
    turn = session.turns[number - 1]
    target = output if output is not None else Path("evals") / f"{case_id(turn.prompt)}.yaml"
    case = target.stem
    if not re.fullmatch(KEBAB_CASE, case) or len(case) > limits.ID_CHARS:
        raise UsageError(
            f"{target}: the file name must be a case id: it {KEBAB_RULE}, at most "
            f"{limits.ID_CHARS} characters; e.g. {case_id(turn.prompt)}.yaml"
        )
    if target.suffix not in (".yaml", ".yml"):
        raise UsageError(f"{target}: an imported case is written as YAML (.yaml)")
    for suffix in (".yaml", ".yml", ".json"):
        if (cwd / target).with_suffix(suffix).exists():
            raise UsageError(f"{target.with_suffix(suffix)} already exists; not overwriting it")
    root = evals_root(cwd / target)
    fixture_dir = root / "fixtures" / case
    found = find_fixture(session)
    if found.commit is not None and fixture_dir.exists():
        raise UsageError(f"{fixture_dir} already exists; not overwriting it")
    step = next_step(target, cwd)
    command = f"{step.pytest} --eval-red-first --eval-agent {cli}"
    text = render(session, number, turn, case, found, command)
    (cwd / target).parent.mkdir(parents=True, exist_ok=True)
    if found.commit is not None and found.source is not None:
        materialise(found.source, found.tree, fixture_dir)
    with (cwd / target).open("x", encoding="utf-8") as handle:
        handle.write(text)
    return Imported(
        case=target,
        fixture=fixture_dir if found.commit is not None else None,
        turn=number,
        turns=count,
        note=found.note,
        command=command,
        hint=step.hint,
        prompts=tuple(t.prompt.strip().split("\n")[0] for t in session.turns),
    )


def case_id(prompt: str) -> str:
    """A kebab-case id from the prompt's first words (``imported-case`` when it has no
    letters or digits)."""
    words = re.findall(r"[a-z0-9]+", prompt.lower())[:ID_WORDS]
    text = "-".join(words)[:ID_CHARS].strip("-")
    return text or "imported-case"


def evals_root(target: Path) -> Path:
    """The evals root a case file at ``target`` is collected under: its nearest ``evals``
    directory, else its own directory (which the printed command names in
    ``eval_paths``)."""
    path = target.resolve()
    return Discovery(Path(path.anchor)).evals_root(path) or path.parent


def find_fixture(session: Session) -> Fixture:
    """The commit of the session's directory when it started: the one the CLI recorded,
    else the branch's (or HEAD's) last commit at or before the session's start."""
    where = session.cwd
    if where is None:
        return Fixture(None, None, "the session file does not say which directory it ran in")
    if not where.is_dir():
        return Fixture(where, None, f"the session ran in {where}, which no longer exists here")
    if _git(where, "rev-parse", "--is-inside-work-tree") != "true":
        return Fixture(where, None, f"the session ran in {where}, which is not a git repository")
    name = _CLI_NAMES[session.cli]
    # A session in a subdirectory ran there: the fixture is that directory's tree.
    prefix = _git(where, "rev-parse", "--show-prefix") or ""
    where = Path(_git(where, "rev-parse", "--show-toplevel") or where)
    branch = session.branch or _git(where, "symbolic-ref", "-q", "--short", "HEAD") or "main"
    if session.commit is not None and _git(where, "cat-file", "-t", session.commit) == "commit":
        note = f"{name} recorded commit {session.commit}"
        return Fixture(where, session.commit, note, branch, prefix)
    ref = session.branch or "HEAD"
    if _git(where, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}") is None:
        ref = "HEAD"
    if not session.started:
        return Fixture(where, None, "the session file gives no time its session started")
    commit = _git(where, "rev-list", "-1", f"--before={session.started}", ref)
    why = (
        f"{name} recorded commit {session.commit}, which {where} does not have"
        if session.commit is not None
        else f"{name} records no commit"
    )
    if not commit:
        return Fixture(where, None, f"{why}, and {ref} has none before {session.started}")
    at_start = f"the last commit of {ref} at or before the session's start ({session.started})"
    return Fixture(where, commit, f"{why}: {at_start}", branch, prefix)


def materialise(repo: Path, tree: str, directory: Path) -> None:
    """``git archive`` of ``tree`` (``COMMIT:PATH``) unpacked into ``directory`` (made
    here)."""
    with tempfile.TemporaryDirectory() as scratch:
        archive = Path(scratch) / "fixture.tar"
        done = git.run_to_file(repo, ["archive", "--format=tar", tree], archive)
        if done.returncode != 0:
            raise UsageError(f"git archive {tree} in {repo} failed: {done.stderr.strip()}")
        directory.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(directory, filter="data")
            else:
                # Python 3.10 before 3.10.12 has no filters; git writes no entry that
                # leaves the directory.
                tar.extractall(directory)


def _git(repo: Path, *args: str) -> str | None:
    done = git.run(repo, args)
    return done.stdout.strip() if done.returncode == 0 else None


def render(
    session: Session, number: int, turn: Turn, case: str, found: Fixture, command: str
) -> str:
    """The text of the imported case file."""
    name = _CLI_NAMES[session.cli]
    version = session.version or "version not recorded in the session file"
    lines = [
        f'# Eval case {case}, from an incident (docs/writing-cases.md, "From an incident"):',
        f"# turn {number} of {len(session.turns)} of {name} session {session.session_id},",
        f"# {session.path}",
        f"# Agent: {name} {version}; model: {turn.model or 'not recorded'}.",
    ]
    if found.commit is not None:
        lines += [
            f"# Fixture: fixtures/{case}/ is `git archive` of {found.tree} of {found.source}",
            f"# ({found.note}).",
        ]
    else:
        lines += [
            f"# TODO fixture: {found.note}. Put the files the task needs in fixtures/{case}/",
            f"# (relative to this evals directory) and add `cwd: fixtures/{case}`.",
        ]
    lines += [
        "# Next: write defends and the check, then confirm the case fails first:",
        f"#   {command}",
        "",
        f"id: {case}",
        "# TODO: the rule, skill, hook or config file the incident broke (from the rootdir).",
        f"defends: {TODO}",
    ]
    if found.commit is not None:
        branch = shlex.quote(found.branch)
        message = shlex.quote(f"fixture: {found.commit[:12]}")
        setup = (
            f"git init -q -b {branch} && git add -A && git -c user.name=dev "
            f"-c user.email=dev@example.com commit -qm {message}"
        )
        lines += [
            f"cwd: fixtures/{case}",
            "# The session ran in a git repository: so does the case.",
            f"setup: {json.dumps(setup)}",
        ]
    lines += ["# The user's words of that turn, verbatim.", *_prompt(turn.prompt), "checks:"]
    if turn.calls:
        lines.append(
            "  # The agent's tool calls in that turn, candidates for the check (keep the one "
            "the rule forbids):"
        )
        for call in turn.calls:
            pattern = json.dumps(_literal(call.input[:INPUT_CHARS]), ensure_ascii=False)
            check = f"{{type: tool_not_called, tool: {call.kind}, input: {pattern}}}"
            lines.append(f"  # - {check}  # {call.name}")
    else:
        lines.append("  # The agent made no tool call in that turn.")
    lines += [
        "  - type: output_not_matches",
        "    pattern: TODO-replace-this-check",
        f"    description: {json.dumps(TODO_CHECK)}",
        "",
    ]
    return "\n".join(lines)


def _literal(text: str) -> str:
    """``text`` as a regular expression that matches it (only the metacharacters
    escaped, so that the pattern reads like the command)."""
    return re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)


def _prompt(prompt: str) -> list[str]:
    """``prompt:`` as a literal block when that reads back verbatim, else quoted."""
    if prompt.strip() and "\r" not in prompt and "\t" not in prompt:
        block = ["prompt: |-", *(f"  {line}" if line else "" for line in prompt.split("\n"))]
        try:
            loaded = yaml.safe_load("\n".join(block))
        except yaml.YAMLError:
            loaded = None
        if isinstance(loaded, dict) and loaded.get("prompt") == prompt:
            return block
    return [f"prompt: {json.dumps(prompt, ensure_ascii=False)}"]
