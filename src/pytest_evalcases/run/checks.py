"""The built-in check evaluators, and the registry that holds them with the plugins' types.

An evaluator receives the validated check model and a :class:`CheckContext` and
returns an :class:`Outcome`. It raises :class:`~pytest_evalcases.errors.RunError`
when no verdict is possible (a path escaping through a symlink of the fixture, a tool
check without a transcript, a check out of time, a command with no workspace to run
in): that makes the run an ERROR, never a silent pass. A workspace file that cannot be
read, or a symlink out of the workspace (the agent's doing), fails the check that needs
it.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import TypeVar

from pytest_evalcases import defaults, process
from pytest_evalcases.cases import schema
from pytest_evalcases.cases.registry import CheckContext, CheckRegistry, Outcome
from pytest_evalcases.defaults import COMMAND_TIMEOUT
from pytest_evalcases.errors import PathEscapeError, RunError, UsageError
from pytest_evalcases.extensions import load_entry_point
from pytest_evalcases.redact import shorten
from pytest_evalcases.run import agentchecks, requestchecks
from pytest_evalcases.run.deadline import search, tick, within
from pytest_evalcases.run.files import (
    LinkOut,
    Unreadable,
    exists,
    glob_paths,
    inside,
    is_dir,
    is_file,
    link_out,
    read_text,
    same_bytes,
)
from pytest_evalcases.run.quoting import first_match, line_of, quote, regex, shown


def _need_output(ctx: CheckContext) -> str:
    if ctx.output is None:
        raise RunError(
            "no final answer to check: the agent gave none (a graded directory needs "
            ".evalcases/output.txt for output checks)",
            kind="no-output",
        )
    return ctx.output


def _output_matches(check: schema.OutputMatches, ctx: CheckContext) -> Outcome:
    text = _need_output(ctx)
    span = first_match(check.pattern, text, "the final answer")
    if span:
        found = text[span[0] : span[1]]
        return Outcome(True, f"pattern {shown(check.pattern)} found: {quote(found)}")
    return Outcome(
        False, f"pattern {shown(check.pattern)} not found in the final answer: {quote(text)}"
    )


def _output_not_matches(check: schema.OutputNotMatches, ctx: CheckContext) -> Outcome:
    text = _need_output(ctx)
    span = first_match(check.pattern, text, "the final answer")
    if span is None:
        return Outcome(True, f"pattern {shown(check.pattern)} absent from the final answer")
    line, quoted = line_of(text, span)
    return Outcome(
        False,
        f"pattern {shown(check.pattern)} matched the final answer at line {line}: {quote(quoted)}",
    )


def resolve(ctx: CheckContext, rel: str) -> Path:
    """``rel`` inside the workspace. A symlink on its way out of the workspace is never
    followed: one the agent made fails the check (:class:`LinkOut`), one the case's
    fixture holds is the author's error (docs/case-format.md, "Paths, globs and
    symlinks")."""
    try:
        return inside(ctx.workspace, rel, top=ctx.resolved_workspace)
    except PathEscapeError as exc:
        raise _blamed(ctx, rel, exc) from None


def _blamed(ctx: CheckContext, rel: str, exc: PathEscapeError) -> Exception:
    """What a path leaving the workspace makes of the check: the :class:`LinkOut` of
    the agent's link, else ``exc`` (the fixture's own link)."""
    link = link_out(ctx.workspace, rel)
    if link is None or _fixtures_own(ctx, link.link):
        return exc
    return link


def _fixtures_own(ctx: CheckContext, rel: str) -> bool:
    """Whether the workspace's symlink ``rel`` is as the fixture has it."""
    if ctx.fixture is None:
        return False
    try:
        return os.readlink(ctx.fixture / rel) == os.readlink(ctx.workspace / rel)
    except OSError:
        return False


def _glob(ctx: CheckContext, pattern: str) -> list[tuple[str, Path]]:
    """The workspace paths matching ``pattern``: as matched, and resolved (inside). A
    match that resolves outside is refused as :func:`resolve` refuses it, unless a
    wildcard matched a symlink to a directory: no check reads a directory, and a walk
    never enters one through a link."""
    try:
        found = glob_paths(ctx.workspace, pattern)
    except PathEscapeError as exc:
        raise _blamed(ctx, pattern, exc) from None
    hits = []
    for rel in found:
        try:
            hits.append((rel, resolve(ctx, rel)))
        except (PathEscapeError, LinkOut):
            if rel == pattern or not os.path.isdir(ctx.workspace / rel):
                raise
    return hits


def _files(ctx: CheckContext, pattern: str) -> list[tuple[str, Path]]:
    return [(rel, path) for rel, path in _glob(ctx, pattern) if is_file(path, rel)]


def _file_exists(check: schema.FileExists, ctx: CheckContext) -> Outcome:
    hits = _files(ctx, check.path)
    if hits:
        return Outcome(True, f"{check.path}: {len(hits)} file(s) found")
    return Outcome(False, f"{check.path}: no such file in the workspace")


def _file_absent(check: schema.FileAbsent, ctx: CheckContext) -> Outcome:
    hits = _files(ctx, check.path)
    if not hits:
        return Outcome(True, f"{check.path}: absent")
    shown = ", ".join(rel for rel, _ in hits[:5])
    return Outcome(False, f"{check.path}: present but must not be: {shown}")


def _directory_exists(check: schema.DirectoryExists, ctx: CheckContext) -> Outcome:
    if is_dir(resolve(ctx, check.path), check.path):
        return Outcome(True, f"{check.path}/: exists")
    return Outcome(False, f"{check.path}/: directory not found")


def _search_files(
    path_spec: str, pattern: str, ctx: CheckContext
) -> tuple[bool, tuple[str, str, tuple[int, int]] | None]:
    """Whether a file matches ``path_spec``, and the first match of ``pattern`` in one:
    its path relative to the workspace, its text and the match's span. Files are searched
    in batches of about :data:`BATCH` bytes (one child process each off the main thread,
    docs/case-format.md, "Time limits")."""
    files = _files(ctx, path_spec)
    rx = regex(pattern)
    batch: list[tuple[str, str]] = []
    for number, (rel, path) in enumerate(files, 1):
        batch.append((rel, read_text(path, rel)))
        if number < len(files) and sum(len(text) for _, text in batch) < BATCH:
            continue
        tick(f"searching {shown(pattern)} in {path_spec}")
        spans = search(rx, [text for _, text in batch], first=True)
        for (hit, text), span in zip(batch, spans, strict=False):
            if span:
                return True, (hit, text, span)
        batch = []
    return bool(files), None


#: Characters of file text searched at once.
BATCH = 16 * 1024 * 1024


def _file_pattern(path_spec: str, pattern: str, ctx: CheckContext, *, absent: bool) -> Outcome:
    """``pattern`` found in a file matching ``path_spec`` (``absent``: found in none)."""
    found, hit = _search_files(path_spec, pattern, ctx)
    shown_pattern = shown(pattern)
    if not found:
        must = " must be absent" if absent else ""
        return Outcome(False, f"{path_spec}: not found (pattern {shown_pattern}{must})")
    if hit is None:
        return Outcome(
            absent, f"{path_spec}: pattern {shown_pattern} {'absent' if absent else 'not found'}"
        )
    rel, text, span = hit
    if not absent:
        found_text = text[span[0] : span[1]]
        return Outcome(True, f"{rel}: pattern {shown_pattern} found: {quote(found_text)}")
    line, quoted = line_of(text, span)
    return Outcome(False, f"{rel}:{line}: pattern {shown_pattern} must not match: {quote(quoted)}")


def _file_matches(check: schema.FileMatches, ctx: CheckContext) -> Outcome:
    return _file_pattern(check.path, check.pattern, ctx, absent=False)


def _file_not_matches(check: schema.FileNotMatches, ctx: CheckContext) -> Outcome:
    return _file_pattern(check.path, check.pattern, ctx, absent=True)


def _file_contains(check: schema.FileContains, ctx: CheckContext) -> Outcome:
    return _file_pattern(check.target, check.pattern, ctx, absent=False)


def _file_not_contains(check: schema.FileNotContains, ctx: CheckContext) -> Outcome:
    return _file_pattern(check.target, check.pattern, ctx, absent=True)


def _file_unchanged(check: schema.FileUnchanged, ctx: CheckContext) -> Outcome:
    original = None
    if ctx.fixture is not None:
        original = inside(ctx.fixture, check.path, "the fixture's path")
    if original is None or not os.path.isfile(original):
        raise RunError(
            f"file_unchanged {check.path!r}: the case's fixture (`cwd`) has no such file "
            "to compare with",
            kind="case",
        )
    current = resolve(ctx, check.path)
    if not exists(current, check.path):
        return Outcome(False, f"{check.path}: deleted (the fixture has it)")
    if not is_file(current, check.path):
        return Outcome(False, f"{check.path}: no longer a regular file (the fixture's is)")
    if same_bytes(current, check.path, original, f"the fixture's {check.path}"):
        return Outcome(True, f"{check.path}: unchanged")
    return Outcome(
        False,
        f"{check.path}: changed from the fixture's copy{_diff(original, current, check.path)}",
    )


#: What a ``file_unchanged`` failure shows of the diff: its first lines, then a cut to
#: these characters (redacted first: a diff quotes the agent's lines).
DIFF_LINES = 40
DIFF_CHARS = 3000
#: Bytes of either file above which no diff is computed (difflib is quadratic at worst).
DIFF_READ_LIMIT = 1024 * 1024


def _diff(original: Path, current: Path, rel: str) -> str:
    """``:`` and a unified diff of the fixture's copy against the workspace's, indented
    under the check's line; a word instead where no text diff can be shown."""
    if max(os.path.getsize(original), os.path.getsize(current)) > DIFF_READ_LIMIT:
        return f" (over {DIFF_READ_LIMIT // 1024} KiB: no diff shown)"
    before = read_text(original, f"the fixture's {rel}")
    after = read_text(current, rel)
    if "\0" in before or "\0" in after:
        return " (binary: no diff shown)"
    tick(f"comparing {rel}")
    lines = list(
        difflib.unified_diff(
            before.splitlines(),
            after.splitlines(),
            f"fixture/{rel}",
            f"workspace/{rel}",
            lineterm="",
        )
    )
    if not lines:
        return " (only line endings or the final newline differ)"
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"… {len(lines) - DIFF_LINES} more diff lines"]
    return ":\n" + shorten("\n".join(f"    {line}" for line in lines), DIFF_CHARS)


def _run_command(
    check: schema.CommandSucceeds | schema.CommandFails, ctx: CheckContext
) -> process.ProcessResult:
    if not os.path.isdir(ctx.workspace):
        raise RunError(
            f"`{check.command}` has no workspace to run in: {ctx.workspace} no longer exists "
            "(the agent deleted it?), so no command check can reach a verdict",
            kind="workspace",
        )
    try:
        result = process.run(
            ctx.command(check.command),
            cwd=ctx.workspace,
            env=ctx.env,
            timeout=check.timeout or COMMAND_TIMEOUT,
            max_output=64 * 1024,
            sweep=True,
        )
    except OSError as exc:
        raise RunError(
            f"`{check.command}` could not start in the workspace {ctx.workspace}: "
            f"{exc.strerror or exc} (did the agent change its permissions?), so the command "
            "check reached no verdict",
            kind="workspace",
        ) from None
    if not result.timed_out and result.returncode in CANNOT_RUN:
        raise _cannot_run(check, result)
    return result


#: The shell's exit statuses for a program it cannot find, or cannot execute: what the
#: message calls them, and the remedy. A missing tool must not make ``command_fails``
#: pass (docs/case-format.md, `command_succeeds` / `command_fails`).
CANNOT_RUN = {
    127: ("not found", "install it where the checks run (their PATH, the sandbox)"),
    126: ("not executable", "make it executable"),
}
#: How shells, ``env`` and ``xargs`` end the line that names such a program.
_CANNOT_RUN_REASONS = (
    "command not found",
    "not found",
    "No such file or directory",
    "Permission denied",
    "Is a directory",
    "cannot execute binary file: Exec format error",
    "cannot execute binary file",
    "Exec format error",
)


def _unrunnable_program(stderr: str) -> tuple[str, str] | None:
    """The program a shell said it could not run, and its words, from its last such line
    (``/bin/sh: 1: PROG: not found``, ``bash: line 1: PROG: Permission denied``)."""
    for line in reversed(stderr.strip().splitlines()):
        line = line.strip()
        for reason in _CANNOT_RUN_REASONS:
            head = line.removesuffix(reason)
            if head != line and head.endswith(": "):
                program = head[:-2].rsplit(": ", 1)[-1].strip("'\"`\u2018\u2019")
                if program:
                    return program, line
    return None


def _cannot_run(
    check: schema.CommandSucceeds | schema.CommandFails, result: process.ProcessResult
) -> RunError:
    """The ``missing`` error of a command that exited 127 or 126: naming the program
    when the shell did, else saying that the command's own status reads the same."""
    status = process.exit_status(result.returncode)
    what, remedy = CANNOT_RUN[result.returncode or 0]
    found = _unrunnable_program(result.stderr)
    if found is not None:
        program, said = found
        return RunError(
            f"`{check.command}` could not run: program {program!r} {what} ({status}: "
            f"{quote(said)}), so the {check.type} check reached no verdict; {remedy}, "
            "or correct the command",
            kind="missing",
        )
    return RunError(
        f"`{check.command}` ended with {status}, the shell's status for a program "
        f"{what}, so the {check.type} check reached no verdict; a command that ends so on "
        "purpose must end with another status (`|| exit 1`, `exit 1`)",
        kind="missing",
    )


def _describe(result: process.ProcessResult) -> str:
    if result.timed_out:
        return "timed out"
    output = (result.stdout + result.stderr).strip()
    said = f"; output: {quote(output, 300, keep='tail')}" if output else ""
    return process.exit_status(result.returncode) + said


def _command_succeeds(check: schema.CommandSucceeds, ctx: CheckContext) -> Outcome:
    result = _run_command(check, ctx)
    passed = result.returncode == 0
    verb = "succeeded" if passed else "failed"
    return Outcome(passed, f"`{check.command}` {verb}: {_describe(result)}")


def _command_fails(check: schema.CommandFails, ctx: CheckContext) -> Outcome:
    result = _run_command(check, ctx)
    passed = result.returncode not in (0, None)
    verb = "failed, as required" if passed else "must fail but"
    outcome = "exited 0" if result.returncode == 0 else _describe(result)
    return Outcome(passed, f"`{check.command}` {verb}: {outcome}")


C = TypeVar("C", bound=schema.CheckModel)


def _bounded(
    evaluate: Callable[[C, CheckContext], Outcome],
) -> Callable[[C, CheckContext], Outcome]:
    """A built-in evaluator within the time limit of checks (docs/case-format.md, "Time
    limits"), failing where the workspace cannot be read and saying so."""

    def run(check: C, ctx: CheckContext) -> Outcome:
        what = f"the {check.type} check" + (f" {check.id!r}" if check.id else "")
        try:
            outcome = within(defaults.CHECK_TIMEOUT, what, lambda: evaluate(check, ctx))
        except LinkOut as exc:
            outcome = Outcome(False, str(exc))
        except Unreadable as exc:
            outcome = Outcome(False, f"{exc}; what a check cannot read fails it")
        if not outcome.passed and not os.path.isdir(ctx.workspace):
            gone = f" (the workspace {ctx.workspace} no longer exists)"
            outcome = Outcome(False, outcome.message + gone)
        return outcome

    return run


def _judge(check: schema.Judge, ctx: CheckContext) -> Outcome:
    if ctx.judge is None:
        raise RunError(
            "a judge check needs a run to judge: a graded directory has no judge (docs/judge.md)",
            kind="judge",
        )
    return ctx.judge(check, ctx)


def _builtin_registry() -> CheckRegistry:
    registry = CheckRegistry()
    registry.register(schema.OutputMatches, _bounded(_output_matches))
    registry.register(schema.OutputNotMatches, _bounded(_output_not_matches))
    registry.register(schema.FileExists, _bounded(_file_exists))
    registry.register(schema.FileAbsent, _bounded(_file_absent))
    registry.register(schema.DirectoryExists, _bounded(_directory_exists))
    registry.register(schema.FileMatches, _bounded(_file_matches))
    registry.register(schema.FileNotMatches, _bounded(_file_not_matches))
    registry.register(schema.FileContains, _bounded(_file_contains))
    registry.register(schema.FileNotContains, _bounded(_file_not_contains))
    registry.register(schema.FileUnchanged, _bounded(_file_unchanged))
    # A command check has a timeout of its own.
    registry.register(schema.CommandSucceeds, _command_succeeds)
    registry.register(schema.CommandFails, _command_fails)
    registry.register(schema.ToolCalled, _bounded(agentchecks.tool_called))
    registry.register(schema.ToolNotCalled, _bounded(agentchecks.tool_not_called))
    registry.register(schema.ToolBlocked, _bounded(agentchecks.tool_blocked))
    registry.register(schema.ToolNotBlocked, _bounded(agentchecks.tool_not_blocked))
    registry.register(schema.HookFired, _bounded(agentchecks.hook_fired))
    registry.register(schema.HookNotFired, _bounded(agentchecks.hook_not_fired))
    registry.register(schema.SkillUsed, _bounded(agentchecks.skill_used))
    registry.register(schema.SkillNotUsed, _bounded(agentchecks.skill_not_used))
    registry.register(schema.RequestMatches, _bounded(requestchecks.request_matches))
    registry.register(schema.RequestNotMatches, _bounded(requestchecks.request_not_matches))
    registry.register(schema.McpCalled, _bounded(agentchecks.mcp_called))
    registry.register(schema.McpNotCalled, _bounded(agentchecks.mcp_not_called))
    # The judge is an agent run with a timeout of its own.
    registry.register(schema.Judge, _judge)
    registry.builtin = frozenset(registry.names)
    return registry


def default_registry() -> CheckRegistry:
    """The built-in check types plus those of the ``pytest_evalcases.checks`` entry points.

    An entry point names a callable that receives the registry and registers its types.
    """
    registry = _builtin_registry()
    for ep in entry_points(group="pytest_evalcases.checks"):
        register = load_entry_point(ep)
        try:
            register(registry)
        except Exception as exc:  # a third party's registration function
            raise UsageError(
                f"entry point {ep.name} = {ep.value} (group {ep.group}) failed to register "
                f"its check types: {type(exc).__name__}: {exc}"
            ) from None
    return registry
