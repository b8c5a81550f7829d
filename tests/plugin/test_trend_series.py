"""``evalcases trend`` over real runs (docs/results.md, "evalcases trend"): a series per
variant, agent and model; a configuration change marked on its line, the outcome
changes it brought not counted as flaky; figures side by side that agree."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_evalcases import cli
from tests.helpers.results import results_files, steer
from tests.helpers.suite import SuiteBuilder


def rows(block: str) -> list[list[str]]:
    """The runs of a series' table (the lines starting with a date) and its markers."""
    return [
        re.split(r"\s{2,}", line) for line in block.splitlines() if line.startswith(("20", "-- "))
    ]


@pytest.mark.slow
def test_a_configuration_change_is_marked_and_not_flaky_and_agents_are_apart(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    fake_claude: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_claude()
    root = make_suite.steered(["alpha", "beta", "gamma"])

    def run(*args: str) -> None:
        pytester.runpytest("-p", "no:cacheprovider", *args)

    steer(root, "crash", "gamma")
    run()  # 1: alpha, beta pass; gamma errors
    (root / "crash" / "gamma").unlink()
    # 2: a deliberate change of AGENTS.md, and beta fails from then on.
    (root / "AGENTS.md").write_text("Answer tersely.\n", "utf-8")
    steer(root, "fail", "beta")
    run()
    run()  # 3: beta fails again
    (root / "fail" / "beta").unlink()
    run()  # 4: beta passes under the same configuration: a flip
    run("--eval-agent", "claude")  # another agent: a series of its own
    assert len(results_files(root)) == 5
    capsys.readouterr()

    status = cli.main(["trend", str(root / "evals" / "results")])
    out = capsys.readouterr().out

    assert status == 0, out
    assert (
        "passed: the cases that passed of those graded (passed or failed, advisory included);\n"
        "pass rate: the same share; errors: cases with no verdict, counted apart\n"
    ) in out
    command, claude = out.split("\nseries: ")[1:3]
    assert command.startswith("agent command · model not reported (4 runs)\n")
    assert [row[1:] for row in rows(command)] == [
        ["2/2", "100.0%", "1", "INCONCLUSIVE", "whole"],
        [],
        ["2/3", "66.7%", "0", "BLOCKED", "whole"],
        ["2/3", "66.7%", "0", "BLOCKED", "whole"],
        ["3/3", "100.0%", "0", "PASS", "whole"],
    ]
    assert "\n-- configuration changed: AGENTS.md\n" in command
    assert claude.startswith("agent claude · model claude-test-1 (1 run)\n")
    assert [row[1:] for row in rows(claude)] == [["3/3", "100.0%", "0", "PASS", "whole"]]
    flaky = out.split("flaky cases (outcome changed between runs under the same configuration):\n")
    table = flaky[1].split("\n\n")[0].splitlines()
    # beta: passed, failed (with the change), failed, passed: one flip of two pairs.
    assert [line.split() for line in table[2:]] == [
        ["beta", "(agent", "command", "·", "model", "not", "reported)", "2/4", "1", "50.0%"]
    ]
    assert (
        "outcome changed with the configuration (not counted as flaky):\n"
        "  beta (agent command · model not reported): 1 time\n"
    ) in out
