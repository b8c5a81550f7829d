"""Check evaluators, called directly on real workspaces."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases import defaults
from pytest_evalcases.agents.base import ToolCall
from pytest_evalcases.cases.registry import CheckContext
from pytest_evalcases.errors import PathEscapeError, RunError
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run import checks
from pytest_evalcases.run.checks import default_registry

REGISTRY = default_registry()


def evaluate(
    check: dict[str, Any],
    workspace: Path,
    *,
    output: str | None = "",
    tools: tuple[ToolCall, ...] | None = None,
    fixture: Path | None = None,
    tool_inputs: bool = True,
) -> CheckRecord:
    model = REGISTRY.check_adapter.validate_python(check)
    ctx = CheckContext(
        workspace=workspace,
        fixture=fixture,
        output=output,
        tool_calls=tools,
        env=dict(os.environ),
        tool_inputs=tool_inputs,
    )
    return REGISTRY.evaluate(0, model, ctx)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src/pkg").mkdir(parents=True)
    (root / "src/pkg/service.py").write_text("import os\n\nclass Service:\n    pass\n")
    (root / "src/pkg/util.py").write_text("def helper():\n    return 1\n")
    (root / "README.md").write_text("# Project\n")
    return root


def test_output_patterns_are_multiline_and_accept_inline_flags(ws: Path) -> None:
    answer = "Committed.\nfix(auth): token expiry\nCo-Authored-By: Claude"
    assert evaluate(
        {"type": "output_matches", "pattern": "^fix\\(auth\\)"}, ws, output=answer
    ).passed
    result = evaluate(
        {"type": "output_not_matches", "pattern": "(?i)co-authored-by:\\s*claude"},
        ws,
        output=answer,
    )
    assert not result.passed
    assert result.id == "output_not_matches-0"
    assert "matched the final answer at line 3: 'Co-Authored-By: Claude'" in result.message


def test_output_check_without_output_is_an_error(ws: Path) -> None:
    with pytest.raises(RunError, match="no final answer"):
        evaluate({"type": "output_not_matches", "pattern": "x"}, ws, output=None)


def test_file_exists_and_absent_with_globs(ws: Path) -> None:
    assert evaluate({"type": "file_exists", "path": "src/**/*.py"}, ws).passed
    assert not evaluate({"type": "file_exists", "path": "tests/*.py"}, ws).passed
    absent = evaluate({"type": "file_absent", "path": "src/pkg/*.py"}, ws)
    assert not absent.passed
    assert "src/pkg/service.py" in absent.message
    assert evaluate({"type": "file_absent", "path": ".claude/**"}, ws).passed
    assert not evaluate({"type": "file_exists", "path": "src"}, ws).passed  # a directory
    assert evaluate({"type": "directory_exists", "path": "src/pkg"}, ws).passed
    assert not evaluate({"type": "directory_exists", "path": "README.md"}, ws).passed


def test_file_matches_and_aliases(ws: Path) -> None:
    assert evaluate(
        {"type": "file_matches", "path": "src/pkg/service.py", "pattern": "^class "}, ws
    ).passed
    assert evaluate(
        {"type": "file_contains", "file": "src/pkg/service.py", "pattern": "^class "}, ws
    ).passed
    assert evaluate(
        {"type": "file_contains", "path": "src/pkg/service.py", "pattern": "^class "}, ws
    ).passed
    miss = evaluate({"type": "file_matches", "path": "src/pkg/util.py", "pattern": "^class "}, ws)
    assert not miss.passed
    assert miss.message == "src/pkg/util.py: pattern '^class ' not found"
    bad = evaluate(
        {"type": "file_not_contains", "file": "src/pkg/service.py", "pattern": "import os"}, ws
    )
    assert not bad.passed
    assert bad.message == "src/pkg/service.py:1: pattern 'import os' must not match: 'import os'"


@pytest.mark.parametrize("type_", ["file_matches", "file_not_matches"])
def test_missing_file_fails_with_not_found(ws: Path, type_: str) -> None:
    result = evaluate({"type": type_, "path": "nope.py", "pattern": "x"}, ws)
    assert not result.passed
    assert "not found" in result.message


def test_a_symlink_the_agent_made_out_of_the_workspace_fails_the_check_unread(
    ws: Path, tmp_path: Path
) -> None:
    # A FIFO: a check that opened it would block.
    secret = tmp_path / "secret.txt"
    os.mkfifo(secret)
    (ws / "link.txt").symlink_to(secret)
    (ws / "up").symlink_to(tmp_path)
    # In the fixture, link.txt is a file: the agent replaced it with the link.
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    (fixture / "link.txt").write_text("notes\n")
    said = f"link.txt is a symlink leaving the workspace (to {secret}): not read"
    for check in (
        {"type": "file_matches", "path": "link.txt", "pattern": "password"},
        {"type": "file_exists", "path": "*.txt"},
        {"type": "file_absent", "path": "**/*.txt"},
        {"type": "file_unchanged", "path": "link.txt"},
    ):
        result = evaluate(check, ws, fixture=fixture)
        assert (result.passed, result.message) == (False, said), check
    # The link on the way is the one named.
    assert evaluate({"type": "file_exists", "path": "up/ws/README.md"}, ws).passed
    deep = evaluate({"type": "file_exists", "path": "up/fixture/link.txt"}, ws)
    assert deep.message == f"up is a symlink leaving the workspace (to {tmp_path}): not read"


def test_a_symlink_of_the_fixture_out_of_the_workspace_is_an_error_not_read(
    ws: Path, tmp_path: Path
) -> None:
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    (fixture / "link.txt").symlink_to(secret)
    (ws / "link.txt").symlink_to(secret)
    with pytest.raises(PathEscapeError, match="resolves outside the workspace"):
        evaluate(
            {"type": "file_matches", "path": "link.txt", "pattern": "password"},
            ws,
            fixture=fixture,
        )
    with pytest.raises(PathEscapeError):
        evaluate({"type": "file_exists", "path": "*.txt"}, ws, fixture=fixture)


def test_file_unchanged_compares_with_the_fixture(ws: Path, tmp_path: Path) -> None:
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    (fixture / "README.md").write_text("# Project\n")
    (fixture / "gone.md").write_text("x")
    check = {"type": "file_unchanged", "path": "README.md"}
    assert evaluate(check, ws, fixture=fixture).passed
    (ws / "README.md").write_text("# Project, edited\n")
    changed = evaluate(check, ws, fixture=fixture)
    assert not changed.passed
    assert "changed from the fixture" in changed.message
    deleted = evaluate({"type": "file_unchanged", "path": "gone.md"}, ws, fixture=fixture)
    assert "deleted" in deleted.message
    with pytest.raises(RunError, match="has no such file"):
        evaluate({"type": "file_unchanged", "path": "src/pkg/util.py"}, ws, fixture=fixture)


def test_file_unchanged_shows_a_diff_cut_and_redacted(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-9f8e7d6c5b4a")
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    original = "".join(f"line {n}\n" for n in range(1, 101))
    (fixture / "README.md").write_text(original)
    check = {"type": "file_unchanged", "path": "README.md"}

    (ws / "README.md").write_text(original.replace("line 3\n", "line 3 tok-9f8e7d6c5b4a\n"))
    one = evaluate(check, ws, fixture=fixture).message
    (ws / "README.md").write_text("".join(f"new {n}\n" for n in range(1, 101)))
    every = evaluate(check, ws, fixture=fixture).message

    assert one.splitlines() == [
        "README.md: changed from the fixture's copy:",
        "    --- fixture/README.md",
        "    +++ workspace/README.md",
        "    @@ -1,6 +1,6 @@",
        "     line 1",
        "     line 2",
        "    -line 3",
        "    +line 3 [REDACTED]",
        "     line 4",
        "     line 5",
        "     line 6",
    ]
    lines = every.splitlines()
    assert len(lines) == 1 + checks.DIFF_LINES + 1
    assert lines[-1] == f"    … {3 + 200 - checks.DIFF_LINES} more diff lines"


def test_file_unchanged_says_why_it_shows_no_diff(ws: Path, tmp_path: Path) -> None:
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    (fixture / "crlf.txt").write_bytes(b"a\nb\n")
    (ws / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    (fixture / "logo.png").write_bytes(b"\x89PNG\0\1")
    (ws / "logo.png").write_bytes(b"\x89PNG\0\2")
    big = b"x" * (checks.DIFF_READ_LIMIT + 1)
    (fixture / "big.log").write_bytes(big)
    (ws / "big.log").write_bytes(big[:-1] + b"y")

    (fixture / "wide.txt").write_text("a" * 10_000 + "\n")
    (ws / "wide.txt").write_text("b" * 10_000 + "\n")

    def message(path: str) -> str:
        return evaluate({"type": "file_unchanged", "path": path}, ws, fixture=fixture).message

    assert message("crlf.txt") == (
        "crlf.txt: changed from the fixture's copy (only line endings or the final newline differ)"
    )
    assert (
        message("logo.png") == "logo.png: changed from the fixture's copy (binary: no diff shown)"
    )
    wide = message("wide.txt")
    assert wide.startswith("wide.txt: changed from the fixture's copy:\n    --- fixture/wide.txt")
    assert len(wide) == len("wide.txt: changed from the fixture's copy:\n") + checks.DIFF_CHARS + 1
    assert wide.endswith("aaa…")
    assert message("big.log") == (
        "big.log: changed from the fixture's copy (over 1024 KiB: no diff shown)"
    )


def test_commands_run_in_the_workspace(ws: Path) -> None:
    assert evaluate({"type": "command_succeeds", "command": "test -f README.md"}, ws).passed
    failed = evaluate({"type": "command_succeeds", "command": "echo boom >&2; exit 4"}, ws)
    assert not failed.passed
    assert "exit status 4" in failed.message
    assert "boom" in failed.message
    assert evaluate({"type": "command_fails", "command": "grep -rq TODO src"}, ws).passed
    assert not evaluate({"type": "command_fails", "command": "true"}, ws).passed
    slow = evaluate({"type": "command_succeeds", "command": "sleep 5", "timeout": 0.3}, ws)
    assert not slow.passed
    assert "timed out" in slow.message


@pytest.mark.parametrize("type_", ["command_succeeds", "command_fails"])
@pytest.mark.parametrize(
    ("command", "program", "reason"),
    [
        ("nonexistent-binary-x7 --flag", "nonexistent-binary-x7", "not found"),
        ("true && ./missing.sh", "./missing.sh", "not found"),
        ("chmod -x run.sh; ./run.sh", "./run.sh", "not executable"),
        ("./src", "./src", "not executable"),
    ],
)
def test_a_command_that_cannot_run_is_an_error_not_a_verdict(
    ws: Path, type_: str, command: str, program: str, reason: str
) -> None:
    """Exit status 127 / 126 is the shell's "not found" / "not executable": a negative
    check passed on a missing tool (docs/case-format.md, `command_succeeds`)."""
    (ws / "run.sh").write_text("#!/bin/sh\necho ran\n")

    with pytest.raises(RunError) as info:
        evaluate({"type": type_, "command": command}, ws)

    assert info.value.kind == "missing"
    message = str(info.value)
    assert f"program {program!r} {reason}" in message
    assert f"`{command}`" in message
    assert "reached no verdict" in message


def test_the_rule_on_127_and_126_holds_for_a_script_that_ends_with_them(ws: Path) -> None:
    """Indistinguishable from the shell's own: an error too, which says so."""
    with pytest.raises(RunError, match=r"exit status 127.*`exit 1`") as info:
        evaluate({"type": "command_fails", "command": "exit 127"}, ws)
    assert info.value.kind == "missing"
    assert evaluate({"type": "command_fails", "command": "exit 125"}, ws).passed


CALLS = (
    ToolCall(name="Bash", kind="shell", input="grep -rn TODO src/"),
    ToolCall(name="Read", kind="read", input='{"file_path": "src/app.py"}'),
)


def test_tool_checks_match_names_kinds_and_inputs(ws: Path) -> None:
    assert evaluate({"type": "tool_called", "tool": "Read"}, ws, tools=CALLS).passed
    assert evaluate(
        {"type": "tool_called", "tool": "shell", "input": "^grep"}, ws, tools=CALLS
    ).passed
    # `tool` is searched like every pattern (docs/case-format.md, `tool_called`); anchors
    # make it exact.
    assert evaluate({"type": "tool_called", "tool": "Bas"}, ws, tools=CALLS).passed
    assert not evaluate({"type": "tool_called", "tool": "^Bas$"}, ws, tools=CALLS).passed
    assert not evaluate({"type": "tool_called", "tool": "(?i)^write"}, ws, tools=CALLS).passed
    result = evaluate(
        {"type": "tool_not_called", "tool": "shell", "input": "grep -r"}, ws, tools=CALLS
    )
    assert not result.passed
    assert result.message.endswith("call Bash: 'grep -rn TODO src/'")
    assert evaluate({"type": "tool_not_called", "tool": "web"}, ws, tools=CALLS).passed


def test_tool_checks_without_transcript_are_errors(ws: Path) -> None:
    with pytest.raises(RunError, match="needs a transcript"):
        evaluate({"type": "tool_not_called", "tool": "shell"}, ws, tools=None)
    with pytest.raises(RunError, match="needs tool inputs"):
        evaluate(
            {"type": "tool_called", "tool": "shell", "input": "rg"},
            ws,
            tools=CALLS,
            tool_inputs=False,
        )


# Hostile workspaces and runaway checks (issue 10, items 3, 6 and 7;
# docs/case-format.md, "Time limits" and "Paths, globs and symlinks").

#: A pattern that backtracks 2**32 times on BACKTRACKS before it fails: minutes of work.
CATASTROPHIC = "(a+)+$"
BACKTRACKS = "a" * 32 + "!"


@pytest.fixture
def short_deadline(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(defaults, "CHECK_TIMEOUT", 1.0)
    return 1.0


@pytest.mark.parametrize(
    ("check", "where"),
    [
        ({"type": "output_matches", "pattern": CATASTROPHIC}, "the final answer"),
        ({"type": "file_not_matches", "path": "*.txt", "pattern": CATASTROPHIC}, "*.txt"),
        ({"type": "tool_not_called", "tool": "shell", "input": CATASTROPHIC}, "the tool inputs"),
    ],
    ids=["output", "file", "tool-input"],
)
def test_a_backtracking_pattern_ends_as_a_check_timeout_error(
    ws: Path, short_deadline: float, check: dict[str, Any], where: str
) -> None:
    (ws / "answer.txt").write_text(BACKTRACKS)
    calls = (ToolCall(name="Bash", kind="shell", input=BACKTRACKS),)
    with pytest.raises(RunError) as raised:
        evaluate(check, ws, output=BACKTRACKS, tools=calls)
    assert raised.value.kind == "check-timeout"
    message = str(raised.value)
    assert f"the {check['type']} check did not finish within 1 s" in message
    assert f"while searching '{CATASTROPHIC}' in {where}" in message


def test_a_backtracking_pattern_also_ends_off_the_main_thread(
    ws: Path, short_deadline: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No signal reaches a search off the main thread, and a search holds the GIL: the
    # search runs in a child process there.
    raised: list[BaseException] = []

    def check() -> None:
        try:
            evaluate({"type": "output_matches", "pattern": CATASTROPHIC}, ws, output=BACKTRACKS)
        except BaseException as exc:  # handed to the main thread's assertions
            raised.append(exc)

    worker = threading.Thread(target=check)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive()
    assert len(raised) == 1
    assert isinstance(raised[0], RunError)
    assert raised[0].kind == "check-timeout"
    # And a pattern that does match is found there too, with its span: under a deadline
    # that the child's start-up stays far within on a loaded machine too.
    monkeypatch.setattr(defaults, "CHECK_TIMEOUT", 30.0)
    found: list[CheckRecord] = []
    worker = threading.Thread(
        target=lambda: found.append(
            evaluate({"type": "output_not_matches", "pattern": "b+"}, ws, output="a\nabbb\n")
        )
    )
    worker.start()
    worker.join(timeout=120)
    assert found[0].message.endswith("matched the final answer at line 2: 'abbb'")


def test_glob_walks_are_within_the_deadline(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(defaults, "CHECK_TIMEOUT", 0.0)
    with pytest.raises(RunError, match="while listing") as raised:
        evaluate({"type": "file_exists", "path": "**/*.py"}, ws)
    assert raised.value.kind == "check-timeout"


def test_globs_never_enter_symlinked_directories(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.conf").write_text("password = hunter2\n")
    # Two cycles, the root of the file system and a directory outside.
    (ws / "a").symlink_to(".")
    (ws / "b").symlink_to(".")
    (ws / "src/pkg/up").symlink_to("../..")
    (ws / "r").symlink_to("/")
    (ws / "etc").symlink_to(outside)
    # A symlink to a file inside the workspace is matched like the file.
    (ws / "alias.py").symlink_to("src/pkg/util.py")

    assert evaluate({"type": "file_absent", "path": "**/*.conf"}, ws).passed
    assert evaluate({"type": "file_absent", "path": "**/secret*"}, ws).passed
    found = evaluate({"type": "file_exists", "path": "**/*.py"}, ws)
    assert found.message == "**/*.py: 3 file(s) found"
    miss = evaluate({"type": "file_not_matches", "path": "**/*.py", "pattern": "^class "}, ws)
    assert miss.message.startswith("src/pkg/service.py:3:")
    # A wildcard matches the links to directories outside, and they are no files.
    everything = evaluate({"type": "file_not_matches", "path": "**/*", "pattern": "hunter2"}, ws)
    assert everything.message == "**/*: pattern 'hunter2' absent"
    # A named path still follows its symlinks, and one that leaves fails the check.
    named = evaluate({"type": "file_exists", "path": "etc/*.conf"}, ws)
    assert named.message == f"etc is a symlink leaving the workspace (to {outside}): not read"


def test_a_symlink_loop_is_no_file(ws: Path) -> None:
    (ws / "loop.py").symlink_to("loop.py")
    result = evaluate({"type": "file_matches", "path": "loop.py", "pattern": "x"}, ws)
    assert not result.passed
    assert result.message == "loop.py: not found (pattern 'x')"
    assert evaluate({"type": "file_exists", "path": "*.py"}, ws).message.endswith(
        "no such file in the workspace"
    )


def test_a_fifo_never_blocks_a_check(ws: Path, tmp_path: Path) -> None:
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    (fixture / "README.md").write_text("# Project\n")
    (ws / "README.md").unlink()
    os.mkfifo(ws / "README.md")
    os.mkfifo(ws / "pipe.py")
    assert not evaluate({"type": "file_exists", "path": "*.py"}, ws).passed
    assert not evaluate({"type": "file_matches", "path": "README.md", "pattern": "x"}, ws).passed
    changed = evaluate({"type": "file_unchanged", "path": "README.md"}, ws, fixture=fixture)
    assert changed.message == "README.md: no longer a regular file (the fixture's is)"


def test_a_file_above_the_read_limit_fails_the_check_that_searches_it(ws: Path) -> None:
    # Sparse: the size costs no disk, and a check that read it all would hold it in memory.
    with (ws / "huge.log").open("wb") as f:
        f.truncate(defaults.CHECK_READ_LIMIT + 1)
    result = evaluate({"type": "file_not_matches", "path": "huge.log", "pattern": "ERROR"}, ws)
    assert not result.passed
    assert result.message.startswith("huge.log: larger than the 67,108,864 bytes a check reads")
    assert "what a check cannot read fails it" in result.message


def test_file_unchanged_reads_no_fixture_file_outside_the_fixture(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("# Project\n")
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    (fixture / "README.md").symlink_to(outside)
    with pytest.raises(PathEscapeError, match=r"the fixture's path 'README\.md' resolves outside"):
        evaluate({"type": "file_unchanged", "path": "README.md"}, ws, fixture=fixture)


#: Evaluates one check as the user ``nobody`` when run as root, for whom a mode of 000
#: does not stop a read; prints its outcome or its error.
UNPRIVILEGED = """
import json, os, sys
from pathlib import Path
from pytest_evalcases.cases.registry import CheckContext
from pytest_evalcases.errors import RunError
from pytest_evalcases.run import checks
from pytest_evalcases.run.checks import default_registry
registry = default_registry()
check = registry.check_adapter.validate_python(json.loads(sys.argv[2]))
ctx = CheckContext(workspace=Path(sys.argv[1]), fixture=None, output="", tool_calls=None, env={})
try:
    record = registry.evaluate(0, check, ctx)
    print(json.dumps([record.passed, record.message]))
except RunError as exc:
    print(json.dumps(["error", exc.kind, str(exc)]))
"""


def unprivileged(workspace: Path, check: dict[str, Any]) -> list[Any]:
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    prefix = as_nobody if os.geteuid() == 0 else []
    result = subprocess.run(
        [*prefix, sys.executable, "-c", UNPRIVILEGED, str(workspace), json.dumps(check)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    outcome: list[Any] = json.loads(result.stdout)
    return outcome


def test_files_the_agent_made_unreadable_fail_the_checks_that_read_them(tmp_path: Path) -> None:
    workspace = Path(tempfile.mkdtemp(prefix="unreadable-"))
    try:
        workspace.chmod(0o755)
        (workspace / "app.py").write_text("class App: pass\n")
        (workspace / "app.py").chmod(0)
        (workspace / "private").mkdir()
        (workspace / "private" / "key.pem").write_text("KEY")
        (workspace / "private").chmod(0)

        matches = unprivileged(
            workspace, {"type": "file_matches", "path": "app.py", "pattern": "App"}
        )
        assert matches == [
            False,
            "app.py: cannot be read (Permission denied); what a check cannot read fails it",
        ]
        absent = unprivileged(workspace, {"type": "file_absent", "path": "**/*.pem"})
        assert absent == [
            False,
            "private/: cannot be listed (Permission denied); what a check cannot read fails it",
        ]
        # A named path below it cannot be told absent either.
        named = unprivileged(workspace, {"type": "file_absent", "path": "private/key.pem"})
        assert named == [
            False,
            "private/key.pem: cannot be read (Permission denied); what a check cannot read "
            "fails it",
        ]
        below = unprivileged(workspace, {"type": "directory_exists", "path": "private/keys"})
        assert below[0] is False
        assert below[1].startswith("private/keys: cannot be read (Permission denied)")
    finally:
        (workspace / "private").chmod(0o755)
        shutil.rmtree(workspace)


def test_checks_after_the_agent_deleted_its_workspace(ws: Path) -> None:
    shutil.rmtree(ws)
    gone = f"(the workspace {ws} no longer exists)"
    missing = evaluate({"type": "file_matches", "path": "README.md", "pattern": "x"}, ws)
    assert not missing.passed
    assert missing.message == f"README.md: not found (pattern 'x') {gone}"
    assert evaluate({"type": "file_exists", "path": "**/*.py"}, ws).message.endswith(gone)
    # A command has nowhere to run: no verdict.
    with pytest.raises(RunError) as raised:
        evaluate({"type": "command_succeeds", "command": "true"}, ws)
    assert raised.value.kind == "workspace"
    assert str(raised.value) == (
        f"`true` has no workspace to run in: {ws} no longer exists (the agent deleted it?), "
        "so no command check can reach a verdict"
    )
