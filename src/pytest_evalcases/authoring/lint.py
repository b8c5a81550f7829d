"""``evalcases lint``: the known anti-patterns of eval cases, found without running them.

Plain Python (no pytest): the console command and the ``--eval-lint`` pytest option both
call :func:`lint_files`. Errors are cases that cannot be right (a file that does not load,
a pattern that matches any text, ``defends`` naming a missing file); warnings are cases
that are probably weak (a prompt that quotes the rule it tests, a prohibition tested only
with positive checks, ...).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from pytest_evalcases.agents import known_agents
from pytest_evalcases.authoring import ruletext
from pytest_evalcases.cases.diagnostics import Source, read_text
from pytest_evalcases.cases.discovery import (
    CASE_SUFFIXES,
    EVALS_DIR,
    EXCLUDED_DIRS,
    TASK_FILE,
    Discovery,
)
from pytest_evalcases.cases.limits import shown
from pytest_evalcases.cases.loading import LoadedCase, load_case_file, load_task_dir
from pytest_evalcases.cases.registry import CheckRegistry, check_id
from pytest_evalcases.cases.rootdir import defends_root, find_config
from pytest_evalcases.cases.schema import (
    CheckModel,
    HookFired,
    HookNotFired,
    ToolBlocked,
    ToolNotBlocked,
)
from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.results.calibration import CalibrationError, read_report, report_path
from pytest_evalcases.run.checks import default_registry
from pytest_evalcases.text import plural

ERROR = "error"
WARNING = "warning"
#: Said of a file that is not linted: data beside the cases, which pytest never collects.
NOTE = "note"

MIN_SUITE = 20
MAX_SUITE = 50

#: Check types that can catch a prohibited behaviour.
NEGATIVE_CHECKS = frozenset(
    {
        "output_not_matches",
        "file_not_matches",
        "file_not_contains",
        "file_absent",
        "tool_not_called",
        "command_fails",
        "file_unchanged",
        "skill_not_used",
        "request_not_matches",
        "hook_not_fired",
        "tool_not_blocked",
        "mcp_not_called",
    }
)

#: Check types that catch a prohibited behaviour: the negative ones, and ``tool_blocked``,
#: which proves the forbidden call was refused (and, unlike them, fails an agent that
#: did nothing).
PROHIBITION_CHECKS = NEGATIVE_CHECKS | {"tool_blocked"}
#: Check types whose ``pattern`` must hold (positive) or must not (negative) in a text.
_POSITIVE_PATTERN = ("output_matches", "file_matches", "file_contains")
_NEGATIVE_PATTERN = ("output_not_matches", "file_not_matches", "file_not_contains")
#: Texts that any pattern matching every text also matches (and ``^$`` does not).
_PROBES = ("", "x", "Zq9 -#!")
#: What a bare run does not discover (docs/agents.md, "bare"): directories of hooks and
#: skills, settings files and MCP servers. Paths relative to the defends root.
BARE_SKIPS_DIRS = ("hooks", ".claude/hooks", "skills", ".claude/skills", ".codex/skills")
BARE_SKIPS_FILES = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".gemini/settings.json",
    ".codex/config.toml",
    ".mcp.json",
)


#: Why a file below an evals directory is not linted (docs/case-format.md).
NOT_A_CASE = (
    "not a case file: its top level is not a mapping with checks, prompt, defends or "
    "cases, so pytest does not collect it (data beside the cases)"
)


@dataclass(frozen=True)
class Finding:
    """One problem: where it is, how bad, a stable code and the reason."""

    path: Path
    #: 1-based line, or ``None`` for a finding about a whole suite.
    line: int | None
    level: str
    code: str
    reason: str

    def format(self, base: Path | None = None) -> str:
        """``file:line: LEVEL code: reason`` with ``file`` relative to ``base`` if inside."""
        shown = _relative(self.path, base)
        where = f"{shown}:{self.line}" if self.line is not None else shown
        return f"{where}: {self.level.upper()} {self.code}: {self.reason}"


@dataclass(frozen=True)
class CaseFile:
    """A file to lint and the suite it belongs to."""

    path: Path
    evals_root: Path
    #: Which suite (directory argument) the file was found under, for the size check.
    suite: Path | None = None


def discover(paths: Sequence[Path]) -> list[CaseFile]:
    """Case files under ``paths`` as pytest would collect them: below an ``evals``
    directory (or a directory argument with none below it), plus ``checks.yaml``."""
    found: list[CaseFile] = []
    seen: set[Path] = set()
    for arg in paths:
        arg = arg.resolve()
        if arg.is_file():
            if arg not in seen:
                seen.add(arg)
                found.append(CaseFile(arg, _evals_root(arg) or arg.parent))
            continue
        files, evals_dirs = _walk(arg)
        has_evals = arg.name == EVALS_DIR or evals_dirs
        for file in files:
            if file in seen or not _candidate(file, arg):
                continue
            root = _evals_root(file, stop=arg.parent)
            if root is None and file.name != TASK_FILE:
                if has_evals:
                    continue
                root = arg
            seen.add(file)
            found.append(CaseFile(file, root or file.parent, suite=arg))
    return found


def _walk(top: Path) -> tuple[list[Path], bool]:
    """Every entry below ``top`` that is not a directory (a FIFO or a dangling link
    among them: each is then one load error), sorted, and whether an ``evals``
    directory is among the directories. Symbolic links to directories are not
    followed, and a directory that vanishes or cannot be listed is passed over."""
    files: list[Path] = []
    evals_dirs = False
    for dirpath, dirnames, filenames in os.walk(top):
        evals_dirs = evals_dirs or EVALS_DIR in dirnames
        files.extend(Path(dirpath, name) for name in filenames)
    return sorted(files), evals_dirs


def _candidate(file: Path, arg: Path) -> bool:
    rel = file.relative_to(arg).parts
    if any(part in EXCLUDED_DIRS or part.startswith(".") for part in rel[:-1]):
        return False
    if file.name == TASK_FILE:
        return True
    return file.name.endswith(CASE_SUFFIXES) and not file.name.startswith(("_", "."))


def _evals_root(file: Path, stop: Path | None = None) -> Path | None:
    return Discovery(stop or Path(file.anchor)).evals_root(file)


def lint_files(
    files: Sequence[CaseFile],
    root: Path | None,
    registry: CheckRegistry | None = None,
    *,
    suite_size: bool = True,
) -> list[Finding]:
    """Every finding for ``files``; ``root`` is where ``defends`` paths start, or
    ``None`` for each file's own (its project's rootdir or ``eval_config_root``, as
    pytest run there would have it)."""
    registry = registry or default_registry()
    roots: dict[Path, Path] = {}

    def root_of(path: Path) -> Path:
        if root is not None:
            return root
        found = roots.get(path.parent)
        if found is None:
            found = roots[path.parent] = defends_root(path.parent)
        return found

    findings: list[Finding] = []
    prompts: dict[str, tuple[str, Path, int]] = {}
    suites: dict[Path, int] = {}
    # The projects (rootdirs) whose case files each suite argument holds.
    projects: dict[Path, set[Path]] = {}
    for file in files:
        try:
            if file.path.name == "checks.yaml":
                cases = [load_task_dir(file.path, registry)]
                multi = False
            else:
                cases = load_case_file(file.path, file.evals_root, registry)
                multi = _is_multi(file.path)
                if not cases:
                    findings.append(Finding(file.path, None, NOTE, "not-a-case-file", NOT_A_CASE))
                    continue
        except CaseFileError as exc:
            where = f"{exc.field}: " if exc.field else ""
            findings.append(
                Finding(file.path, exc.line or 1, ERROR, "load-error", where + exc.reason)
            )
            continue
        try:
            source = Source(file.path, read_text(file.path))
        except CaseFileError as exc:  # changed since it loaded
            findings.append(Finding(file.path, 1, ERROR, "load-error", exc.reason))
            continue
        for index, case in enumerate(cases):
            prefix: list[str | int] = ["cases", index] if multi else []
            findings.extend(_lint_case(case, source, prefix, root_of(file.path), multi))
            # A scripted case's run is its script, whatever the prompt says: cases that
            # share a prompt and play different turns test different things.
            if case.prompt and case.prompt.strip() and case.script is None:
                key = " ".join(case.prompt.lower().split())
                line = source.line_of([*prefix, "prompt"])
                first = prompts.get(key)
                if first is None:
                    prompts[key] = (case.id, file.path, line)
                else:
                    findings.append(
                        Finding(
                            file.path,
                            line,
                            WARNING,
                            "duplicate-prompt",
                            f"case {case.id!r} has the same prompt as {first[0]!r} "
                            f"({_relative(first[1], root_of(file.path))}:{first[2]}); "
                            "one of them tests nothing new",
                        )
                    )
        if file.suite is not None:
            suites[file.suite] = suites.get(file.suite, 0) + len(cases)
            projects.setdefault(file.suite, set()).add(root_of(file.path))
    if suite_size:
        for suite, count in suites.items():
            if len(projects[suite]) > 1:
                # A directory of several projects (example_cases/) is no one suite: each
                # project's is judged when it is linted on its own.
                continue
            finding = suite_size_finding(suite, count)
            if finding is not None:
                findings.append(finding)
    return findings


def suite_size_finding(suite: Path, count: int) -> Finding | None:
    """A warning when a suite is too small to be informative or too large to maintain."""
    if count < MIN_SUITE:
        reason = (
            f"the suite has {plural(count, 'case')}; fewer than {MIN_SUITE} "
            "cases cover too few rules to gate a configuration change"
        )
    elif count > MAX_SUITE:
        reason = (
            f"the suite has {count} cases; more than {MAX_SUITE} is slow and costly to run "
            "on every change: split it by tag or severity"
        )
    else:
        return None
    return Finding(suite, None, WARNING, "suite-size", reason)


def _is_multi(path: Path) -> bool:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "cases" in data


def _lint_case(
    case: LoadedCase, source: Source, prefix: list[str | int], root: Path, multi: bool
) -> Iterable[Finding]:
    path = case.file

    def line(*loc: str | int) -> int:
        return source.line_of([*prefix, *loc], key=loc == ("checks",))

    if case.prompt is None or not case.prompt.strip():
        where = "no task.md beside checks.yaml" if case.kind == "task" else "no `prompt:`"
        if case.prompt is not None:
            where = "an empty task.md" if case.kind == "task" else "an empty `prompt:`"
        yield Finding(
            path,
            line("prompt") if case.prompt is not None else line(),
            WARNING,
            "missing-prompt",
            f"case {case.id!r} has {where}: an agent cannot run it, and only "
            "--eval-workspace can grade it",
        )
    for index, check in enumerate(case.checks):
        pattern = getattr(check, "pattern", None)
        patterned = check.type in (*_POSITIVE_PATTERN, *_NEGATIVE_PATTERN)
        if patterned and isinstance(pattern, str) and _vacuous(pattern):
            effect = (
                "the check always passes"
                if check.type in _POSITIVE_PATTERN
                else "the check can never pass"
            )
            yield Finding(
                path,
                line("checks", index, "pattern"),
                ERROR,
                "vacuous-pattern",
                f"checks[{index}].pattern {pattern!r} matches any text, even an empty "
                f"one: {effect} ({check.type})",
            )
    if case.quarantine and case.severity == "critical":
        yield Finding(
            path,
            line("quarantine"),
            WARNING,
            "quarantined-critical",
            f"critical case {case.id!r} is quarantined ({case.quarantine}): the gate does "
            "not check what it defends until the quarantine ends",
        )
    # What `evalcases import` leaves for the author (docs/writing-cases.md, "From an
    # incident"): reported once, as what it is, rather than as a missing file.
    todo_checks = [i for i, c in enumerate(case.checks) if _todo(getattr(c, "description", None))]
    if _todo(case.defends):
        yield Finding(path, line("defends"), WARNING, "todo", "TODO left for the author: defends")
    for index in todo_checks:
        said = f"TODO left for the author: checks[{index}]"
        yield Finding(path, line("checks", index), WARNING, "todo", said)
    defended, outside = (
        ruletext.defended(root, case.defends)
        if case.defends and not _todo(case.defends)
        else (None, None)
    )
    if outside is not None:
        yield Finding(
            path,
            line("defends"),
            ERROR,
            "defends-outside",
            f"defends {shown(case.defends)}, which resolves to {outside}, outside the "
            f"project ({root}); the lint reads nothing there",
        )
    elif case.defends and defended is None and not _todo(case.defends):
        yield Finding(
            path,
            line("defends"),
            WARNING,
            "missing-defends",
            f"defends {case.defends!r}, which does not exist (relative to {root})",
        )
    if case.bare and case.defends and _bare_skips(case.defends):
        yield Finding(
            path,
            line("defends"),
            WARNING,
            "bare-defends-discovery",
            f"defends {case.defends!r}, which a bare run (`bare: true`, the default) does not "
            "load: no hooks, skills or settings are discovered; write `bare: false`",
        )
    hooked = [i for i, c in enumerate(case.checks) if _about_hooks(c)]
    if case.bare and hooked and (case.agents is None or "claude" in case.agents):
        index = hooked[0]
        yield Finding(
            path,
            line("checks", index),
            WARNING,
            "bare-hook-check",
            f"checks[{index}] ({case.checks[index].type}) asks about hooks, but Claude Code "
            "runs none in a bare run (`bare: true`, the default): on claude the check "
            "grades a run without them; write `bare: false`",
        )
    rule_text = ruletext.rule_text(defended, root) if defended is not None else ""
    # A paraphrase is a prompt too (docs/perturbation.md): one that quotes the rule
    # tests the paraphrase.
    wordings: list[tuple[str, tuple[str | int, ...], str]] = (
        [("the prompt", ("prompt",), case.prompt)] if case.prompt else []
    )
    wordings += [
        (f"paraphrase {i + 1}", ("paraphrases", i), text) for i, text in enumerate(case.paraphrases)
    ]
    for name, place, text in wordings if rule_text else []:
        quoted = ruletext.quoted_run(text, rule_text)
        if quoted:
            yield Finding(
                path,
                line(*place),
                WARNING,
                "prompt-quotes-rule",
                f"{name} quotes {case.defends}: {' '.join(quoted)!r}; it tests the "
                "prompt, not the configuration",
            )
    # A scripted case cannot catch the model breaking a prohibition: its turns are
    # written, not chosen (docs/config-contract.md, "The limit").
    prohibitions = case.script is None and not any(
        c.type in PROHIBITION_CHECKS for c in case.checks
    )
    if rule_text and prohibitions:
        found = ruletext.prohibition_about(rule_text, ruletext.case_words(case))
        if found is not None:
            word, topic, passage = found
            yield Finding(
                path,
                line("checks"),
                WARNING,
                "no-negative-check",
                f"{case.defends} says {word!r} where it speaks of what the case tests "
                f"({topic!r}: {shown(passage)}) but the case has only positive checks; add "
                "one that fails when the forbidden thing happens "
                f"({', '.join(sorted(PROHIBITION_CHECKS))})",
            )
    # A skill's should-not-fire case (skill_not_used) passes an idle agent by design:
    # the skill's false triggers are what it counts (docs/skills.md).
    trigger_negative = any(c.type == "skill_not_used" for c in case.checks)
    written = [c for i, c in enumerate(case.checks) if i not in todo_checks]
    if written and all(c.type in NEGATIVE_CHECKS for c in written) and not trigger_negative:
        yield Finding(
            path,
            line("checks"),
            WARNING,
            "only-negative-checks",
            "every check is negative: an agent that does nothing (says nothing, changes "
            "no file) passes them all; add a check that the task was done",
        )
    unknown = [a for a in case.agents or () if a not in known_agents()]
    if unknown:
        yield Finding(
            path,
            line("agents"),
            WARNING,
            "unknown-agent",
            f"agents: {', '.join(map(repr, unknown))} is no agent this project knows "
            f"({', '.join(known_agents())}); the case is skipped on every other agent's "
            "variant, so a misspelt name skips it everywhere",
        )
    yield from _judge_findings(case, line)
    if case.kind == "case" and not multi and case.id != path.stem:
        yield Finding(
            path,
            line("id"),
            WARNING,
            "id-not-stem",
            f"id {case.id!r} differs from the file name {path.name!r}; name the file "
            f"{case.id}{path.suffix} so a failure leads to it",
        )


def _todo(value: object) -> bool:
    """Whether ``value`` is a placeholder the author must still write (``TODO...``)."""
    return isinstance(value, str) and value.startswith("TODO")


def _judge_findings(case: LoadedCase, line: Callable[..., int]) -> Iterable[Finding]:
    """A case whose only checks are judge checks; a judge check of a critical case
    without a calibration that lets it block (docs/judge.md)."""
    judges = [(i, c) for i, c in enumerate(case.checks) if c.type == "judge"]
    if judges and len(judges) == len(case.checks):
        yield Finding(
            case.file,
            line("checks"),
            WARNING,
            "no-deterministic-check",
            "no deterministic check: every check is a judge check, which never blocks until "
            "calibrated; add a check a rule can decide (a file, a pattern, a command)",
        )
    if case.severity != "critical":
        return
    calibrated = _calibrated(case.file.parent)
    for index, check in judges:
        ident = check_id(check, index)
        if ident not in calibrated:
            yield Finding(
                case.file,
                line("checks", index),
                WARNING,
                "uncalibrated-judge",
                f"judge check {ident!r} of a critical case has no calibration "
                "(eval_judge_calibration, evalcases calibrate): its failures are reported "
                "and never block",
            )


def _calibrated(directory: Path) -> frozenset[str]:
    """The calibrated judge check ids of the project ``directory`` is in."""
    found = find_config(directory)
    labels = found[1].get("eval_judge_calibration") if found is not None else None
    if found is None or not labels:
        return frozenset()
    try:
        report = read_report(report_path(found[0] / str(labels).strip()))
    except CalibrationError:
        return frozenset()
    return frozenset(check for check, one in report.items() if one.calibrated)


def _about_hooks(check: CheckModel) -> bool:
    """Whether ``check`` asks about a hook: which ran, or which refused a call."""
    if isinstance(check, HookFired | HookNotFired):
        return True
    return isinstance(check, ToolBlocked | ToolNotBlocked) and check.by == "hook"


def _bare_skips(defends: str) -> bool:
    """Whether ``defends`` is a hook, a skill or a settings file, which bare runs skip."""
    rel = defends.strip().removeprefix("./").rstrip("/")
    return rel in BARE_SKIPS_FILES or any(
        rel == d or rel.startswith(d + "/") for d in BARE_SKIPS_DIRS
    )


def _vacuous(pattern: str) -> bool:
    """Whether ``pattern`` matches every text: it matches the empty string and the probes."""
    try:
        regex = re.compile(pattern, re.MULTILINE)
    except re.error:
        return False
    return all(regex.search(probe) is not None for probe in _PROBES)


def _relative(path: Path, base: Path | None) -> str:
    if base is not None:
        # The file's own name kept: a case file may be a link (to nowhere, even).
        here = Path(os.path.realpath(path.parent), path.name)
        try:
            return here.relative_to(base.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def tally(files: Sequence[CaseFile], findings: Sequence[Finding]) -> str:
    """``3 case files checked: 1 error, 2 warnings``: the last line of a lint."""
    errors = sum(1 for f in findings if f.level == ERROR)
    warnings = sum(1 for f in findings if f.level == WARNING)
    data = sum(1 for f in findings if f.level == NOTE)
    other = f"; {plural(data, 'file')} not a case file" if data else ""
    return (
        f"{plural(len(files) - data, 'case file')} checked: {plural(errors, 'error')}, "
        f"{plural(warnings, 'warning')}{other}"
    )
