"""The built-in check evaluators, and the registry that holds them with the plugins' types.

An evaluator receives the validated check model and a :class:`CheckContext` and
returns an :class:`Outcome`. It raises :class:`~pytest_evalcases.errors.RunError`
when no verdict is possible (a path escaping through a symlink, a tool check without
a transcript): that makes the run an ERROR, never a silent pass.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

from pytest_evalcases import process
from pytest_evalcases.agents.base import ToolCall
from pytest_evalcases.cases import schema
from pytest_evalcases.cases.registry import CheckContext, CheckRegistry, Outcome
from pytest_evalcases.defaults import COMMAND_TIMEOUT
from pytest_evalcases.errors import PathEscapeError, RunError, UsageError
from pytest_evalcases.extensions import load_entry_point

QUOTE_LIMIT = 160


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` as a short repr, cut with an ellipsis."""
    text = text if len(text) <= limit else text[:limit] + "…"
    return repr(text)


def shown(pattern: str) -> str:
    """A regular expression as the user wrote it: quoted, backslashes not doubled."""
    return f"'{pattern}'"


def _line_of(text: str, match: re.Match[str]) -> tuple[int, str]:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text.count("\n", 0, match.start()) + 1, text[start : end if end != -1 else None]


def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


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
    m = _regex(check.pattern).search(text)
    if m:
        return Outcome(True, f"pattern {shown(check.pattern)} found: {quote(m.group(0))}")
    return Outcome(
        False, f"pattern {shown(check.pattern)} not found in the final answer: {quote(text)}"
    )


def _output_not_matches(check: schema.OutputNotMatches, ctx: CheckContext) -> Outcome:
    text = _need_output(ctx)
    m = _regex(check.pattern).search(text)
    if m is None:
        return Outcome(True, f"pattern {shown(check.pattern)} absent from the final answer")
    line, quoted = _line_of(text, m)
    return Outcome(
        False,
        f"pattern {shown(check.pattern)} matched the final answer at line {line}: {quote(quoted)}",
    )


def resolve(ctx: CheckContext, rel: str) -> Path:
    """``rel`` inside the workspace; a path that leaves it (a symlink) is an error."""
    root = ctx.workspace.resolve()
    target = (ctx.workspace / rel).resolve()
    if target != root and root not in target.parents:
        raise PathEscapeError(
            f"path {rel!r} resolves outside the workspace (to {target}); not read"
        )
    return target


def _glob(ctx: CheckContext, pattern: str) -> Iterator[Path]:
    if not glob.has_magic(pattern):
        target = resolve(ctx, pattern)
        if os.path.lexists(ctx.workspace / pattern):
            yield target
        return
    for hit in sorted(glob.glob(pattern, root_dir=ctx.workspace, recursive=True)):
        yield resolve(ctx, hit)


def _file_exists(check: schema.FileExists, ctx: CheckContext) -> Outcome:
    hits = [p for p in _glob(ctx, check.path) if p.is_file()]
    if hits:
        return Outcome(True, f"{check.path}: {len(hits)} file(s) found")
    return Outcome(False, f"{check.path}: no such file in the workspace")


def _file_absent(check: schema.FileAbsent, ctx: CheckContext) -> Outcome:
    hits = [p for p in _glob(ctx, check.path) if p.is_file()]
    if not hits:
        return Outcome(True, f"{check.path}: absent")
    shown = ", ".join(str(p.relative_to(ctx.workspace.resolve())) for p in hits[:5])
    return Outcome(False, f"{check.path}: present but must not be: {shown}")


def _directory_exists(check: schema.DirectoryExists, ctx: CheckContext) -> Outcome:
    if resolve(ctx, check.path).is_dir():
        return Outcome(True, f"{check.path}/: exists")
    return Outcome(False, f"{check.path}/: directory not found")


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def _search_files(
    path_spec: str, pattern: str, ctx: CheckContext
) -> tuple[bool, tuple[Path, str, re.Match[str]] | None]:
    """Whether a file matches ``path_spec``, and the first match of ``pattern`` in one:
    its path relative to the workspace, its text and the match."""
    files = [p for p in _glob(ctx, path_spec) if p.is_file()]
    rx = _regex(pattern)
    for f in files:
        text = _read(f)
        m = rx.search(text)
        if m:
            return True, (f.relative_to(ctx.workspace.resolve()), text, m)
    return bool(files), None


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
    rel, text, m = hit
    if not absent:
        return Outcome(True, f"{rel}: pattern {shown_pattern} found: {quote(m.group(0))}")
    line, quoted = _line_of(text, m)
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
    if ctx.fixture is None or not (ctx.fixture / check.path).is_file():
        raise RunError(
            f"file_unchanged {check.path!r}: the case's fixture (`cwd`) has no such file "
            "to compare with",
            kind="case",
        )
    current = resolve(ctx, check.path)
    if not current.is_file():
        return Outcome(False, f"{check.path}: deleted (the fixture has it)")
    if current.read_bytes() == (ctx.fixture / check.path).read_bytes():
        return Outcome(True, f"{check.path}: unchanged")
    return Outcome(False, f"{check.path}: changed from the fixture's copy")


def _run_command(
    check: schema.CommandSucceeds | schema.CommandFails, ctx: CheckContext
) -> process.ProcessResult:
    return process.run(
        ctx.command(check.command),
        cwd=ctx.workspace,
        env=ctx.env,
        timeout=check.timeout or COMMAND_TIMEOUT,
        max_output=64 * 1024,
        sweep=True,
    )


def _describe(result: process.ProcessResult) -> str:
    if result.timed_out:
        return "timed out"
    output = (result.stdout + result.stderr).strip()
    tail = output[-300:] if output else ""
    said = f"; output: {quote(tail, 300)}" if tail else ""
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


def _matching_calls(
    check: schema.ToolCalled | schema.ToolNotCalled, ctx: CheckContext
) -> list[ToolCall]:
    if ctx.tool_calls is None:
        raise RunError(
            f"{check.type} needs a transcript of tool calls, and the agent gave none "
            "(use an agent that reports tool calls, e.g. --eval-agent claude or codex)",
            kind="no-transcript",
        )
    if check.input is not None and not ctx.tool_inputs:
        raise RunError(
            f"{check.type} with `input:` needs tool inputs, and this agent reports only tool names",
            kind="no-transcript",
        )
    # Searched, as every pattern is (`Write` also finds `TodoWrite`; `^Write$` does not).
    tool = _regex(check.tool)
    inp = _regex(check.input) if check.input is not None else None
    return [
        call
        for call in ctx.tool_calls
        if (tool.search(call.name) or tool.search(call.kind))
        and (inp is None or inp.search(call.input))
    ]


def _describe_check(check: schema.ToolCalled | schema.ToolNotCalled) -> str:
    return f"tool {shown(check.tool)}" + (
        f" with input {shown(check.input)}" if check.input else ""
    )


def _tool_called(check: schema.ToolCalled, ctx: CheckContext) -> Outcome:
    calls = _matching_calls(check, ctx)
    if calls:
        return Outcome(True, f"{_describe_check(check)} called {len(calls)} time(s)")
    seen = ", ".join(sorted({c.name for c in ctx.tool_calls or ()})) or "none"
    return Outcome(False, f"no call of {_describe_check(check)} (tools called: {seen})")


def _tool_not_called(check: schema.ToolNotCalled, ctx: CheckContext) -> Outcome:
    calls = _matching_calls(check, ctx)
    if not calls:
        return Outcome(True, f"no call of {_describe_check(check)}")
    first = calls[0]
    return Outcome(
        False,
        f"{_describe_check(check)} must not be called; call {first.name}: {quote(first.input)}"
        + (f" (and {len(calls) - 1} more)" if len(calls) > 1 else ""),
    )


def _builtin_registry() -> CheckRegistry:
    registry = CheckRegistry()
    registry.register(schema.OutputMatches, _output_matches)
    registry.register(schema.OutputNotMatches, _output_not_matches)
    registry.register(schema.FileExists, _file_exists)
    registry.register(schema.FileAbsent, _file_absent)
    registry.register(schema.DirectoryExists, _directory_exists)
    registry.register(schema.FileMatches, _file_matches)
    registry.register(schema.FileNotMatches, _file_not_matches)
    registry.register(schema.FileContains, _file_contains)
    registry.register(schema.FileNotContains, _file_not_contains)
    registry.register(schema.FileUnchanged, _file_unchanged)
    registry.register(schema.CommandSucceeds, _command_succeeds)
    registry.register(schema.CommandFails, _command_fails)
    registry.register(schema.ToolCalled, _tool_called)
    registry.register(schema.ToolNotCalled, _tool_not_called)
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
