"""run/attempts.py (and the run it makes: run/invoke.py, run/grading.py) with a real
``command`` agent: a subprocess per run, no pytester."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest

from pytest_evalcases.agents import make_agent
from pytest_evalcases.agents.base import AgentSettings
from pytest_evalcases.cases.loading import LoadedCase, load_case_file
from pytest_evalcases.errors import RunError
from pytest_evalcases.run.attempts import execute
from pytest_evalcases.run.budget import BudgetSpent
from pytest_evalcases.run.checks import default_registry
from pytest_evalcases.run.failfast import NotStarted
from pytest_evalcases.run.runner import AgentRun, RunContext, RunReport
from pytest_evalcases.run.workspace import Overlay, Variant

AGENT = """
import os, pathlib, sys
prompt = sys.argv[1]
if prompt == "sleep":
    import time
    time.sleep(30)
if prompt == "flaky":
    counter = pathlib.Path(os.environ["COUNTER"])
    runs = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(runs + 1))
    if runs < 2:
        sys.exit(3)
pathlib.Path("answer.txt").write_text(prompt)
print("I did:", prompt, "as", os.environ["EVALCASES_CASE_ID"], os.environ["EVALCASES_VARIANT"])
"""


#: The check most cases here grade by: the agent wrote its answer.
ANSWER_EXISTS = "[{type: file_exists, path: answer.txt}]"


def load(tmp_path: Path, case_id: str, checks: str = ANSWER_EXISTS, **fields: str) -> LoadedCase:
    """The case ``case_id`` defending AGENTS.md: its checks and other fields as YAML values."""
    evals = tmp_path / "evals"
    evals.mkdir(exist_ok=True)
    case_file = evals / "case.yaml"
    lines = [f"id: {case_id}", "defends: AGENTS.md"]
    lines += [f"{name}: {value}" for name, value in fields.items()]
    case_file.write_text("\n".join([*lines, f"checks: {checks}", ""]))
    (case,) = load_case_file(case_file, evals, default_registry())
    return case


def context(tmp_path: Path, retries: int = 0, env: dict[str, str] | None = None) -> RunContext:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{prompt}}"
    agent = make_agent(AgentSettings(name="command", command=command))
    return RunContext(
        registry=default_registry(),
        agent=agent,
        default_timeout=60.0,
        retries=retries,
        base_env={**(env or {}), "PATH": "/usr/bin:/bin"},
    )


def error_of(report: RunReport) -> RunError:
    """The error that left ``report`` without a verdict."""
    assert report.error is not None, "the run reached a verdict"
    assert not report.checks
    return report.error


class Workspaces:
    """Numbered fresh directories, as the plugin gives the runner."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: list[Path] = []

    def __call__(self) -> Path:
        path = self.root / f"ws{len(self.made)}"
        path.mkdir(parents=True)
        self.made.append(path)
        return path


def test_passing_run_reports_every_check_and_the_agent_output(tmp_path: Path) -> None:
    checks = (
        '[{type: output_matches, pattern: "^I did: add it as good cfg"},'
        " {type: file_exists, path: answer.txt}]"
    )
    case = load(tmp_path, "good", checks, prompt="add it")
    workspaces = Workspaces(tmp_path / "ws")

    report = execute(case, Variant(name="cfg"), context(tmp_path), workspaces)

    assert [(c.id, c.passed) for c in report.checks] == [
        ("output_matches-0", True),
        ("file_exists-1", True),
    ]
    assert report.passed is True
    assert report.failed_checks == []
    assert report.workspace == workspaces.made[0]
    assert (workspaces.made[0] / "answer.txt").read_text() == "add it"
    assert report.attempts == 1
    assert report.agent is not None
    assert report.agent.text == "I did: add it as good cfg\n"


def test_failing_check_is_reported_without_stopping_the_others(tmp_path: Path) -> None:
    checks = (
        "[{id: absent, type: file_absent, path: answer.txt},"
        " {id: present, type: file_exists, path: answer.txt}]"
    )
    case = load(tmp_path, "bad", checks, prompt="x")

    report = execute(case, Variant(), context(tmp_path), Workspaces(tmp_path / "ws"))

    assert report.passed is False
    assert [(c.id, c.passed) for c in report.checks] == [("absent", False), ("present", True)]
    assert [c.id for c in report.failed_checks] == ["absent"]


def test_overlays_and_setup_run_before_the_agent(tmp_path: Path) -> None:
    overlay = tmp_path / "config"
    overlay.mkdir()
    (overlay / "AGENTS.md").write_text("be brief")
    checks = '[{type: file_matches, path: seen.txt, pattern: "^be brief$"}]'
    case = load(tmp_path, "setup", checks, prompt="x", setup="cat AGENTS.md > seen.txt")

    report = execute(
        case,
        Variant(name="b", overlays=(Overlay(overlay),)),
        context(tmp_path),
        Workspaces(tmp_path / "ws"),
    )

    assert [(c.id, c.passed) for c in report.checks] == [("file_matches-0", True)]


@pytest.mark.parametrize("given", [None, "2026-06-01T12:00:00+0000"])
def test_setup_and_agent_commit_at_a_fixed_time_unless_the_environment_says(
    tmp_path: Path, given: str | None
) -> None:
    date = "git log -1 --format=%aI/%cI"
    setup = (
        "git init -q && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m s"
        f" && {date} > setup.txt"
    )
    case = load(tmp_path, "dates", prompt="x", setup=repr(setup))
    env = {"GIT_AUTHOR_DATE": given, "GIT_COMMITTER_DATE": given} if given else {}

    report = execute(case, Variant(name=""), context(tmp_path, env=env), Workspaces(tmp_path))

    assert report.workspace is not None
    expected = given.replace("+0000", "+00:00") if given else "2001-01-01T00:00:00+00:00"
    assert (report.workspace / "setup.txt").read_text().strip() == f"{expected}/{expected}"


def test_failing_setup_is_a_setup_error_with_its_workspace(tmp_path: Path) -> None:
    case = load(tmp_path, "broken-setup", prompt="x", setup="echo nope >&2; exit 4")
    workspaces = Workspaces(tmp_path / "ws")

    report = execute(case, Variant(), context(tmp_path), workspaces)
    error = error_of(report)

    assert error.kind == "setup"
    assert str(error) == "setup failed (exit status 4): `echo nope >&2; exit 4`\nnope"
    assert report.workspace == workspaces.made[0]
    assert report.attempts == 1


def test_timeout_is_an_error_of_kind_timeout(tmp_path: Path) -> None:
    case = load(tmp_path, "slow", prompt="sleep", timeout="0.5")

    report = execute(case, Variant(), context(tmp_path), Workspaces(tmp_path / "ws"))
    error = error_of(report)

    assert error.kind == "timeout"
    assert "timed out after 0.5s" in str(error)


def test_errored_attempts_are_retried_in_fresh_workspaces(tmp_path: Path) -> None:
    case = load(tmp_path, "flaky", prompt="flaky")
    workspaces = Workspaces(tmp_path / "ws")
    ctx = context(tmp_path, retries=2, env={"COUNTER": str(tmp_path / "counter")})

    report = execute(case, Variant(), ctx, workspaces)

    assert report.attempts == 3
    assert report.passed is True
    assert workspaces.made == [tmp_path / "ws" / f"ws{i}" for i in range(3)]
    assert report.workspace == workspaces.made[2]


def test_last_error_names_the_attempts_when_retries_run_out(tmp_path: Path) -> None:
    case = load(tmp_path, "flaky", prompt="flaky")
    ctx = context(tmp_path, retries=1, env={"COUNTER": str(tmp_path / "counter")})

    report = execute(case, Variant(), ctx, Workspaces(tmp_path / "ws"))
    error = error_of(report)

    assert report.attempts == 2
    assert str(error).endswith(" (after 2 attempts)")
    assert report.workspace == tmp_path / "ws" / "ws1"


def test_the_attempt_record_names_each_attempt_and_keeps_the_error_as_raised(
    tmp_path: Path,
) -> None:
    case = load(tmp_path, "flaky", prompt="flaky")
    ctx = context(tmp_path, retries=1, env={"COUNTER": str(tmp_path / "counter")})

    report = execute(case, Variant(), ctx, Workspaces(tmp_path / "ws"))
    error = error_of(report)

    assert (error.kind, report.attempts, len(report.spends)) == ("crash", 2, 2)
    assert report.duration > 0
    # The record says it all: nothing was set on the error on its way.
    assert set(vars(error)) <= {"kind", "retry_after", "spent", "denials"}


def test_a_run_made_ahead_that_was_not_started_made_no_attempt(tmp_path: Path) -> None:
    case = load(tmp_path, "live", prompt="x")
    ctx = context(tmp_path, retries=2)
    stopped = NotStarted("not started: an earlier run failed", kind="authentication")

    def refused() -> AgentRun:
        raise BudgetSpent("budget spent")

    report = execute(case, Variant(), ctx, Workspaces(tmp_path / "ws"), refused)
    assert (error_of(report).kind, report.attempts, report.workspace) == ("budget", 0, None)

    ahead = AgentRun(tmp_path / "ws-ahead", error=stopped, began=0.0)
    report = execute(case, Variant(), ctx, Workspaces(tmp_path / "ws"), lambda: ahead)
    assert (error_of(report), report.attempts, report.workspace) == (stopped, 0, None)


def test_graded_directory_is_checked_as_it_is(tmp_path: Path) -> None:
    graded = tmp_path / "done"
    (graded / ".evalcases").mkdir(parents=True)
    (graded / ".evalcases" / "output.txt").write_text("all done")
    checks = (
        '[{type: output_matches, pattern: "^all done$"}, {type: file_exists, path: answer.txt}]'
    )
    case = load(tmp_path, "graded", checks)
    ctx = RunContext(registry=default_registry(), agent=None, default_timeout=1.0)

    report = execute(case, Variant(graded_dir=graded), ctx, Workspaces(tmp_path / "ws"))

    assert report.workspace == graded
    assert [(c.id, c.passed) for c in report.checks] == [
        ("output_matches-0", True),
        ("file_exists-1", False),
    ]


def test_graded_directory_of_per_case_directories(tmp_path: Path) -> None:
    """With a subdirectory named like a case of the suite, every case needs its own:
    a missing one is an error, never a grading of the whole directory."""
    run = tmp_path / "run-1"
    (run / "present").mkdir(parents=True)
    (run / "present" / "answer.txt").write_text("")
    (run / "answer.txt").write_text("")  # would make the other case pass if graded here
    (run / "src").mkdir()  # a directory named like no case
    ctx = RunContext(
        registry=default_registry(),
        agent=None,
        default_timeout=1.0,
        case_ids=frozenset({"present", "absent"}),
    )
    graded = Variant(graded_dir=run)

    report = execute(load(tmp_path, "present"), graded, ctx, Workspaces(tmp_path / "ws"))
    assert report.workspace == run / "present"
    report = execute(load(tmp_path, "absent"), graded, ctx, Workspaces(tmp_path / "ws"))
    error = error_of(report)

    assert error.kind == "workspace"
    assert str(error) == (
        f"no directory for case absent in {run}: it holds per-case directories (present), "
        f"so each case is graded in its own {run}/<case-id>/"
    )
    # Without a subdirectory named like a case, the directory is one workspace.
    (run / "present" / "answer.txt").rename(run / "present.txt")
    (run / "present").rmdir()
    report = execute(load(tmp_path, "absent"), graded, ctx, Workspaces(tmp_path / "ws"))
    assert report.workspace == run
    assert report.passed


def test_no_agent_is_an_error_of_kind_no_agent(tmp_path: Path) -> None:
    case = load(tmp_path, "live", prompt="x")
    ctx = RunContext(registry=default_registry(), agent=None, default_timeout=1.0)

    report = execute(case, Variant(), ctx, Workspaces(tmp_path / "ws"))
    error = error_of(report)

    assert error.kind == "no-agent"
    assert str(error) == "no agent configured (--eval-agent)"


def test_a_graded_answer_outside_the_graded_directory_is_never_read(tmp_path: Path) -> None:
    # A FIFO: opening it would block, so a test that returns proves it was not opened.
    secret = tmp_path / "secret"
    os.mkfifo(secret)
    graded = tmp_path / "done"
    (graded / ".evalcases").mkdir(parents=True)
    (graded / ".evalcases" / "output.txt").symlink_to(secret)
    case = load(tmp_path, "graded", "[{type: output_matches, pattern: x}]")
    ctx = RunContext(registry=default_registry(), agent=None, default_timeout=1.0)

    report = execute(case, Variant(graded_dir=graded), ctx, Workspaces(tmp_path / "ws"))
    error = error_of(report)

    assert error.kind == "path"
    assert str(error) == (
        "the graded final answer '.evalcases/output.txt' resolves outside the workspace "
        f"(to {secret}); not read"
    )


def test_a_graded_answer_that_is_no_file_is_an_error(tmp_path: Path) -> None:
    graded = tmp_path / "done"
    (graded / ".evalcases").mkdir(parents=True)
    os.mkfifo(graded / ".evalcases" / "output.txt")
    case = load(tmp_path, "graded", "[{type: file_exists, path: answer.txt}]")
    ctx = RunContext(registry=default_registry(), agent=None, default_timeout=1.0)

    report = execute(case, Variant(graded_dir=graded), ctx, Workspaces(tmp_path / "ws"))
    error = error_of(report)

    assert error.kind == "no-output"
    assert str(error) == (
        f"the graded final answer {graded / '.evalcases/output.txt'}: not a regular file"
    )
