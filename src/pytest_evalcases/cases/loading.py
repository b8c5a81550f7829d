"""Case files to validated cases, with source lines.

Data is parsed, within bounds, by :mod:`~pytest_evalcases.cases.parsing`; the YAML
node tree is composed only when a line is needed: for the cases of a ``cases:`` list,
and to point an error at the offending node. :mod:`~pytest_evalcases.cases.diagnostics`
phrases the errors.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pytest_evalcases.cases import fields, limits, schema, scripting
from pytest_evalcases.cases.diagnostics import Source, kind_of, read_text
from pytest_evalcases.cases.discovery import looks_like_case
from pytest_evalcases.cases.limits import shown
from pytest_evalcases.cases.parsecache import CaseEntry, FileIndex, ParseCache
from pytest_evalcases.cases.parsing import bounded, parse
from pytest_evalcases.cases.registry import CheckRegistry
from pytest_evalcases.cases.schema import TASK_SEVERITY
from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.kinds import SEVERITIES, RecordKind, Severity
from pytest_evalcases.results.record import CheckRecord


@dataclass(frozen=True)
class LoadedCase:
    """A validated case, whatever format it came from; what the runner works with."""

    id: str
    file: Path
    #: 0-based line of the case in its file (IDEs jump there).
    line: int
    evals_root: Path
    defends: str
    severity: Severity
    checks: tuple[schema.CheckModel, ...]
    description: str | None = None
    #: Absolute fixture directory, or ``None`` for an empty workspace.
    fixture: Path | None = None
    setup: str | None = None
    prompt: str | None = None
    bare: bool = True
    timeout: float | None = None
    min_pass_rate: float = 1.0
    quarantine: str | None = None
    tags: tuple[str, ...] = ()
    #: ``agents:``: the only agents that run the case; ``None``: every agent.
    agents: tuple[str, ...] | None = None
    #: ``max_cost`` (USD) and ``max_tokens``: a run's limits (docs/budget.md).
    max_cost: float | None = None
    max_tokens: int | None = None
    #: ``case`` or ``task`` (a task directory; docs/case-format.md).
    kind: RecordKind = "case"
    #: Each check's own severity, in the order of ``checks``: a task directory's
    #: ``HIGH``, ``MEDIUM`` and ``LOW``. Empty: every check has the case's.
    check_severities: tuple[Severity, ...] = ()
    #: ``perturb: false``: ``--eval-perturb`` leaves the prompt alone.
    perturb: bool = True
    #: ``paraphrases:``: the author's other wordings of ``prompt`` (docs/perturbation.md).
    paraphrases: tuple[str, ...] = ()
    #: ``script:``: the turns the plugin plays as the model (docs/config-contract.md);
    #: ``None``: the agent's own model answers.
    script: tuple[scripting.ScriptTurn, ...] | None = None
    #: ``follow_ups:``: the prompts after ``prompt``, each a turn of the same session
    #: (docs/conversations.md); empty: a run of one prompt.
    follow_ups: tuple[str, ...] = ()
    #: ``mcp:``: the case's MCP servers by name, in the file's order (docs/mcp.md).
    mcp: tuple[tuple[str, scripting.McpServerModel], ...] = ()

    def other_agent(self, agent: str | None) -> str | None:
        """Why the case does not run on ``agent``, when its ``agents:`` leaves it out;
        ``None`` when it runs (docs/variants.md, "Cases for one agent")."""
        if self.agents is None or agent is None or agent in self.agents:
            return None
        return f"for {', '.join(self.agents)} only (agents:); this variant runs {agent}"

    @property
    def entry(self) -> CaseEntry:
        """What collection needs of this case (and the parse cache keeps)."""
        return CaseEntry(
            self.id,
            self.line,
            self.severity,
            self.tags,
            self.defends,
            self.perturb,
            self.prompt if self.perturb else None,
            len(self.paraphrases),
        )

    def failure_severity(self, failed: Iterable[CheckRecord]) -> Severity:
        """How severe a run's failure is whose checks ``failed`` failed: as severe as
        the most severe of them, never more than the case (docs/case-format.md,
        "Task-directory format"); an uncalibrated judge check's failure is advisory
        (docs/judge.md)."""
        failed = list(failed)
        if not self.check_severities and all(c.blocks for c in failed):
            return self.severity
        by_id = dict(zip((c.id for c in self.checks), self.check_severities, strict=False))
        found = [
            by_id.get(check.id, self.severity) if check.blocks else "advisory" for check in failed
        ]
        return min(found, key=SEVERITIES.index) if found else self.severity

    @property
    def judged(self) -> bool:
        """Whether a check of the case is a ``judge`` check (docs/judge.md)."""
        return any(c.type == "judge" for c in self.checks)

    @property
    def needs_transcript(self) -> bool:
        return self.needs_hook_events or bool(self.transcript_checks)

    @property
    def transcript_checks(self) -> tuple[str, ...]:
        """The types of the case's checks that read the agent's transcript, each once."""
        # A refusal check too: Gemini CLI names a refused call's input in its transcript only.
        transcripts = (
            schema.TOOL_CHECKS
            + schema.SKILL_CHECKS
            + schema.BLOCK_CHECKS
            + schema.MCP_CHECKS
            + schema.HOOK_CHECKS
        )
        return tuple(dict.fromkeys(c.type for c in self.checks if c.type in transcripts))

    @property
    def grades_refusals(self) -> bool:
        """A check of the case grades refused tool calls: refusals are then its
        verdict's business, not an error of the run (docs/agents.md, "Refused tool
        calls")."""
        return any(c.type in schema.BLOCK_CHECKS for c in self.checks)

    @property
    def reads_requests(self) -> bool:
        """A check of the case reads what the CLI sent its model: its runs go through
        the proxy, recorded or not (docs/case-format.md, "What a request check
        reads")."""
        return any(c.type in schema.REQUEST_CHECKS for c in self.checks)

    @property
    def needs_hook_events(self) -> bool:
        """A check of the case reads the hooks the agent ran, or tells refusals by a
        hook from refusals by permission rules: the agent's output must then show them."""
        return any(
            c.type in schema.HOOK_CHECKS
            or (c.type in schema.BLOCK_CHECKS and getattr(c, "by", "any") != "any")
            for c in self.checks
        )

    @property
    def starts_processes(self) -> bool:
        """Whether a check of the case may start a process: a command check, or a check
        type of a plugin (a run that starts no agent needs the sandbox for these only)."""
        return not all(isinstance(check, schema.IN_PROCESS_CHECKS) for check in self.checks)


def load_case_file(
    path: Path, evals_root: Path, registry: CheckRegistry, cache: ParseCache | None = None
) -> list[LoadedCase]:
    """Load every case of a ``.yaml`` / ``.yml`` / ``.json`` case file; none when the
    file is data, not a case file (:func:`~pytest_evalcases.cases.discovery.looks_like_case`:
    a case file holds at least one case)."""
    if cache is not None:
        hit = cache.get(path)
        if hit is not None and not looks_like_case(hit[0]):
            return []
        if hit is not None:
            try:
                cases = _cases(path, evals_root, registry, hit[0], Source(path, None), hit[1])
            except CaseFileError:
                pass  # load it afresh, for a message with the right lines
            else:
                if cache.index(path, evals_root) is None:
                    cache.put(path, hit[0], hit[1], file_index(evals_root, cases, registry))
                return cases
    text = "" if _large_data(path) else read_text(path)
    data = parse(path, text) if text.strip() else None  # an empty file holds no case
    if not looks_like_case(data):
        if cache is not None:
            cache.put(path, None, [])  # known to be data while it stays the same
        return []
    source = Source(path, text)
    bounded(source, data)
    cases = _cases(path, evals_root, registry, data, source, None)
    if cache is not None:
        lines = [case.line for case in cases]
        cache.put(path, data, lines, file_index(evals_root, cases, registry))
    return cases


def _large_data(path: Path) -> bool:
    """Whether ``path`` is larger than a case file may be, parses, and holds no case: a
    data file (a large ``golden.json``). One that holds a case, or does not parse, is a
    case file, which the loader refuses as too large."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size <= limits.FILE_BYTES:
            return False
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False  # the loader says why it cannot be read
    with os.fdopen(fd, "rb") as file:
        try:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return False  # swapped since: the loader refuses it
            text = file.read().decode("utf-8")
            return not looks_like_case(parse(path, text))
        except (OSError, UnicodeDecodeError, CaseFileError):
            return False


def file_index(
    evals_root: Path, cases: Sequence[LoadedCase], registry: CheckRegistry
) -> FileIndex | None:
    """What collecting this file again needs, while it stays unchanged: ``None`` when a
    check type comes from a plugin (a plugin may be gone next time, and the file must
    then fail at collection, not when it runs)."""
    if any(check.type not in registry.builtin for case in cases for check in case.checks):
        return None
    fixtures = sorted({str(case.fixture) for case in cases if case.fixture is not None})
    return FileIndex(str(evals_root), tuple(case.entry for case in cases), tuple(fixtures))


def _cases(
    path: Path,
    evals_root: Path,
    registry: CheckRegistry,
    data: dict[str, Any],
    source: Source,
    lines: list[int] | None,
) -> list[LoadedCase]:
    """Validate the parsed ``data`` of a case file into cases (a mapping: what
    :func:`looks_like_case` accepted)."""
    if "cases" in data:
        extra = sorted(set(data) - {"cases"})
        if extra:
            raise source.error(
                [extra[0]], "extra", f"unknown top-level field beside `cases:`: {extra[0]!r}"
            )
        items = data["cases"]
        if not isinstance(items, list) or not items:
            raise source.error(["cases"], "type", "`cases:` must be a non-empty list of cases")
        prefix: list[str | int] = ["cases"]
    else:
        items = [data]
        prefix = []
    cases: list[LoadedCase] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        loc = [*prefix, index] if prefix else []
        if not isinstance(item, dict):
            raise source.error(loc, "type", f"a case must be a mapping, got {kind_of(item)}")
        try:
            model = registry.case_model.model_validate(item)
        except ValidationError as exc:
            raise source.validation_error(exc, loc, item) from None
        if not prefix:
            line = 0
        elif lines is not None and index < len(lines):
            line = lines[index]
        else:
            line = source.line_of(loc) - 1
        if model.id in seen:
            raise source.error(
                [*loc, "id"], "value", f"duplicate id {model.id!r} (also at line {seen[model.id]})"
            )
        seen[model.id] = line + 1
        _scripted_agents(source, model, loc)
        _turns(source, model.checks, len(model.follow_ups or ()), loc)  # type: ignore[attr-defined]
        _paraphrases(source, model, loc)
        fixture = _fixture(source, evals_root, model.cwd, [*loc, "cwd"])
        cases.append(
            LoadedCase(
                id=model.id,
                file=path,
                line=line,
                evals_root=evals_root,
                defends=model.defends,
                severity=model.severity,
                checks=tuple(model.checks),  # type: ignore[attr-defined]
                description=model.description,
                fixture=fixture,
                setup=model.setup,
                prompt=model.prompt,
                bare=model.bare,
                timeout=model.timeout,
                min_pass_rate=model.min_pass_rate,
                quarantine=model.quarantine,
                tags=tuple(model.tags),
                agents=tuple(model.agents) if model.agents is not None else None,
                max_cost=model.max_cost,
                max_tokens=model.max_tokens,
                perturb=model.perturb,
                paraphrases=tuple(model.paraphrases or ()),
                script=tuple(model.script) if model.script is not None else None,
                follow_ups=tuple(model.follow_ups or ()),
                mcp=tuple(model.mcp.items()) if model.mcp is not None else (),
            )
        )
    return cases


def _paraphrases(source: Source, model: schema.CaseModelBase, loc: list[str | int]) -> None:
    """Refuse ``paraphrases:`` that would perturb nothing: without a prompt, on a case
    that is never perturbed, the prompt itself or twice the same (docs/perturbation.md)."""
    if not model.paraphrases:
        return
    if model.prompt is None or not model.perturb:
        why = "no `prompt:`" if model.prompt is None else "`perturb: false`"
        raise source.error(
            [*loc, "paraphrases"], "value", f"a case with {why} has no paraphrases to run"
        )
    seen = {" ".join(model.prompt.split()): "the prompt"}
    for index, text in enumerate(model.paraphrases):
        words = " ".join(text.split())
        if not words or words in seen:
            said = f"is {seen[words]}" if words else "is blank"
            raise source.error(
                [*loc, "paraphrases", index], "value", f"paraphrase {index + 1} {said}"
            )
        seen[words] = f"the same as paraphrase {index + 1}"


def _scripted_agents(source: Source, model: schema.CaseModelBase, loc: list[str | int]) -> None:
    """Refuse a ``script:`` for an agent whose model the plugin cannot play."""
    others = [a for a in model.agents or () if a not in scripting.SCRIPTED_AGENTS]
    if model.script is not None and others:
        raise source.error(
            [*loc, "agents"],
            "value",
            f"`script:` plays the model of {', '.join(scripting.SCRIPTED_AGENTS)} only, and "
            f"agent {shown(others[0])} is not one of them",
        )


def _turns(
    source: Source,
    checks: Sequence[schema.CheckModel],
    follow_ups: int,
    loc: list[str | int],
    where: str = "checks",
) -> None:
    """Refuse a check's ``turn:`` past the case's last prompt, or on a case of one
    prompt (docs/conversations.md)."""
    for index, check in enumerate(checks):
        turn = getattr(check, "turn", None)
        if turn is None or (follow_ups and turn <= 1 + follow_ups):
            continue
        said = (
            f"the case has {1 + follow_ups} turns (`prompt` and {follow_ups} of `follow_ups`)"
            if follow_ups
            else "the case has one prompt: a turn needs `follow_ups:`"
            + (" (a case file's; a task directory has none)" if where != "checks" else "")
        )
        what = f"turn {turn} does not exist" if follow_ups else f"`turn: {turn}`"
        raise source.error([*loc, "checks", index, "turn"], "value", f"{what}: {said}")


def load_task_dir(checks_yaml: Path, registry: CheckRegistry) -> LoadedCase:
    """Load a task directory: ``checks.yaml`` plus an optional ``task.md`` prompt."""
    case_id = _task_id(checks_yaml)
    text = read_text(checks_yaml)
    data = parse(checks_yaml, text)
    source = Source(checks_yaml, text)
    bounded(source, data)
    if not isinstance(data, dict):
        raise CaseFileError(
            str(checks_yaml),
            f"expected a mapping with `task:` and `checks:`, got {kind_of(data)}",
            line=1,
        )
    raw_checks = data.get("checks")
    header = {k: v for k, v in data.items() if k != "checks"}
    try:
        model = schema.TaskFileBase.model_validate(header)
    except ValidationError as exc:
        raise source.validation_error(exc, [], header, task=True) from None
    if not isinstance(raw_checks, list) or not raw_checks:
        raise source.error(["checks"], "missing", "`checks:` must be a non-empty list of checks")
    if len(raw_checks) > limits.CHECKS:
        raise source.error(
            ["checks"],
            "value",
            f"too many items: {len(raw_checks):,}, at most {limits.CHECKS:,} "
            '(docs/case-format.md, "Limits")',
        )
    checks: list[schema.CheckModel] = []
    severities: list[Severity] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_checks):
        loc: list[str | int] = ["checks", index]
        if not isinstance(raw, dict):
            raise source.error(loc, "type", f"a check must be a mapping, got {kind_of(raw)}")
        try:
            extras = schema.TaskCheckExtras.model_validate(raw)
            check = registry.check_adapter.validate_python(
                {k: v for k, v in raw.items() if k != "severity"}
            )
        except ValidationError as exc:
            raise source.validation_error(exc, loc, raw) from None
        if extras.id in seen:
            raise source.error([*loc, "id"], "value", f"duplicate check id {extras.id!r}")
        seen.add(extras.id)
        checks.append(check)
        severities.append(TASK_SEVERITY[extras.severity])
    _turns(source, checks, 0, [], where="task")
    task_md = checks_yaml.parent / "task.md"
    # lexists: a task.md that is a dangling link or a FIFO is an error, not "no prompt".
    prompt = read_text(task_md) if os.path.lexists(task_md) else None
    if prompt is not None and len(prompt) > limits.TEXT_CHARS:
        raise CaseFileError(
            str(task_md),
            f"too long: {len(prompt):,} characters, at most {limits.TEXT_CHARS:,} for a "
            'prompt (docs/case-format.md, "Limits")',
            line=1,
        )
    severity = min(severities, key=SEVERITIES.index)
    return LoadedCase(
        id=case_id,
        file=checks_yaml,
        line=0,
        evals_root=checks_yaml.parent,
        defends=model.defends or "",
        severity=severity,
        checks=tuple(checks),
        description=model.description or model.task,
        prompt=prompt,
        timeout=model.timeout,
        tags=tuple(model.tags),
        kind="task",
        check_severities=tuple(severities),
    )


def _task_id(checks_yaml: Path) -> str:
    """The case id of a task directory, its name: kebab-case, like the ``id`` of a case
    file (docs/case-format.md, "Task-directory format")."""
    name = checks_yaml.parent.name
    if len(name) <= limits.ID_CHARS and re.fullmatch(fields.KEBAB_CASE, name):
        return name
    guess = fields.kebab_case(name)
    hint = f"; did you mean {guess!r}?" if guess is not None and guess != name else ""
    rule = (
        fields.KEBAB_RULE
        if len(name) <= limits.ID_CHARS
        else f"must be at most {limits.ID_CHARS} characters"
    )
    raise CaseFileError(
        str(checks_yaml),
        f"the directory name {shown(name)} is the case's id, which {rule}; rename the "
        f"directory{hint}",
    )


def _fixture(
    source: Source, evals_root: Path, cwd: str | None, loc: list[str | int]
) -> Path | None:
    """The fixture directory ``cwd`` names, which must be below the evals root also once
    symbolic links are followed: everything below it is copied into the workspace and
    compared by ``file_unchanged`` (the schema refused ``..`` and absolute paths)."""
    if cwd is None:
        return None
    fixture = Path(os.path.normpath(evals_root / cwd))
    if not os.path.isdir(fixture):
        raise source.error(
            loc, "value", f"fixture directory {shown(cwd)} not found (relative to {evals_root})"
        )
    real = os.path.realpath(fixture)
    root = os.path.realpath(evals_root)
    if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
        raise source.error(
            loc,
            "value",
            f"fixture directory {shown(cwd)} leads, through a symbolic link, to {real}, "
            f"outside the evals root ({evals_root}); nothing is copied from it",
        )
    return fixture
