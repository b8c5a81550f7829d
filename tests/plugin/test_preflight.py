"""One preflight per session (docs/agents.md, "Before the first run"): a missing agent CLI
or credential is one usage error before any case runs, never one error per case, and
never an error for a session that runs no case (unit tests, ``--collect-only``, grading)
nor for one that did not ask for eval cases: a plain ``pytest`` whose ini names the agent
runs the other tests and skips the eval cases with one line (docs/agents.md, "Beside your
other tests")."""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests.helpers.agents import FAKES, SAMPLES, recorded_calls

CREDENTIAL_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "CLAUDE_CONFIG_DIR",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "CODEX_HOME",
)

#: The fake claude's sample answer says it committed the staged change.
ANSWERED = "[{type: output_matches, pattern: staged}]"


class Suite:
    """Cases for the fake ``claude`` in a pytester directory, with HOME and the
    credentials of the environment under the test's control."""

    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pytester = pytester
        self.monkeypatch = monkeypatch
        self.home = pytester.path / "home"
        self.home.mkdir()
        self.record = pytester.path / "record.jsonl"
        monkeypatch.setenv("HOME", str(self.home))
        for name in CREDENTIAL_VARIABLES:
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("FAKE_AGENT_SAMPLE", str(SAMPLES / "claude-json-success.json"))
        monkeypatch.setenv("FAKE_AGENT_RECORD", str(self.record))
        self.on_path(with_fakes=True)
        pytester.makeini("[pytest]\neval_agent = claude\n")

    def on_path(self, *, with_fakes: bool) -> None:
        """PATH: the fakes or none of them, and this Python (no real agent CLI)."""
        python = os.path.dirname(sys.executable)
        self.monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{python}" if with_fakes else python)

    def cases(self, *ids: str, bare: bool = True, checks: str = ANSWERED) -> None:
        extra = "" if bare else "bare: false\n"
        for case_id in ids:
            text = f"id: {case_id}\ndefends: AGENTS.md\nprompt: do it\n{extra}checks: {checks}\n"
            (self.pytester.path / "evals").mkdir(exist_ok=True)
            (self.pytester.path / "evals" / f"{case_id}.yaml").write_text(text, "utf-8")

    def login(self) -> None:
        """A ``claude login``'s file in the default home."""
        (self.home / ".claude").mkdir()
        (self.home / ".claude" / ".credentials.json").write_text("{}", "utf-8")

    def run(self, *args: str) -> pytest.RunResult:
        return self.pytester.runpytest("-p", "no:cacheprovider", *args)

    def calls(self) -> list[list[str]]:
        """Every call of the fake CLI, ``--version`` included."""
        if not self.record.exists():
            return []
        return [json.loads(line)["argv"] for line in self.record.read_text().splitlines()]


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Suite:
    return Suite(pytester, monkeypatch)


def usage_errors(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stderr.lines if line.startswith("ERROR:")]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_missing_program_is_one_usage_error_and_no_case_runs(
    suite: Suite, workers: list[str]
) -> None:
    suite.cases("one", "two", "three")
    suite.on_path(with_fakes=False)

    result = suite.run("evals", *workers)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert usage_errors(result) == [
        "ERROR: agent 'claude': program 'claude' not found on PATH; install it with "
        "`npm install -g @anthropic-ai/claude-code`, or put it on PATH"
    ]
    result.stdout.fnmatch_lines(["*= no tests ran in *"])
    assert suite.calls() == []


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_missing_credential_is_one_usage_error_naming_variables_and_files(
    suite: Suite, workers: list[str]
) -> None:
    suite.cases("one", "two")

    result = suite.run("evals", *workers)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert usage_errors(result) == [
        "ERROR: agent 'claude' has no credentials: set ANTHROPIC_API_KEY, "
        "ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN, or log in so that "
        f"{suite.home}/.claude/.credentials.json exists ($CLAUDE_CONFIG_DIR, default ~/.claude)"
    ]
    assert suite.calls() == []


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_present_key_runs_and_the_version_is_read_once_for_the_pins(
    suite: Suite, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    suite.cases("one", "two")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "evalcases-fake-key")

    result = suite.run(*workers)

    result.assert_outcomes(passed=2)
    assert suite.calls().count(["--version"]) == 1
    assert len(recorded_calls(suite.record)) == 2
    (results,) = (suite.pytester.path / "evals" / "results").glob("*.json")
    assert json.loads(results.read_text())["pins"]["agent_version"] == "claude 0.0.0 (fake)"


def test_bare_cases_with_only_the_login_file_are_one_usage_error(suite: Suite) -> None:
    suite.login()
    suite.cases("one", "two")

    result = suite.run("evals")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert usage_errors(result) == [
        "ERROR: agent 'claude': 2 collected cases run bare (`claude --bare`), which ignores "
        "CLAUDE_CODE_OAUTH_TOKEN, "
        f"the login in {suite.home}/.claude/.credentials.json and the keychain and reads "
        "only ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN; set one, or write `bare: false` on "
        "those cases"
    ]


def test_cases_that_are_not_bare_run_with_the_login_file(suite: Suite) -> None:
    suite.login()
    suite.cases("one", "two", bare=False)

    suite.run().assert_outcomes(passed=2)


@pytest.mark.xdist
def test_plain_tests_never_check_the_agent(suite: Suite) -> None:
    suite.on_path(with_fakes=False)
    suite.pytester.makepyfile(test_unit="def test_one():\n    assert True\n")
    suite.cases("one")

    suite.run("test_unit.py").assert_outcomes(passed=1)
    suite.run("test_unit.py", "-n", "2").assert_outcomes(passed=1)
    # Cases deselected, or only quarantined ones: nothing needs the agent either.
    suite.run("-k", "test_one").assert_outcomes(passed=1, deselected=1)
    suite.cases("one", "two")
    for case in ("one", "two"):
        path = suite.pytester.path / "evals" / f"{case}.yaml"
        path.write_text(path.read_text() + "quarantine: flaky\n", "utf-8")
    suite.run("evals").assert_outcomes(skipped=2)


MISSING_PROGRAM = (
    "agent 'claude': program 'claude' not found on PATH; install it with "
    "`npm install -g @anthropic-ai/claude-code`, or put it on PATH"
)


def skipped_lines(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stdout.lines if line.startswith("eval cases skipped:")]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize("unit", ["passes", "fails"])
def test_a_plain_pytest_without_the_agent_runs_the_other_tests(
    suite: Suite, workers: list[str], unit: str
) -> None:
    # The ini names claude (as the README suggests); this teammate has no claude.
    suite.on_path(with_fakes=False)
    suite.pytester.makepyfile(
        test_unit=f"def test_one():\n    assert {unit == 'passes'}\n"
        "def test_two():\n    assert True\n"
    )
    suite.cases("one", "two", "three")

    result = suite.run(*workers)

    # The unit tests ran and decide the exit status; every eval case is skipped.
    if unit == "passes":
        result.assert_outcomes(passed=2, skipped=3)
        assert result.ret == pytest.ExitCode.OK
    else:
        result.assert_outcomes(passed=1, failed=1, skipped=3)
        assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert usage_errors(result) == []
    assert skipped_lines(result) == [
        f"eval cases skipped: {MISSING_PROGRAM} (a run that asks for eval cases, such as "
        "`pytest evals/` or `--eval-agent`, stops here with a usage error)"
    ]
    # Each skip gives the same reason (-rs).
    assert suite.run(*workers, "-rs").stdout.str().count(MISSING_PROGRAM) == 4
    assert suite.calls() == []
    assert not (suite.pytester.path / "evals" / "results").exists()


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_plain_pytest_without_credentials_skips_the_eval_cases(
    suite: Suite, workers: list[str]
) -> None:
    suite.pytester.makepyfile(test_unit="def test_one():\n    assert True\n")
    suite.cases("one", "two")

    result = suite.run(*workers)

    result.assert_outcomes(passed=1, skipped=2)
    assert result.ret == pytest.ExitCode.OK
    (line,) = skipped_lines(result)
    assert line.startswith("eval cases skipped: agent 'claude' has no credentials: set ")
    # Not even `claude --version`: the agent is not called at all.
    assert suite.calls() == []


@pytest.mark.parametrize(
    "args",
    [
        ["evals"],
        ["evals/one.yaml"],
        ["evals/one.yaml::one"],
        ["-m", "normal"],
        ["-k", "one"],
        ["--eval-agent", "claude"],
        ["--eval-defends", "AGENTS.md"],
        pytest.param(["-n", "2", "evals"], marks=pytest.mark.xdist),
    ],
    ids=" ".join,
)
def test_a_run_that_asks_for_eval_cases_is_a_usage_error(suite: Suite, args: list[str]) -> None:
    suite.on_path(with_fakes=False)
    suite.pytester.makepyfile(test_unit="def test_one():\n    assert True\n")
    suite.cases("one")

    result = suite.run(*args)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert usage_errors(result) == [f"ERROR: {MISSING_PROGRAM}"]
    assert skipped_lines(result) == []


def test_pytest_addopts_asks_for_eval_cases_the_ini_does_not(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite.on_path(with_fakes=False)
    suite.pytester.makepyfile(test_unit="def test_one():\n    assert True\n")
    suite.cases("one")
    # A team's ini (testpaths, addopts) is every teammate's plain `pytest`.
    suite.pytester.makeini("[pytest]\neval_agent = claude\ntestpaths = evals test_unit.py\n")
    suite.run().assert_outcomes(passed=1, skipped=1)

    monkeypatch.setenv("PYTEST_ADDOPTS", "--eval-agent=claude")
    assert suite.run().ret == pytest.ExitCode.USAGE_ERROR


def test_collect_only_never_checks_the_agent(suite: Suite) -> None:
    suite.on_path(with_fakes=False)
    suite.cases("one", "two")

    result = suite.run("--collect-only", "-q")

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["evals/one.yaml::one", "evals/two.yaml::two"])


def test_grading_workspaces_needs_no_agent(suite: Suite) -> None:
    suite.on_path(with_fakes=False)
    suite.cases("one", checks="[{type: file_exists, path: done.txt}]")
    graded = suite.pytester.path / "graded"
    graded.mkdir()
    (graded / "done.txt").write_text("", "utf-8")

    suite.run("--eval-workspace", str(graded)).assert_outcomes(passed=1)


@pytest.mark.parametrize(
    "flags",
    [["--setup-plan"], ["--setup-only"], ["--fixtures"], ["--fixtures-per-test"], ["--markers"]],
    ids=" ".join,
)
def test_sessions_that_run_no_case_never_check_the_agent(suite: Suite, flags: list[str]) -> None:
    """Not even ``claude --version``: the fake CLI records every start."""
    suite.login()
    suite.cases("one")

    result = suite.run(*flags)

    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert suite.calls() == []


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_machine_wide_configuration_is_said_and_pinned(
    suite: Suite, workers: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An administrator's /etc/claude-code reaches every run: the summary says so once,
    the pins record each file, and a baseline names it when it changed."""
    from dataclasses import replace

    from pytest_evalcases.agents.claude import ClaudeAgent

    etc = suite.pytester.path / "etc" / "claude-code"
    etc.mkdir(parents=True)
    policy = etc / "CLAUDE.md"
    policy.write_text("Always sign commits.\n")
    moved = replace(ClaudeAgent.requirements, machine_config=(("", str(etc)),))
    monkeypatch.setattr(ClaudeAgent, "requirements", moved)
    suite.cases("one", "two", bare=False)
    suite.login()

    first = suite.run(*workers)

    first.assert_outcomes(passed=2)
    said = [line for line in first.stdout.lines if line.startswith("machine-wide")]
    assert said == [
        f"machine-wide configuration that no case sets reaches the runs of claude: {policy} "
        '(docs/agents.md, "Machine-wide configuration")'
    ]
    (results,) = (suite.pytester.path / "evals" / "results").glob("*.json")
    pinned = json.loads(results.read_text())["pins"]["machine_config"]
    assert list(pinned) == [str(policy)]

    policy.write_text("Never sign commits.\n")
    again = suite.run(*workers, "--eval-baseline", str(results))

    again.stdout.fnmatch_lines(
        [f"WARNING: pins differ from the baseline*machine-wide configuration changed: {policy}*"]
    )


def test_no_machine_wide_configuration_says_nothing(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from pytest_evalcases.agents.claude import ClaudeAgent

    # Whatever this machine's /etc holds: a directory that is not there.
    absent = str(suite.pytester.path / "etc" / "claude-code")
    monkeypatch.setattr(
        ClaudeAgent,
        "requirements",
        replace(ClaudeAgent.requirements, machine_config=(("", absent),)),
    )
    suite.cases("one", bare=False)
    suite.login()

    result = suite.run()

    result.assert_outcomes(passed=1)
    assert not [line for line in result.stdout.lines if "machine-wide" in line]
