"""Sessions that show what would run never run it (docs/agents.md, "Sessions that run no
case"): ``--collect-only``, ``--setup-plan``, ``--setup-only``, ``--fixtures``,
``--fixtures-per-test`` and ``--markers`` start no agent, no ``setup`` command and no
check, and write no results file and no gate."""

from __future__ import annotations

import pytest

from tests.helpers.suite import SuiteBuilder

#: The command agent: records its start in starts.log in the rootdir, then answers.
RECORDING_AGENT = """
import pathlib, sys
root = pathlib.Path(sys.argv[1])
with open(root / "starts.log", "a") as log:
    log.write("agent\\n")
print("done")
"""

DRY_RUNS = [
    ["--collect-only"],
    ["--setup-plan"],
    ["--setup-only"],
    ["--fixtures"],
    ["--fixtures-per-test"],
    ["--markers"],
    pytest.param(["--setup-plan", "-n", "2"], marks=pytest.mark.xdist),
]


def _suite(make_suite: SuiteBuilder) -> None:
    root = make_suite.root
    log = root / "starts.log"
    make_suite(
        RECORDING_AGENT,
        {
            "records": f"""
            id: records
            defends: AGENTS.md
            prompt: do it
            setup: echo setup >> {log}
            checks:
              - type: output_matches
                pattern: done
              - type: command_succeeds
                command: echo check >> {log}
            """,
            "parked": """
            id: parked
            defends: AGENTS.md
            prompt: do it
            quarantine: flaky
            checks: [{type: output_matches, pattern: done}]
            """,
        },
        fixtures={"AGENTS.md": "Do it.\n", "graded/.evalcases/output.txt": "done\n"},
        command="{python} {rootdir}/agent.py {rootdir} {prompt}",
        ini="eval_agent = command\neval_timeout = 60\n",
    )


@pytest.mark.parametrize("flags", DRY_RUNS, ids=" ".join)
def test_sessions_that_show_what_would_run_run_nothing(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, flags: list[str]
) -> None:
    _suite(make_suite)

    result = pytester.runpytest("-p", "no:cacheprovider", *flags)

    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert not (pytester.path / "starts.log").exists(), (pytester.path / "starts.log").read_text()
    assert not (pytester.path / "evals" / "results").exists()
    assert "eval gate" not in result.stdout.str()


@pytest.mark.parametrize("flags", [["--setup-plan"], ["--setup-only"]], ids=" ".join)
def test_graded_directories_are_not_checked_either(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, flags: list[str]
) -> None:
    _suite(make_suite)

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-workspace", "graded", *flags)

    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert not (pytester.path / "starts.log").exists()
    assert not (pytester.path / "evals" / "results").exists()


def test_a_graded_directory_runs_its_command_check_when_it_runs(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    _suite(make_suite)

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-workspace", "graded")

    result.assert_outcomes(passed=1, skipped=1)

    assert (pytester.path / "starts.log").read_text().split() == ["check"]


def test_the_same_suite_records_every_start_when_it_runs(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    """The recording above is real: a run writes each start."""
    _suite(make_suite)

    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1, skipped=1)

    assert (pytester.path / "starts.log").read_text().split() == ["setup", "agent", "check"]
