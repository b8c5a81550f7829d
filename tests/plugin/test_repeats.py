"""Repeats (docs/variants.md, "Repeats and Wilson intervals"): ``--eval-repeat N`` makes
N items per case; the verdict is the pass rate against ``min_pass_rate`` with a 95%
Wilson interval, and the exit status follows the verdicts, not the raw repetition outcomes.

The scripted agent is flaky on purpose and deterministically so: each run claims the
next number for its case (an exclusively created file, safe across xdist workers) and
fails or errors on the numbers its prompt lists ("fail at 0,3,6", "error at 1").
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers.suite import SuiteBuilder

AGENT = textwrap.dedent(
    """
    import os, re, sys
    from pathlib import Path
    prompt = sys.argv[1]
    counts = Path(__file__).parent / "counts"
    counts.mkdir(exist_ok=True)
    key = os.environ["EVALCASES_VARIANT"] + "--" + os.environ["EVALCASES_CASE_ID"]
    n = 0
    while True:
        try:
            os.close(os.open(counts / f"{key}-{n}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            break
        except FileExistsError:
            n += 1
    def listed(word):
        m = re.search(word + r" at ([0-9,]+)", prompt)
        return {int(x) for x in m.group(1).split(",")} if m else set()
    if n in listed("error"):
        sys.exit("agent crashed: rate limited")
    print("bad" if n in listed("fail") else "ok")
    """
)


def repeat_cases(**cases: tuple[str, float]) -> dict[str, str]:
    """One case per keyword: ``id=(prompt, min_pass_rate)``; a run passes on "ok"."""
    return {
        case_id: f"id: {case_id}\ndefends: AGENTS.md\nprompt: '{prompt}'\nmin_pass_rate: {rate}\n"
        "checks:\n  - type: output_matches\n    pattern: '^ok$'\n"
        for case_id, (prompt, rate) in cases.items()
    }


Repeated = Callable[..., tuple[pytest.RunResult, str]]


@pytest.fixture
def run_repeated(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> Repeated:
    """``run_repeated(n, cases, *args)``: the suite of :data:`AGENT` and ``cases`` run with
    ``--eval-repeat n``; the result and its output."""

    def run(repeat: int, cases: dict[str, str], *args: str) -> tuple[pytest.RunResult, str]:
        make_suite(AGENT, cases)
        result = pytester.runpytest("--eval-repeat", str(repeat), *args)
        return result, result.stdout.str()

    return run


def saved_cases(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    """The case verdicts of the one variant in the one results file the run saved."""
    (saved,) = (pytester.path / "evals/results").glob("*.json")
    (variant,) = json.loads(saved.read_text())["variants"]
    cases: list[dict[str, Any]] = variant["cases"]
    return cases


def test_failed_repetitions_of_a_passing_case_do_not_fail_the_run(
    run_repeated: Repeated,
) -> None:
    result, out = run_repeated(10, repeat_cases(flaky=("work; fail at 0,3,6", 0.7)), "-v")

    result.assert_outcomes(passed=7, failed=3)
    # 7/10: Wilson 95% interval 0.397-0.892.
    assert "  flaky: 7/10 runs passed (70%, 95% CI 40%–89%; needs 70%)" in out
    assert "eval gate: PASS" in out
    assert result.ret == 0
    for rep in range(10):
        result.stdout.fnmatch_lines([f"*evals/flaky.yaml::flaky[[]r{rep}[]]*"])


def test_a_case_below_its_min_pass_rate_blocks(
    run_repeated: Repeated, pytester: pytest.Pytester
) -> None:
    cases = repeat_cases(flaky=("work; fail at 0,3,6", 0.8), steady=("work", 1.0))

    result, out = run_repeated(10, cases)

    result.assert_outcomes(passed=17, failed=3)
    assert "  flaky: 7/10 runs passed (70%, 95% CI 40%–89%; needs 80%)" in out
    assert "  steady: 10/10 runs passed (100%, 95% CI 72%–100%; needs 100%)" in out
    assert "eval gate: BLOCKED (1 normal case failed: flaky)" in out
    assert result.ret == 1
    # The results file carries the same evidence, per variant and case.
    verdicts = {c["id"]: c for c in saved_cases(pytester)}
    assert verdicts["flaky"] == {
        "id": "flaky",
        "outcome": "failed",
        "runs": 10,
        "graded": 10,
        "passes": 7,
        "errors": 0,
        "pass_rate": 0.7,
        "ci95": [0.3968, 0.8922],
        "min_pass_rate": 0.8,
    }
    assert (verdicts["steady"]["outcome"], verdicts["steady"]["ci95"]) == ("passed", [0.7225, 1.0])


def test_errored_repetitions_are_left_out_of_the_rate_and_reported(
    run_repeated: Repeated, pytester: pytest.Pytester
) -> None:
    result, out = run_repeated(5, repeat_cases(shaky=("work; fail at 0; error at 1,2", 0.6)))

    result.assert_outcomes(passed=2, failed=1, errors=2)
    assert "  shaky: 2/3 runs passed (67%, 95% CI 21%–94%; needs 60%), 2 errored runs" in out
    (verdict,) = saved_cases(pytester)
    assert (verdict["runs"], verdict["graded"], verdict["passes"], verdict["errors"]) == (
        5,
        3,
        2,
        2,
    )
    assert "agent crashed: rate limited" in out
    assert "eval gate: PASS" in out
    assert result.ret == 0


def test_a_case_whose_repetitions_all_errored_is_an_error(run_repeated: Repeated) -> None:
    result, out = run_repeated(
        3, repeat_cases(down=("work; error at 0,1,2", 1.0), fine=("work", 1.0))
    )

    result.assert_outcomes(passed=3, errors=3)
    assert "eval gate: INCONCLUSIVE (1 case errored: down)" in out
    assert result.ret == 2


@pytest.mark.parametrize("where", ["call", "teardown"])
def test_a_failing_normal_test_still_fails_the_run(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, where: str
) -> None:
    make_suite(AGENT, repeat_cases(flaky=("work; fail at 0", 0.5)))
    if where == "call":
        pytester.makepyfile(test_plain="def test_plain():\n    assert 1 == 2\n")
    else:
        pytester.makepyfile(
            test_plain="""
            import pytest

            @pytest.fixture
            def broken():
                yield
                raise RuntimeError("teardown broke")

            def test_plain(broken):
                pass
            """
        )

    result = pytester.runpytest("--eval-repeat", "2", "evals", "test_plain.py")

    assert "eval gate: PASS" in result.stdout.str()
    assert result.ret == 1


def test_a_collection_error_still_fails_the_run(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite(AGENT, repeat_cases(flaky=("work; fail at 0", 0.5)))
    pytester.makepyfile(test_plain="import no_such_module_anywhere\n")

    result = pytester.runpytest(
        "--eval-repeat", "2", "--continue-on-collection-errors", "evals", "test_plain.py"
    )

    assert "eval gate: PASS" in result.stdout.str()
    assert result.ret == 1


def test_repeats_combine_with_variants(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> None:
    make_suite(AGENT, repeat_cases(flaky=("work; fail at 1", 0.5)))
    for name in ("main", "pr"):
        (pytester.path / name).mkdir()
        (pytester.path / name / "AGENTS.md").write_text(name)

    result = pytester.runpytest(
        "--eval-repeat", "3", "--eval-config", "main=main", "--eval-config", "pr=pr", "-v"
    )

    # Each variant counts its own runs: run 1 of each fails.
    result.assert_outcomes(passed=4, failed=2)
    out = result.stdout.str()
    for name in ("main", "pr"):
        for rep in range(3):
            result.stdout.fnmatch_lines([f"*flaky[[]{name}-r{rep}[]]*"])
        assert f"{name}: 1/1 cases passed" in out
    assert out.count("  flaky: 2/3 runs passed (67%, 95% CI 21%–94%; needs 50%)") == 2
    assert "pr vs main (config): 0 checks regressed, 0 improved" in out
    assert result.ret == 0


@pytest.mark.slow
def test_many_repeated_cases_list_the_worst_and_count_the_rest(
    run_repeated: Repeated, pytester: pytest.Pytester
) -> None:
    cases = {f"steady-{i:02}": ("work", 1.0) for i in range(11)}
    result, out = run_repeated(2, repeat_cases(flaky=("work; fail at 0", 1.0), **cases))

    result.assert_outcomes(passed=23, failed=1)
    section = out.split("eval gate")[1]
    # The failed case first, then nine of the steady ones; the other two counted.
    assert "  flaky: 1/2 runs passed (50%, 95% CI 9%–91%; needs 100%)" in section
    assert section.count("runs passed (100%") == 9
    assert "  … 2 more cases: 2 passed every run (pytest -v lists every case)" in section
    # -v lists every case (the flaky one passes both runs now: its run 0 is done).
    verbose = pytester.runpytest("--eval-repeat", "2", "-v").stdout.str().split("eval gate")[1]
    assert all(f"  {case_id}: 2/2 runs passed" in verbose for case_id in ["flaky", *cases])
    assert "more case" not in verbose


def test_repeat_must_be_a_positive_whole_number(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--eval-repeat", "0")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "expected a whole number >= 1, got '0'" in result.stderr.str()
