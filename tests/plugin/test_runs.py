"""Running cases with the command agent: workspaces, FAIL versus ERROR, severities."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.interrupt import REPORTED_HOOK, interrupted_pytest, reported
from tests.helpers.sandbox import gone, requires_bwrap
from tests.helpers.suite import SuiteBuilder


@pytest.fixture
def make_suite(make_suite: SuiteBuilder) -> SuiteBuilder:
    """Every suite here runs its agent script as the command agent, timing out at 20 s."""
    return make_suite.with_ini("eval_agent = command\neval_timeout = 20\n")


def simple_case(
    case_id: str, prompt: str = "x", pattern: str = "x", *, checks: str = "", **fields: str
) -> str:
    """A case defending AGENTS.md with one ``output_matches`` check of ``pattern``, or
    with ``checks`` (YAML), and any other ``fields`` (YAML values)."""
    lines = [f"id: {case_id}", "defends: AGENTS.md", *(f"{k}: {v}" for k, v in fields.items())]
    checks = checks or f"[{{type: output_matches, pattern: {pattern}}}]"
    return "\n".join([*lines, f"prompt: {prompt}", f"checks: {checks}", ""])


#: A case the echo agent fails: the answer.txt it writes is a ``*.txt``.
FAILS_CASE = simple_case("fails", checks='[{type: file_absent, path: "*.txt"}]')


#: An advisory case that the echo agent fails: its answer never mentions postgres.
ADVISORY_CASE = """
id: advisory
defends: docs/stack.md
severity: advisory
prompt: x
checks: [{type: output_matches, pattern: postgres, id: mentions-postgres}]
"""

ECHO_AGENT = """
import os, pathlib, sys
prompt = sys.argv[1]
pathlib.Path("answer.txt").write_text(prompt)
print("I did:", prompt)
print("case", os.environ["EVALCASES_CASE_ID"], "in", os.environ["EVALCASES_WORKSPACE"])
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", *args)


SuiteRun = Callable[..., pytest.RunResult]


@pytest.fixture
def run_suite_of(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> SuiteRun:
    """``run_suite_of(*args, agent=ECHO_AGENT, **cases)``: the suite of the agent script
    and ``cases``, run with ``args``."""

    def run_suite(*args: str, agent: str = ECHO_AGENT, **cases: str) -> pytest.RunResult:
        make_suite(agent, **cases)
        return run(pytester, *args)

    return run_suite


def test_passing_and_failing_checks(run_suite_of: SuiteRun) -> None:
    result = run_suite_of(
        good="""
        id: good
        defends: AGENTS.md
        prompt: add the feature
        checks:
          - type: output_matches
            pattern: "^I did: add"
          - type: file_matches
            path: answer.txt
            pattern: feature
          - type: command_succeeds
            command: test -f answer.txt
        """,
        bad="""
        id: bad
        defends: rules/git.md
        description: The agent never mentions features
        prompt: add the feature
        checks:
          - type: output_not_matches
            pattern: "(?i)feature"
            description: no feature talk
          - type: file_exists
            path: answer.txt
          - type: file_not_matches
            path: answer.txt
            pattern: add
          - type: file_matches
            path: missing.txt
            pattern: x
        """,
    )

    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "case bad (normal) defends rules/git.md" in out
    assert "3 of 4 checks failed" in out
    assert (
        "FAILED output_not_matches-0 [output_not_matches] (no feature talk): pattern "
        "'(?i)feature' matched the final answer at line 1: 'I did: add the feature'"
    ) in out
    assert "answer.txt:1: pattern 'add' must not match: 'add the feature'" in out
    assert "missing.txt: not found" in out
    # The failures section only: on CI (or with -vv) pytest repeats the whole message in
    # the short test summary.
    failures = out.split("short test summary")[0]
    assert "file_exists-1" not in failures.split("checks failed")[1]
    kept = [line for line in failures.splitlines() if line.startswith("workspace kept: ")]
    assert len(kept) == 1
    workspace = Path(kept[0].split(": ", 1)[1])
    assert (workspace / "answer.txt").read_text() == "add the feature"
    assert result.ret == 1


def test_agent_errors_are_errors_not_failures(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite(
        """
        import sys
        if "crash" in sys.argv[1]:
            sys.stderr.write("error: authentication_failed - set ANTHROPIC_API_KEY\\n")
            sys.exit(1)
        print("fine")
        """,
        crash=simple_case("crash", "please crash", "fine", severity="critical"),
        setup_fails=simple_case(
            "setup-fails", "anything", "fine", setup="echo preparing; echo no such tool >&2; exit 3"
        ),
        ok=simple_case("ok", prompt="anything", pattern="fine"),
    )

    result = run(pytester)

    result.assert_outcomes(passed=1, errors=2)
    out = result.stdout.str()
    # The wrapper's words say why: not a crash (docs/agents.md, "Any command").
    assert "case crash (critical) defends AGENTS.md: no verdict (authentication)" in out
    assert "authentication_failed - set ANTHROPIC_API_KEY" in out
    assert "no verdict (setup)" in out
    assert "setup failed (exit status 3)" in out
    assert "no such tool" in out
    assert "Traceback" not in out
    # The short summary gives the reason as it is, not as pytest.fail's "Failed: ...".
    result.stdout.fnmatch_lines(["ERROR evals/crash.yaml::crash - no verdict (authentication)*"])
    assert "Failed:" not in out
    assert "suite: 1/3 cases passed · Score: 1/1 (100%) · 2 errors" in out
    assert "eval gate: INCONCLUSIVE (2 cases errored: crash, setup-fails)" in out
    assert result.ret == 2


def test_missing_agent_binary_is_one_usage_error(run_suite_of: SuiteRun) -> None:
    # The session's preflight (tests/plugin/test_preflight.py); a run still says so
    # itself (tests/agents/test_agent_claude.py).
    result = run_suite_of(
        "--eval-agent-command",
        "no-such-agent-cli {prompt}",
        one=simple_case("one"),
    )

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: agent 'command': program 'no-such-agent-cli' (the first word of*"]
    )


SANDBOXES = [
    pytest.param("none"),
    pytest.param("bwrap", marks=requires_bwrap),
]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_check_command_that_is_not_found_errors_never_passes(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, sandbox: str
) -> None:
    """A missing tool in CI made `command_fails` pass (exit status 127)."""
    make_suite(
        ECHO_AGENT,
        negative=simple_case(
            "negative", checks="[{type: command_fails, command: nonexistent-binary-q --flag}]"
        ),
        positive=simple_case(
            "positive", checks="[{type: command_succeeds, command: ./lint.sh}]", cwd="project"
        ),
        # Written without the executable bit.
        fixtures={"evals/project/lint.sh": "#!/bin/sh\nexit 0\n"},
        ini=f"eval_sandbox = {sandbox}\n",
    )

    result = run(pytester, "-rE")

    result.assert_outcomes(errors=2)
    out = result.stdout.str()
    assert "case negative (normal) defends AGENTS.md: no verdict (missing)" in out
    assert "program 'nonexistent-binary-q' not found (exit status 127" in out
    assert "program './lint.sh' not executable (exit status 126" in out
    assert "Traceback" not in out
    assert result.ret == 2


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_timeout_kills_the_agent_and_its_children(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    sandbox: str,
) -> None:
    make_suite(
        """
        import os, subprocess, sys, time
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)", os.environ["MARK"]]
        )
        open("child.pid", "w").write(str(child.pid))
        time.sleep(600)
        """,
        # Time enough for the agent to start its child on a loaded machine.
        slow=simple_case("slow", timeout="4"),
        ini=f"eval_sandbox = {sandbox}\neval_sandbox_rw = {pytester.path}\n",
    )
    mark = f"evalcases-mark-{pytester.path}"
    monkeypatch.setenv("MARK", mark)

    result = run(pytester)

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*timed out after 4s*", "workspace kept: *"])
    (results,) = (pytester.path / "evals" / "results").glob("*.json")
    (record,) = json.loads(results.read_text("utf-8"))["cases"]
    # An errored run took its time too.
    assert (record["error_kind"], record["duration"] >= 4) == ("timeout", True)
    workspace = Path(
        next(line for line in result.stdout.lines if line.startswith("workspace kept: ")).split(
            ": ", 1
        )[1]
    )
    assert (workspace / "child.pid").is_file()
    # In a sandbox the pid is the child's in its own namespace: look for it by name.
    assert gone(mark)


def test_prompt_placeholder_inside_a_word_stays_one_argument(run_suite_of: SuiteRun) -> None:
    result = run_suite_of(
        "--eval-agent-command",
        "{python} {rootdir}/agent.py --message={prompt} -v",
        agent="import sys\nprint(repr(sys.argv[1:]), 'stdin:', repr(sys.stdin.read()))\n",
        one=simple_case("one", prompt="'say {rootdir} twice'", pattern="x"),
    )

    # The prompt fills its word, as one argument; placeholders in the prompt stay as
    # they are; nothing goes to standard input.
    result.stdout.fnmatch_lines(
        [
            "*pattern 'x' not found in the final answer*['--message=say {rootdir} twice', '-v']"
            " stdin: ''*"
        ]
    )


def test_prompt_goes_to_stdin_without_placeholder(run_suite_of: SuiteRun) -> None:
    result = run_suite_of(
        "--eval-agent-command",
        "{python} {rootdir}/agent.py",
        agent="import sys\nprint('heard:', sys.stdin.read())\n",
        one=simple_case("one", prompt="via stdin", pattern="'heard: via stdin'"),
    )

    result.assert_outcomes(passed=1)


def test_fixture_copied_setup_run_source_untouched(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite(
        """
        import pathlib
        pathlib.Path("migrations/001.sql").write_text("ALTER TABLE x;")
        pathlib.Path("notes.txt").write_text(pathlib.Path("setup.out").read_text())
        print("edited")
        """,
        migration="""
        id: migration
        defends: rules/migrations.md
        cwd: fixtures/repo
        setup: echo from-setup > setup.out
        prompt: change the schema
        checks:
          - type: file_unchanged
            path: migrations/001.sql
          - type: file_matches
            path: notes.txt
            pattern: from-setup
          - type: directory_exists
            path: migrations
        """,
    )
    fixture = pytester.path / "evals/fixtures/repo/migrations"
    fixture.mkdir(parents=True)
    (fixture / "001.sql").write_text("CREATE TABLE x;")

    result = run(pytester)

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*migrations/001.sql: changed from the fixture's copy:",
            "    --- fixture/migrations/001.sql",
            "    +++ workspace/migrations/001.sql",
            "    @@ -1 +1 @@",
            "    -CREATE TABLE x;",
            "    +ALTER TABLE x;",
        ]
    )
    assert (fixture / "001.sql").read_text() == "CREATE TABLE x;"
    assert not (pytester.path / "evals/fixtures/repo/setup.out").exists()


def test_workspace_is_outside_the_users_git_repository(
    run_suite_of: SuiteRun, pytester: pytest.Pytester
) -> None:
    where = simple_case("where", checks="[{type: command_fails, command: git rev-parse --git-dir}]")
    pytester.run("git", "init", "-q", str(pytester.path))

    result = run_suite_of(f"--basetemp={pytester.path / 'tmp'}", where=where)

    result.assert_outcomes(passed=1)


def test_workspace_is_below_no_instruction_file_of_the_project(
    run_suite_of: SuiteRun, pytester: pytest.Pytester
) -> None:
    """A project that is no git repository, with its own CLAUDE.md and AGENTS.md and a
    --basetemp inside it: an agent would read them from the parent directories in every
    run, so the workspace goes elsewhere (docs/agents.md, "Where workspaces live")."""
    (pytester.path / "CLAUDE.md").write_text("the project's rules, not the case's\n")
    (pytester.path / "AGENTS.md").write_text("the project's rules, not the case's\n")
    above = (
        'd="$PWD"; while [ "$d" != / ]; do d=$(dirname "$d");'
        ' [ -e "$d/CLAUDE.md" ] || [ -e "$d/AGENTS.md" ] && exit 1; done; exit 0'
    )
    where = simple_case("where", checks=f"[{{type: command_succeeds, command: '{above}'}}]")

    result = run_suite_of(f"--basetemp={pytester.path / 'tmp'}", where=where)

    result.assert_outcomes(passed=1)


def test_passed_workspaces_are_removed_failed_ones_kept(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite(
        ECHO_AGENT,
        passes=simple_case("passes", checks="[{type: file_exists, path: answer.txt}]"),
        fails=FAILS_CASE,
    )
    with open(pytester.path / "tox.ini", "a") as ini:
        ini.write("\ntmp_path_retention_policy = failed\n")
    base = pytester.path / "tmp"

    run(pytester, f"--basetemp={base}").assert_outcomes(passed=1, failed=1)

    # The failed run's workspace was moved beside the results file (docs/agents.md,
    # "Kept workspaces"); the passed one's was removed.
    assert [p.name for p in base.iterdir() if not p.is_symlink()] == []
    (kept,) = (pytester.path / "evals" / "results").glob("*.workspaces/fails")
    assert (kept / "answer.txt").read_text() == "x"


def test_a_kept_workspace_survives_normal_tests_that_use_tmp_path_after_it(
    run_suite_of: SuiteRun, pytester: pytest.Pytester
) -> None:
    # Workspaces are pytest's own tmp_path directories: a test asking for tmp_path after
    # the eval cases ran must not empty --basetemp under a failed run's workspace (left
    # there when none is kept elsewhere: eval_keep_max_mb = 0).
    pytester.makepyfile(test_zz_later="def test_later(tmp_path):\n    assert tmp_path.is_dir()\n")
    base = pytester.path / "tmp"

    run_suite_of(
        f"--basetemp={base}", "-o", "eval_keep_max_mb=0", fails=FAILS_CASE
    ).assert_outcomes(passed=1, failed=1)

    assert (base / "fails0" / "answer.txt").read_text() == "x"
    assert (base / "test_later0").is_dir()


def test_advisory_failure_is_xfailed_quarantine_is_skipped(run_suite_of: SuiteRun) -> None:
    result = run_suite_of(
        "-rsx",
        advisory=ADVISORY_CASE,
        flaky=simple_case("flaky", quarantine="flaky since model X"),
        **{f"ok-{i}": simple_case(f"ok-{i}") for i in range(9)},
    )

    result.assert_outcomes(passed=9, xfailed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["*XFAIL*advisory*advisory case failed: mentions-postgres: pattern 'postgres' not found*"]
    )
    result.stdout.fnmatch_lines(
        ["SKIPPED [[]1[]] evals/flaky.yaml:1: quarantined: flaky since model X"]
    )
    # 9 of 10 graded cases passed: exactly the default eval_min_pass_rate of 0.90.
    result.stdout.fnmatch_lines(["eval gate: PASS"])
    assert result.ret == 0


def test_one_advisory_failure_among_few_cases_never_blocks(run_suite_of: SuiteRun) -> None:
    """Advisory cases are reported and never block: one failing beside four passing
    cases is no pass rate of 80 %; the gate's pass rate is the critical and normal
    cases' (docs/reference.md, "Exit statuses of `pytest`")."""
    result = run_suite_of(
        advisory=ADVISORY_CASE, **{f"ok-{i}": simple_case(f"ok-{i}") for i in range(4)}
    )

    result.assert_outcomes(passed=4, xfailed=1)
    result.stdout.fnmatch_lines(
        ["suite: 4/5 cases passed*normal 4/4, advisory 0/1", "eval gate: PASS"]
    )
    assert result.ret == 0


@pytest.mark.parametrize("columns", [60, 240])
def test_short_summary_names_the_failed_checks_or_the_error(
    run_suite_of: SuiteRun, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    """The short test summary's line of a case says what failed first, the check ids or
    the error's kind, then why: what a narrow terminal keeps is the useful part."""
    monkeypatch.setenv("COLUMNS", str(columns))
    # On CI pytest prints the whole line, whatever the width.
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    checks = (
        '[{type: file_absent, path: "*.txt", id: no-txt}, '
        "{type: output_matches, pattern: nowhere, id: says-nowhere}, "
        "{type: output_matches, pattern: did}]"
    )
    agent = ECHO_AGENT + "if prompt == 'crash':\n    sys.exit(3)\n"

    result = run_suite_of(
        "-rA",
        agent=agent,
        fails=simple_case("fails", checks=checks),
        crashes=simple_case("crashes", prompt="crash"),
    )

    result.assert_outcomes(failed=1, errors=1)
    summary = next(i for i, line in enumerate(result.outlines) if "short test summary" in line)
    lines = result.outlines[summary:]
    failed = next(line for line in lines if line.startswith("FAILED "))
    errored = next(line for line in lines if line.startswith("ERROR "))
    head = "FAILED evals/fails.yaml::fails - no-txt"
    assert failed.startswith(head), failed
    assert errored.startswith("ERROR evals/crashes.yaml::crashes - no verdict (crash)"), errored
    if columns == 60:
        assert len(failed) <= columns
        assert len(errored) <= columns
    else:
        assert failed.startswith(f"{head}, says-nowhere failed: *.txt: present"), failed
        assert "; pattern 'nowhere' not found in the final answer" in failed
        assert "defends" not in failed
        assert "exited with status 3" in errored


def test_advisory_failures_alone_never_block(run_suite_of: SuiteRun) -> None:
    """`-k` on one advisory case that fails: xfailed, and no pass rate of one case
    blocks the run (docs/reference.md, "Exit statuses of `pytest`")."""
    result = run_suite_of("-k", "advisory", advisory=ADVISORY_CASE, ok=simple_case("ok"))

    result.assert_outcomes(xfailed=1, deselected=1)
    result.stdout.fnmatch_lines(["suite: 0/1 cases passed*", "eval gate: PASS"])
    assert result.ret == 0


def test_no_agent_skips_and_says_nothing_was_graded(pytester: pytest.Pytester) -> None:
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals/one.yaml").write_text(simple_case("one"))
    pytester.makepyfile(test_unit="def test_unit():\n    pass\n")

    result = run(pytester, "-rs")

    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["eval gate: nothing was graded*"])
    result.stdout.fnmatch_lines(
        ["SKIPPED [[]1[]] evals/one.yaml:1: no agent configured (--eval-agent)"]
    )
    assert result.ret == 0


def test_retry_errors_reruns_only_errored_runs(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite(
        """
        import os, pathlib, sys
        # One line per attempt, outside the workspace: the attempt's workspace, and
        # whether an earlier attempt had left its mark there.
        log = pathlib.Path(os.environ["ATTEMPTS"]) / os.environ["EVALCASES_CASE_ID"]
        mark = pathlib.Path("left-by-an-attempt")
        with log.open("a") as out:
            out.write(f"{os.getcwd()} {mark.exists()}\\n")
        mark.write_text("x")
        n = len(log.read_text().splitlines())
        if n < 3:
            sys.exit("crashed, try again")
        print("done")
        """,
        flaky=simple_case("flaky", prompt="x", pattern="nope"),
        recovers=simple_case("recovers", prompt="x", pattern="done"),
    )
    log = pytester.path / "attempts"
    log.mkdir()
    os.environ["ATTEMPTS"] = str(log)
    try:
        result = run(pytester, "--eval-retry-errors", "2")
    finally:
        del os.environ["ATTEMPTS"]

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["attempts: 3 (earlier ones errored)"])
    result.stdout.fnmatch_lines(
        [
            "retried: 2 runs reached a verdict only after errored attempts: "
            "flaky (3 attempts), recovers (3 attempts)"
        ]
    )
    for case_id in ("flaky", "recovers"):
        attempts = [line.split() for line in (log / case_id).read_text().splitlines()]
        # Three attempts, each in a fresh workspace that no earlier attempt touched.
        assert len({where for where, _ in attempts}) == 3
        assert [seen for _, seen in attempts] == ["False"] * 3


#: An agent that fails authentication as a wrapper of a model API would, and counts its
#: starts in the rootdir.
UNAUTHORIZED_AGENT = """
import pathlib, sys
with open(pathlib.Path(sys.argv[1]) / "starts", "a") as starts:
    starts.write("start\\n")
sys.stderr.write("Error: 401 Unauthorized: invalid api key\\n")
sys.exit(1)
"""


def test_a_command_agent_that_cannot_authenticate_is_authentication_not_retried(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite(
        UNAUTHORIZED_AGENT,
        {"one": simple_case("one")},
        command="{python} {rootdir}/agent.py {rootdir} {prompt}",
    )

    result = run(pytester, "--eval-retry-errors", "2")

    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "case one (normal) defends AGENTS.md: no verdict (authentication)" in out
    assert "agent command exited with status 1 and could not authenticate: " in out
    assert "401 Unauthorized: invalid api key" in out
    assert (pytester.path / "starts").read_text().split() == ["start"]


#: The agent of the issue: a script in the repository, named by a relative path.
REPO_AGENT = """#!/usr/bin/env python3
import sys
print("done:", sys.argv[1])
"""


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("python3 agents/fake_agent.py {prompt}", "can't open file"),
        ("agents/fake_agent.py {prompt}", "No such file or directory"),
    ],
)
def test_a_relative_agent_path_says_to_use_rootdir(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, command: str, said: str, sandbox: str
) -> None:
    make_suite(
        cases={"one": simple_case("one", pattern="done")},
        fixtures={"agents/fake_agent.py": REPO_AGENT},
        ini=f"eval_sandbox = {sandbox}\n",
    )
    (pytester.path / "agents" / "fake_agent.py").chmod(0o755)

    result = run(pytester, "--eval-agent-command", command)

    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "no verdict (config)" in out
    assert said in out
    assert (
        "where 'agents/fake_agent.py' does not exist; write {rootdir}/agents/fake_agent.py "
        "in eval_agent_command ({rootdir} is pytest's rootdir"
    ) in out
    rooted = command.replace("agents/", "{rootdir}/agents/")
    run(pytester, "--eval-agent-command", rooted).assert_outcomes(passed=1)


def test_rootdir_is_one_absolute_word_whatever_its_characters(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``{rootdir}`` and ``{python}`` are replaced after the command line is split: a
    space or a quote in them stays inside the word, as in the prompt."""
    root = pytester.path / "it's a project"
    (root / "agents").mkdir(parents=True)
    (root / "agents" / "fake_agent.py").write_text(REPO_AGENT)
    (root / "evals").mkdir()
    (root / "evals" / "one.yaml").write_text(simple_case("one", pattern="done"))
    python = pytester.path / "a venv" / "python"
    python.parent.mkdir()
    (root / "pytest.ini").write_text(
        "[pytest]\neval_agent_command = {python} {rootdir}/agents/fake_agent.py {prompt}\n"
        f"eval_sandbox_rw = {shlex.quote(str(root))}\n"
        f"eval_sandbox_ro = {shlex.quote(str(python.parent))}\n"
    )
    python.symlink_to(sys.executable)
    monkeypatch.setattr(sys, "executable", str(python))
    monkeypatch.chdir(root)

    result = run(pytester, "--rootdir", str(root))

    result.assert_outcomes(passed=1)


def test_normal_test_failure_is_never_hidden(
    run_suite_of: SuiteRun, pytester: pytest.Pytester
) -> None:
    pytester.makepyfile(test_unit="def test_unit():\n    assert False\n")

    result = run_suite_of(ok=simple_case("ok"))

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["eval gate: PASS"])
    assert result.ret == 1


@pytest.mark.parametrize("stop_early", [False, True], ids=["all", "exitfirst"])
def test_a_failing_normal_test_beside_errored_cases_exits_1(
    run_suite_of: SuiteRun, pytester: pytest.Pytester, stop_early: bool
) -> None:
    """A normal test's failure is a failure (1), whatever the eval gate's INCONCLUSIVE:
    beside an errored case, and when ``-x`` stops the run at that failure
    (docs/reference.md, "Exit statuses of `pytest`")."""
    pytester.makepyfile(test_unit="def test_unit():\n    assert False\n")
    agent = ECHO_AGENT + "if prompt == 'crash':\n    sys.exit(3)\n"
    cases = {"ok": simple_case("ok")}
    if not stop_early:
        cases["crashes"] = simple_case("crashes", prompt="crash")

    result = run_suite_of(*(["-x"] if stop_early else []), agent=agent, **cases)

    result.assert_outcomes(passed=1, failed=1, errors=0 if stop_early else 1)
    result.stdout.fnmatch_lines(["eval gate: INCONCLUSIVE*"])
    assert result.ret == 1


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_ctrl_c_kills_the_agent_and_its_children(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, sandbox: str
) -> None:
    mark = f"evalcases-mark-{pytester.path}"
    make_suite(
        """
        import os, pathlib, subprocess, sys, time
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)", os.environ["MARK"]]
        )
        pids = pathlib.Path(os.environ["PIDS"])
        pids.write_text(f"{os.getpid()} {child.pid}")
        time.sleep(600)
        """,
        slow=simple_case("slow"),
        ini=f"eval_sandbox = {sandbox}\neval_sandbox_rw = {pytester.path}\n",
    )
    pids = pytester.path / "pids"

    def started() -> bool:
        return pids.exists() and len(pids.read_text().split()) == 2

    returncode, out = interrupted_pytest(pytester.path, started, {"PIDS": str(pids), "MARK": mark})

    assert returncode == pytest.ExitCode.INTERRUPTED, out
    assert "KeyboardInterrupt" in out
    # The agent (its command line names the suite's agent.py) and its child.
    assert gone(str(pytester.path / "agent.py"))
    assert gone(mark)


def test_eval_agent_home_takes_isolated_or_inherit(pytester: pytest.Pytester) -> None:
    pytester.makefile(".ini", tox="[pytest]\neval_agent_home = shared\n")

    result = run(pytester)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini option eval_agent_home expects isolated or inherit, got 'shared'*"]
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "args", "group"),
    [
        pytest.param(signal.SIGTERM, (), False, id="sigterm"),
        pytest.param(signal.SIGHUP, (), False, id="sighup"),
        # A CI runner cancelling the job signals pytest's whole process group: the xdist
        # workers too, whose agents run in sessions of their own.
        pytest.param(signal.SIGTERM, ("-n", "2"), True, id="sigterm-group-xdist"),
        pytest.param(signal.SIGTERM, ("-n", "2"), False, id="sigterm-controller-xdist"),
    ],
)
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_sigterm_and_sighup_end_the_run_like_ctrl_c(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    sig: signal.Signals,
    args: tuple[str, ...],
    group: bool,
    sandbox: str,
) -> None:
    mark = f"evalcases-mark-{pytester.path}"
    make_suite(
        """
        import os, pathlib, subprocess, sys, time
        if os.environ["EVALCASES_CASE_ID"] == "a-fast":
            print("x")
            sys.exit(0)
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", os.environ["MARK"]])
        started = pathlib.Path(os.environ["STARTED"])
        started.mkdir(exist_ok=True)
        (started / os.environ["EVALCASES_CASE_ID"]).touch()
        time.sleep(600)
        """,
        {name: simple_case(name) for name in ("a-fast", "b-slow", "c-slow")},
        ini=f"eval_sandbox = {sandbox}\neval_sandbox_rw = {pytester.path}\n",
        fixtures={"conftest.py": REPORTED_HOOK},
    )
    started = pytester.path / "started"

    def running() -> bool:
        # Under xdist both cases run at once; serially the first one. The first case
        # must be reported: under xdist the controller takes it in its own time.
        want = 2 if args else 1
        running = started.is_dir() and len(list(started.iterdir())) >= want
        return running and reported(pytester.path) == {"a-fast"}

    returncode, out = interrupted_pytest(
        pytester.path,
        running,
        {"STARTED": str(started), "MARK": mark},
        sig=sig,
        args=args,
        group=group,
    )

    assert returncode == pytest.ExitCode.INTERRUPTED, out
    assert "eval gate" in out
    (results,) = (pytester.path / "evals" / "results").glob("*.json")
    doc = json.loads(results.read_text("utf-8"))
    assert doc["complete"] is False
    assert "interrupted" in doc["incomplete_reasons"]
    assert [(c["id"], c["outcome"]) for c in doc["cases"]] == [("a-fast", "passed")]
    assert "incomplete: interrupted" in out
    assert gone(str(pytester.path / "agent.py"))
    assert gone(mark)


@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["serial", "xdist"])
@pytest.mark.parametrize(
    ("unit_test", "cases", "status"),
    [
        # The gate's INCONCLUSIVE (2) where pytest alone says 1.
        pytest.param("assert True", ("crashes",), 2, id="errored-case"),
        # An advisory failure: xfailed for pytest, reported and never blocking for the gate.
        pytest.param("assert True", ("ok", "advisory"), 0, id="advisory-failure"),
        pytest.param("assert False", ("ok",), 1, id="failing-test"),
    ],
)
def test_json_report_exitcode_is_the_exit_status(
    run_suite_of: SuiteRun,
    pytester: pytest.Pytester,
    unit_test: str,
    cases: tuple[str, ...],
    status: int,
    xdist: tuple[str, ...],
) -> None:
    """pytest-json-report reads the exit status in its own ``pytest_sessionfinish``: it
    is the one the plugin sets, the process's own (docs/reference.md)."""
    pytester.makepyfile(test_unit=f"def test_unit():\n    {unit_test}\n")
    agent = ECHO_AGENT + "if prompt == 'crash':\n    sys.exit(3)\n"
    known = {
        "ok": simple_case("ok"),
        "crashes": simple_case("crashes", prompt="crash"),
        "advisory": ADVISORY_CASE,
    }
    suite = {case_id: known[case_id] for case_id in cases}

    result = run_suite_of(
        *xdist, "--json-report", "--json-report-file=report.json", agent=agent, **suite
    )

    assert result.ret == status
    report = json.loads((pytester.path / "report.json").read_text("utf-8"))
    assert report["exitcode"] == status
