"""Under pytest-xdist: workers run the items, the controller merges and prints one summary."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "example_cases"


def test_drift_demo_under_two_workers(pytester: pytest.Pytester) -> None:
    shutil.copytree(EXAMPLES / "drift-demo", pytester.path / "drift-demo")

    result = pytester.runpytest("drift-demo", "-n", "2", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=3, failed=3)
    out = result.stdout.str()
    assert out.count("= eval gate =") == 1
    assert "Score: 9/9 (100%)" in out
    assert "Score: 5/9 (56%)" in out
    assert "regressed: 01-service-architecture / service-uses-class" in out
    assert result.ret == 1


def test_live_runs_errors_and_broken_files_under_two_workers(pytester: pytest.Pytester) -> None:
    (pytester.path / "agent.py").write_text(
        textwrap.dedent(
            """
            import os, sys
            if "fail hard" in sys.argv[1]:
                sys.exit("agent crashed: out of memory")
            print(os.environ["EVALCASES_CASE_ID"], "in", os.getcwd())
            """
        )
    )
    pytester.makeini("[pytest]\neval_agent_command = {python} {rootdir}/agent.py {prompt}\n")
    evals = pytester.path / "evals"
    evals.mkdir()
    for i in range(6):
        (evals / f"case-{i}.yaml").write_text(
            f"id: case-{i}\ndefends: AGENTS.md\nprompt: go\n"
            f"checks: [{{type: output_matches, pattern: '^case-{i} in '}}]\n"
        )
    (evals / "crash.yaml").write_text(
        "id: crash\ndefends: AGENTS.md\nprompt: fail hard\n"
        "checks: [{type: output_matches, pattern: x}]\n"
    )
    (evals / "broken.yaml").write_text("id: broken\ndefends: AGENTS.md\nchecks: []\n")

    result = pytester.runpytest("-n", "2", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=6, errors=2)
    out = result.stdout.str()
    assert out.count("= eval gate =") == 1
    assert "suite: 6/7 cases passed · Score: 6/6 (100%) · 1 error · normal 6/7" in out
    assert "agent crashed: out of memory" in out
    assert "evals/broken.yaml:3: checks:" in out
    assert "eval gate: INCONCLUSIVE (1 case errored: crash; 1 case file could not be loaded)" in out
    assert result.ret == 2
