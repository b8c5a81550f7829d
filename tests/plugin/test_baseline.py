"""The baseline gate (docs/results.md): ``--eval-baseline FILE`` blocks on a pass-rate drop,
on a case that passed in the baseline and fails now, and on tokens or cost above 1.3x;
differing pins are a warning. ``evalcases compare`` says the same offline."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_evalcases import cli
from tests.helpers.results import steer
from tests.helpers.suite import SuiteBuilder

TEN = [f"case-{i:02d}" for i in range(10)]


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save", *args)


def save_baseline(pytester: pytest.Pytester, name: str = "base.json") -> Path:
    pytester.runpytest("-p", "no:cacheprovider", "--eval-save", name)
    path = pytester.path / name
    assert path.is_file()
    return path


def test_a_case_that_passed_in_the_baseline_and_fails_now_blocks(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
) -> None:
    # A tolerance wide enough: only the regression rule speaks for the baseline.
    root = make_suite.steered(TEN, ini="eval_baseline_tolerance = 50\n")
    base = save_baseline(pytester)
    steer(root, "fail", "case-03")

    with_baseline = run(pytester, "--eval-baseline", str(base))

    assert with_baseline.ret == 1
    out = with_baseline.stdout.str()
    assert "regressed since baseline: case-03" in out
    assert (
        "eval gate: BLOCKED (1 normal case failed: case-03; baseline: 1 case passed in the "
        "baseline and fails now: case-03)" in out
    )


def test_an_advisory_case_that_regressed_is_reported_and_never_blocks(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
) -> None:
    """Advisory cases never block, in the baseline gate as in the gate: one advisory
    regression, under the default tolerance, is listed and the run passes."""
    root = make_suite.steered(TEN, severities={"case-03": "advisory"})
    base = save_baseline(pytester)
    steer(root, "fail", "case-03")

    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-baseline", str(base), "--eval-save", "b.json"
    )

    out = result.stdout.str()
    assert result.ret == 0, out
    assert (
        "baseline base.json: pass rate (critical and normal) 100.0% -> 100.0%; 0 regressed, "
        "0 improved, 1 advisory regressed" in out
    )
    assert "  regressed since baseline (advisory, does not block): case-03" in out
    assert "eval gate: PASS" in out
    doc = json.loads((root / "b.json").read_text("utf-8"))
    assert (doc["verdict"], doc["baseline"]["blocked"]) == ("PASS", False)
    assert (doc["baseline"]["regressed"], doc["baseline"]["advisory_regressed"]) == (
        [],
        ["case-03"],
    )


@pytest.mark.slow
def test_a_pass_rate_drop_beyond_the_tolerance_blocks(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(TEN)
    base = save_baseline(pytester)
    # A new case that fails: no case regressed, the pass rate fell to 10/11.
    newcomer = root / "evals" / "newcomer.yaml"
    newcomer.write_text(
        (root / "evals" / "case-00.yaml").read_text("utf-8").replace("case-00", "newcomer"),
        "utf-8",
    )
    steer(root, "fail", "newcomer")

    blocked = run(pytester, "--eval-baseline", str(base))
    tolerant = run(pytester, "--eval-baseline", str(base), "-o", "eval_baseline_tolerance=10")
    newcomer.write_text(
        newcomer.read_text("utf-8").replace("severity: normal", "severity: advisory"), "utf-8"
    )
    advisory = run(pytester, "--eval-baseline", str(base), "-o", "eval_baseline_tolerance=0")

    assert blocked.ret == 1
    blocked.stdout.fnmatch_lines(
        [
            "eval gate: BLOCKED (1 normal case failed: newcomer; baseline: pass rate (critical "
            "and normal) 90.9% dropped more than 3 points*100.0%*"
        ]
    )
    assert "regressed since baseline" not in blocked.stdout.str()
    assert tolerant.ret == 1
    assert "eval gate: BLOCKED (1 normal case failed: newcomer)" in tolerant.stdout.str()
    # An advisory newcomer counts in neither pass rate.
    assert advisory.ret == 0, advisory.stdout.str()
    assert "pass rate (critical and normal) 100.0% -> 100.0%" in advisory.stdout.str()
    assert "eval gate: PASS" in advisory.stdout.str()


def test_tokens_and_cost_above_1_3x_block_and_differing_pins_warn(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
) -> None:
    state = fake_claude(tokens=1000, cost=0.10, model="m-1", version="1.0")
    make_suite.steered(["alpha", "beta"], agent="claude")
    base = save_baseline(pytester)

    def steer_claude(**values: object) -> None:
        state.write_text(json.dumps(values), "utf-8")

    steer_claude(tokens=1200, cost=0.12, model="m-2", version="1.1")
    drifted = run(pytester, "--eval-baseline", str(base))
    steer_claude(tokens=2000, cost=0.10, model="m-1", version="1.0")
    tokens = run(pytester, "--eval-baseline", str(base))
    steer_claude(tokens=1000, cost=0.50, model="m-1", version="1.0")
    cost = run(pytester, "--eval-baseline", str(base))

    assert drifted.ret == 0, drifted.stdout.str()
    warning = [line for line in drifted.stdout.lines if line.startswith("WARNING: pins differ")]
    assert len(warning) == 1
    assert "agent version 1.0 -> 1.1" in warning[0]
    assert "model m-1 -> m-2" in warning[0]
    assert "eval gate: PASS" in drifted.stdout.str()

    assert tokens.ret == 1
    assert "mean tokens per run 2,100 exceeds 1.3x the baseline's 1,100" in tokens.stdout.str()
    assert "WARNING: pins differ" not in tokens.stdout.str()
    assert cost.ret == 1
    assert "mean cost per run $0.5000 exceeds 1.3x the baseline's $0.1000" in cost.stdout.str()


def test_changed_case_files_are_a_warning_and_a_changed_configuration_information(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(["alpha"])
    base = save_baseline(pytester)
    (root / "AGENTS.md").write_text("Answer with ok, always.\n", "utf-8")
    case = root / "evals" / "alpha.yaml"
    case.write_text(case.read_text("utf-8") + "description: edited\n", "utf-8")

    result = run(pytester, "--eval-baseline", str(base))

    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "pins changed as expected with the configuration: configuration fingerprint*"
            "(AGENTS.md)",
            "WARNING: pins differ from the baseline, results may not be comparable: "
            "case files changed: evals/alpha.yaml",
        ]
    )


def test_the_results_file_records_the_baseline_verdict(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(TEN)
    base = save_baseline(pytester)
    steer(root, "fail", "case-01")

    pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-baseline", str(base), "--eval-save", "b.json"
    )

    doc = json.loads((root / "b.json").read_text("utf-8"))
    assert doc["verdict"] == "BLOCKED"
    assert doc["verdict_reason"].startswith("1 normal case failed: case-01; baseline: ")
    assert doc["baseline"]["regressed"] == ["case-01"]
    assert doc["baseline"]["blocked"] is True


def test_an_unreadable_baseline_is_a_usage_error(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite.steered(["alpha"])
    (pytester.path / "broken.json").write_text("{not json", "utf-8")

    missing = run(pytester, "--eval-baseline", "nowhere.json")
    broken = run(pytester, "--eval-baseline", "broken.json")

    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    assert "--eval-baseline" in missing.stderr.str()
    assert "nowhere.json" in missing.stderr.str()
    assert broken.ret == pytest.ExitCode.USAGE_ERROR
    assert "broken.json:1: not a results file: invalid JSON" in broken.stderr.str()
    assert "Traceback" not in broken.stderr.str()


def test_compare_prints_the_table_and_fails_when_b_is_blocked(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_suite.steered(["alpha", "beta", "gamma"])
    a = save_baseline(pytester, "a.json")
    steer(root, "fail", "beta")
    b = save_baseline(pytester, "b.json")
    capsys.readouterr()

    blocked = cli.main(["compare", str(a), str(b)])
    out = capsys.readouterr().out
    same = cli.main(["compare", str(a), str(a)])
    same_out = capsys.readouterr().out
    improved = cli.main(["compare", str(b), str(a)])
    improved_out = capsys.readouterr().out

    assert blocked == 1
    row = next(line for line in out.splitlines() if line.startswith("beta"))
    assert row.split() == ["beta", "passed", "failed", "regressed"]
    assert "alpha" not in out.split("pass rate")[0].split("change", 1)[1]
    assert "pass rate (critical and normal)  100.0%  66.7%" in out
    assert "B would be BLOCKED against A:" in out
    assert same == 0
    assert "every one of 3 cases has the same outcome" in same_out
    assert "B passes the baseline gate against A" in same_out
    assert improved == 0
    assert "improved" in improved_out


def test_compare_names_a_file_that_is_not_a_results_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"tests": []}', "utf-8")

    status = cli.main(["compare", str(other), str(other)])

    assert status == 2
    assert f"{other}: not a results file: no `cases` list" in capsys.readouterr().err


def test_compare_refuses_a_negative_tolerance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["compare", "a.json", "b.json", "--tolerance", "-5"])
    assert exit_info.value.code == 2
    assert "expected a number of points >= 0, got '-5'" in capsys.readouterr().err
