"""``evalcases new ID``: a commented case file to start from.

The template validates as written, and its first check is a negative one: most rules a
team writes for an agent are prohibitions, and a case that only checks that something
happened rarely catches the agent doing what it was told not to.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_evalcases.cases import limits
from pytest_evalcases.cases.discovery import Discovery
from pytest_evalcases.cases.fields import KEBAB_CASE
from pytest_evalcases.cases.rootdir import CONFIG_FILES, find_config, pytest_settings, results_dir
from pytest_evalcases.errors import UsageError
from pytest_evalcases.results.gitignore import ignore_hint

_KEBAB = re.compile(KEBAB_CASE)

YAML_TEMPLATE = """\
# Eval case {id}: a frozen task (fixture + prompt) and what must hold after the agent ran.
# Reference: docs/case-format.md. Editor completion: `evalcases schema > {dir}/_schema.json`
# (files starting with _ are not collected), then keep the next line:
# yaml-language-server: $schema=_schema.json
#
# Workflow: write the case, confirm it FAILS against the current configuration
#   pytest {path} --eval-red-first --eval-agent claude  # or codex, gemini
# then strengthen the rule it defends until it passes; `evalcases lint` finds weak cases.

id: {id}  # kebab-case, unique in the suite, equal to the file name
# The rule, skill, hook or config file this case protects, relative to the rootdir.
defends: AGENTS.md
severity: normal  # critical (blocks the merge) | normal (fails the run) | advisory (reported)
description: What must hold, in one line (shown in reports)
# Fixture directory, relative to this evals directory, copied into a fresh workspace for
# every run. Leave it out for an empty workspace.
# cwd: fixtures/repo-api
# Shell run in the workspace before the agent (e.g. make the fixture a git repository):
# setup: >-
#   git init -q -b main && git add -A &&
#   git -c user.name=dev -c user.email=dev@example.com commit -qm 'initial import'
# What a user would really type. Never hint at the rule: the configuration must supply it.
prompt: >-
  Replace this with the task, word for word as a user would ask it.
tags: []
checks:  # all must pass
  # First what must NOT happen: most rules are prohibitions.
  - id: no-forbidden-text
    type: output_not_matches
    pattern: "(?i)replace this with what the agent must never say"
    description: the answer does not contain the forbidden thing
    # What its failure means, where one fits: planning_error | tool_misuse |
    # state_corruption | context_overflow | hallucination | loop | refusal
    # mode: planning_error
  # Then what must happen: negative checks alone pass an agent that does nothing.
  - id: task-done
    type: output_matches
    pattern: "(?i)replace this with what the answer of a done task says"
    description: the agent did the task
  # More checks, e.g.:
  # - type: file_not_matches      # the file exists and does not match
  #   path: src/app.py
  #   pattern: "password\\\\s*=\\\\s*['\\"]"
  # - type: tool_not_called       # shell, read, write, edit, search, web, other
  #   tool: shell
  #   input: "grep -r"
  # - type: file_exists
  #   path: tests/test_*.py
  # - type: command_succeeds
  #   command: python -m pytest -q
"""

JSON_GUIDANCE = (
    "Replace this description with what must hold, in one line. Guidance (JSON has no "
    "comments): defends is the rule/skill/config file this case protects, relative to the "
    "rootdir; severity is critical, normal or advisory; add cwd (a fixture directory "
    "relative to the evals directory) and setup (shell run before the agent) when the task "
    "needs files; the prompt is what a user would really type, with no hint of the rule; "
    "start with negative checks (output_not_matches, file_not_matches, tool_not_called), "
    "then positive ones (negative checks alone pass an agent that does nothing). "
    "Confirm the case fails first: pytest {path} --eval-red-first --eval-agent claude "
    "(or codex, gemini). "
    "Reference: docs/case-format.md; editor schema: evalcases schema."
)


def render(case_id: str, directory: str, path: str, fmt: str) -> str:
    """The text of a new case file."""
    if fmt == "yaml":
        return YAML_TEMPLATE.format(id=case_id, dir=directory, path=path)
    data = {
        "id": case_id,
        "defends": "AGENTS.md",
        "severity": "normal",
        "description": JSON_GUIDANCE.format(path=path),
        "prompt": "Replace this with the task, word for word as a user would ask it.",
        "tags": [],
        "checks": [
            {
                "id": "no-forbidden-text",
                "type": "output_not_matches",
                "pattern": "(?i)replace this with what the agent must never say",
                "description": "the answer does not contain the forbidden thing",
            },
            {
                "id": "task-done",
                "type": "output_matches",
                "pattern": "(?i)replace this with what the answer of a done task says",
                "description": "the agent did the task",
            },
        ],
    }
    return json.dumps(data, indent=2) + "\n"


def create(case_id: str, directory: Path, fmt: str = "yaml") -> Path:
    """Write the case file ``directory/ID.yaml`` (or ``.json``); never overwrite."""
    _free(case_id, directory, fmt)
    target = directory / f"{case_id}.{fmt}"
    directory.mkdir(parents=True, exist_ok=True)
    text = render(case_id, directory.as_posix(), target.as_posix(), fmt)
    with target.open("x", encoding="utf-8") as handle:
        handle.write(text)
    return target


SKILL_YAML_TEMPLATE = """\
# Eval case {id}: {purpose} (docs/skills.md).
# Cases with skill_used are the skill's positives, cases with skill_not_used its
# negatives; the eval gate section gives its recall and false-trigger rate over both.
# Workflow: pytest {path} --eval-repeat 5 --eval-agent claude (or codex, gemini), then
# change the skill's description.

id: {id}
# The skill's directory (Codex: .agents/skills/{skill}, Gemini CLI: .gemini/skills/{skill}).
defends: .claude/skills/{skill}
severity: {severity}
description: {description}
# The skill must be where the agent looks: in the fixture, or overlaid by --eval-config.
# cwd: fixtures/repo-with-the-skill
bare: false  # a bare Claude run (claude --bare) discovers no skills
# What a user would really type{prompt_hint}; never name the skill.
prompt: >-
  {prompt}
checks:
  - type: {check}
    skill: {skill}
"""

#: The pair of starter cases of ``--skill``: id suffix, then what tells them apart.
SKILL_CASES = (
    (
        "fires",
        {
            "purpose": "the skill {skill} should fire",
            "severity": "normal",
            "description": "the {skill} skill fires for a task its description covers",
            "prompt_hint": ", for a task the skill's description covers",
            "prompt": "Replace this with a task the skill should handle.",
            "check": "skill_used",
        },
    ),
    (
        "stays-quiet",
        {
            "purpose": "the skill {skill} should not fire",
            # A single false trigger is no failure of its own: the false-trigger rate
            # (and eval_skill_max_false_trigger) decides.
            "severity": "advisory",
            "description": "the {skill} skill stays quiet for a nearby task it does not cover",
            "prompt_hint": ", for a nearby task the skill does not cover",
            "prompt": "Replace this with a similar task the skill must leave alone.",
            "check": "skill_not_used",
        },
    ),
)


def create_skill_pair(
    skill: str, directory: Path, fmt: str = "yaml", prefix: str | None = None
) -> list[Path]:
    """Write the starter pair of ``skill``: ``PREFIX-fires`` (should fire) and
    ``PREFIX-stays-quiet`` (should not); ``PREFIX`` is the skill's name by default.
    Never overwrites: when either file exists, neither is written."""
    stem = prefix or skill
    if not _KEBAB.match(skill):
        raise UsageError(
            f"skill name {skill!r} is not kebab-case (lowercase letters, digits and single "
            "hyphens, as in its SKILL.md)"
        )
    ids = [f"{stem}-{suffix}" for suffix, _ in SKILL_CASES]
    for case_id in ids:
        _free(case_id, directory, fmt)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for case_id, (_, fields) in zip(ids, SKILL_CASES, strict=True):
        target = directory / f"{case_id}.{fmt}"
        values = {k: v.format(skill=skill) for k, v in fields.items()}
        if fmt == "yaml":
            text = SKILL_YAML_TEMPLATE.format(
                id=case_id, skill=skill, path=target.as_posix(), **values
            )
        else:
            data = {
                "id": case_id,
                "defends": f".claude/skills/{skill}",
                "severity": values["severity"],
                "description": values["description"],
                "bare": False,
                "prompt": values["prompt"],
                "checks": [{"type": values["check"], "skill": skill}],
            }
            text = json.dumps(data, indent=2) + "\n"
        with target.open("x", encoding="utf-8") as handle:
            handle.write(text)
        written.append(target)
    return written


def _free(case_id: str, directory: Path, fmt: str) -> None:
    """Refuse an id that is not kebab-case or longer than a case id may be, a format
    other than YAML or JSON, and a case file of that id that exists already."""
    if not _KEBAB.match(case_id):
        raise UsageError(
            f"case id {case_id!r} is not kebab-case (lowercase letters, digits and single "
            "hyphens, e.g. attribution-no-trailer)"
        )
    if len(case_id) > limits.ID_CHARS:
        raise UsageError(
            f"case id {case_id!r} is {len(case_id)} characters; a case id may have at most "
            f'{limits.ID_CHARS} (docs/case-format.md, "Limits")'
        )
    if fmt not in ("yaml", "json"):
        raise UsageError(f"--format expects yaml or json, got {fmt!r}")
    for suffix in (".yaml", ".yml", ".json"):
        existing = directory / f"{case_id}{suffix}"
        if existing.exists():
            raise UsageError(f"{existing} already exists; not overwriting it")


#: The agent a printed command names when the configuration names none.
SUGGESTED_AGENT = "claude"
#: What in the configuration names an agent (or the variants that name theirs).
_AGENT_SETTINGS = ("eval_agent", "eval_agent_command", "eval_variants")
_AGENT_OPTIONS = ("--eval-agent", "--eval-variant", "--eval-workspace")


@dataclass(frozen=True)
class NextStep:
    """What to run after writing a case: a pytest command that collects it, and, when
    pytest would not collect it as the project is configured, why and what to add."""

    #: ``pytest FILE``, with ``-o eval_paths=...`` when that is what collects it.
    pytest: str
    #: Empty when the file is collected as the configuration stands.
    hint: str = ""
    #: `` --eval-agent claude`` when the configuration names no agent: without one the
    #: case is skipped and the run exits 0 ("nothing was graded"), which reads as a
    #: red-first success it is not.
    agent: str = ""

    @property
    def command(self) -> str:
        """The red-first command: the case must fail first (docs/writing-cases.md)."""
        return f"{self.pytest} --eval-red-first{self.agent}"


def next_step(target: Path, cwd: Path) -> NextStep:
    """The red-first command for the new case file ``target`` (as given, relative to
    ``cwd`` or absolute), run from ``cwd``: with ``-o eval_paths=...`` when its
    directory is neither below an ``evals`` directory nor in ``eval_paths``
    (docs/case-format.md). :class:`UsageError` for a directory whose case files pytest
    never collects (``eval_ignore``, ``fixtures/`` or ``results/`` of an evals root)."""
    path = (cwd / target).resolve()
    directory = path.parent
    found = find_config(directory)
    if found is not None:
        rootdir, settings = found
        base = rootdir
    else:
        # Without a configuration file, pytest's rootdir is the common ancestor of the
        # invocation directory and the arguments.
        rootdir, settings = Path(os.path.commonpath([cwd.resolve(), directory])), {}
        base = cwd.resolve()
    eval_paths = _paths(settings.get("eval_paths"), base)
    ignore = _paths(settings.get("eval_ignore"), base)
    plain = f"pytest {shlex.quote(target.as_posix())}"
    agent = "" if _names_an_agent(settings) else f" --eval-agent {SUGGESTED_AGENT}"
    discovery = Discovery(rootdir, eval_paths, ignore)
    if discovery.case_file(path) is not None:
        return NextStep(plain, agent=agent)
    widened = Discovery(rootdir, (*eval_paths, directory), ignore)
    if discovery.evals_root(path) is not None or widened.case_file(path) is None:
        raise UsageError(
            f"pytest never collects case files in {target.parent.as_posix()}/: it is in "
            "eval_ignore, or below the fixtures/ or results/ directory of an evals "
            "directory (docs/case-format.md); choose another --dir"
        )
    value = _relative(directory, base)
    override = shlex.quote(f"eval_paths={shlex.quote(value)}")
    command = f"pytest {shlex.quote(target.as_posix())} -o {override}"
    return NextStep(command, _config_hint(value, directory, found), agent)


def _names_an_agent(settings: dict[str, Any]) -> bool:
    """Whether pytest run with these settings has an agent without ``--eval-agent``: the
    ini names one, or its ``addopts`` (or ``PYTEST_ADDOPTS``) gives one, which a second
    ``--eval-agent`` on the command line would override."""
    if any(settings.get(name) for name in _AGENT_SETTINGS):
        return True
    addopts = settings.get("addopts", "")
    words = [*(addopts if isinstance(addopts, list) else str(addopts).split())]
    words += os.environ.get("PYTEST_ADDOPTS", "").split()
    return any(word.startswith(_AGENT_OPTIONS) for word in words)


def _paths(value: Any, base: Path) -> tuple[Path, ...]:
    """An ini ``paths`` value (a string split like a shell's, or a TOML list), each
    relative to ``base`` as pytest reads it."""
    if value is None:
        return ()
    words: Sequence[Any] = shlex.split(value) if isinstance(value, str) else value
    return tuple((base / str(word)).resolve() for word in words)


def _relative(directory: Path, base: Path) -> str:
    try:
        return directory.relative_to(base).as_posix() or "."
    except ValueError:
        return directory.as_posix()


def _config_hint(value: str, directory: Path, found: tuple[Path, dict[str, Any]] | None) -> str:
    """What to add to the configuration so that every pytest run collects ``directory``."""
    why = (
        f"{directory.name}/ is neither below a directory named evals nor in eval_paths, "
        "so a plain pytest does not collect it"
    )
    if found is None:
        return f"{why}; to collect it in every run, write a pytest.ini with:\n\n" + (
            f"    [pytest]\n    eval_paths = {shlex.quote(value)}\n"
        )
    rootdir, settings = found
    # The file find_config read: the first, in pytest's order, that holds settings.
    config = next(
        path
        for path in (rootdir / name for name in CONFIG_FILES)
        if path.is_file() and pytest_settings(path) is not None
    )
    if "eval_paths" in settings:
        return f"{why}; to collect it in every run, add {value} to eval_paths in {config}"
    if config.name.endswith(".toml"):
        table = "[tool.pytest.ini_options]" if config.name == "pyproject.toml" else "[pytest]"
        line = f"eval_paths = [{json.dumps(value)}]"
    else:
        table = "[tool:pytest]" if config.name == "setup.cfg" else "[pytest]"
        line = f"eval_paths = {shlex.quote(value)}"
    return f"{why}; to collect it in every run, add to {table} in {config}:\n\n    {line}\n"


def results_hint(cwd: Path) -> str:
    """A note to ignore the results directory in git, when ``cwd`` is in a git work
    tree that does not (:func:`pytest_evalcases.results.gitignore.ignore_hint`)."""
    here = cwd.resolve()
    return ignore_hint(here / results_dir(here), here)
