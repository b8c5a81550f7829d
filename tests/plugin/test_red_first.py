"""``--eval-red-first``: a new case must fail against the current configuration."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

AGENT = "print('Committed as: fix(auth): expiry off-by-one')"


def suite(pytester: pytest.Pytester) -> None:
    agent = pytester.path / "agent.py"
    agent.write_text(AGENT + "\n")
    pytester.makeini(
        textwrap.dedent(
            f"""\
            [pytest]
            eval_agent_command = {sys.executable} {agent}
            eval_sandbox_ro = {pytester.path}
            """
        )
    )
    pytester.makefile(
        ".yaml",
        **{
            "evals/cases": textwrap.dedent(
                """\
                cases:
                  - id: red-case
                    defends: AGENTS.md
                    prompt: Commit it.
                    checks:
                      - type: output_not_matches
                        pattern: "fix\\\\(auth\\\\)"
                  - id: green-case
                    defends: AGENTS.md
                    prompt: Commit that.
                    checks:
                      - type: output_not_matches
                        pattern: "(?i)co-authored-by"
                  - id: green-advisory
                    defends: AGENTS.md
                    severity: advisory
                    prompt: Commit this.
                    checks:
                      - type: output_matches
                        pattern: Committed
                  - id: broken-setup
                    defends: AGENTS.md
                    setup: exit 3
                    prompt: Commit those.
                    checks:
                      - type: output_not_matches
                        pattern: x
                """
            )
        },
    )


def test_red_first_inverts_pass_and_fail_and_keeps_errors(pytester: pytest.Pytester) -> None:
    suite(pytester)

    result = pytester.runpytest("--eval-red-first", "-p", "no:cacheprovider", "-rA")

    out = result.stdout.str()
    result.assert_outcomes(passed=1, failed=2, errors=1)
    assert "passes on first write: it tests nothing" in out
    assert "PASSED evals/cases.yaml::red-case" in out
    assert "FAILED evals/cases.yaml::green-case" in out
    assert "FAILED evals/cases.yaml::green-advisory" in out
    assert "ERROR evals/cases.yaml::broken-setup" in out
    assert "eval red-first" in out
    assert "1 case red, as they should be; 2 pass on first write" in out
    assert "  passes on first write: green-advisory" in out
    assert "eval gate: BLOCKED" in out
    assert result.ret == 1


def test_without_the_flag_outcomes_are_ordinary(pytester: pytest.Pytester) -> None:
    suite(pytester)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=2, failed=1, errors=1)
    assert "eval red-first" not in result.stdout.str()


def test_all_red_is_a_pass(pytester: pytest.Pytester) -> None:
    suite(pytester)

    result = pytester.runpytest("--eval-red-first", "-p", "no:cacheprovider", "-k", "red-case")

    result.assert_outcomes(passed=1)
    assert "1 case red, as they should be; 0 pass on first write" in result.stdout.str()
    assert "eval gate: PASS" in result.stdout.str()
    assert result.ret == 0


@pytest.mark.slow
def test_red_first_results_are_marked_and_left_out_of_the_trend(
    pytester: pytest.Pytester,
) -> None:
    suite(pytester)
    results = pytester.path / "evals" / "results"

    pytester.runpytest("--eval-red-first")
    pytester.runpytest()

    docs = [json.loads(p.read_text()) for p in sorted(results.glob("*.json"))]
    assert sorted(d["mode"] for d in docs) == ["red-first", "run"]
    trend = pytester.run(sys.executable, "-m", "pytest_evalcases.cli.main", "trend", str(results))
    trend.stdout.fnmatch_lines(["last 1 of 1 runs"])


def test_the_gate_names_the_cases_that_pass_on_first_write(pytester: pytest.Pytester) -> None:
    suite(pytester)

    result = pytester.runpytest("--eval-red-first", "-p", "no:cacheprovider", "--eval-no-save")

    out = result.stdout.str()
    assert (
        "eval gate: BLOCKED (1 normal case passes on first write (it tests nothing): "
        "green-case)" in out
    )
    assert "case failed" not in out


def test_a_red_first_run_is_not_compared_with_a_baseline(pytester: pytest.Pytester) -> None:
    suite(pytester)
    pytester.runpytest("-p", "no:cacheprovider", "--eval-save", "base.json")

    result = pytester.runpytest(
        "--eval-red-first",
        "-p",
        "no:cacheprovider",
        "--eval-baseline",
        "base.json",
        "--eval-save",
        "red.json",
    )

    out = result.stdout.str()
    assert "baseline base.json: not compared with a red-first run" in out
    assert "regressed since baseline" not in out
    assert "baseline" not in json.loads((pytester.path / "red.json").read_text())
