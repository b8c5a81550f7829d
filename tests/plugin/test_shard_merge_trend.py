"""``--eval-shard K/N`` with ``evalcases merge``, and ``evalcases trend``, on results
files written by real runs."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases import cli
from pytest_evalcases.results import writer as resultsfile
from pytest_evalcases.results.metrics import compute_metrics
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.session import shard
from tests.helpers.agents import FAKES, SAMPLES, fake_credentials
from tests.helpers.results import document, rec, results_files, steer
from tests.helpers.suite import SuiteBuilder

CASES = [f"case-{i:02d}" for i in range(12)]
SKILL_SAMPLE = Path(__file__).parent / "samples" / "claude-stream-skill.jsonl"


def load(path: Path) -> dict[str, object]:
    doc: dict[str, object] = json.loads(path.read_text("utf-8"))
    return doc


def case_ids(doc: dict[str, object]) -> list[str]:
    return [c["id"] for c in doc["cases"]]  # type: ignore[attr-defined,index]


@pytest.mark.slow
@pytest.mark.parametrize("total", [2, 3, 5])
def test_shards_cover_every_case_exactly_once(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, total: int
) -> None:
    root = make_suite.steered(CASES)
    pytester.makepyfile(test_unit="def test_plain():\n    assert True\n")

    seen: list[str] = []
    for k in range(1, total + 1):
        result = pytester.runpytest(
            "-p", "no:cacheprovider", f"--eval-shard={k}/{total}", "--eval-save", f"s{k}.json"
        )
        mine = [c for c in CASES if shard.shard_of(c, total) == k]
        # Normal tests are not sharded; the other shards' cases are deselected.
        result.assert_outcomes(passed=len(mine) + 1, deselected=len(CASES) - len(mine))
        path = root / f"s{k}.json"
        if mine:
            assert sorted(case_ids(load(path))) == mine
            assert load(path)["shard"] == f"{k}/{total}"
        seen += mine

    assert sorted(seen) == CASES


def test_every_variant_and_repetition_of_a_case_share_a_shard(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
) -> None:
    make_suite.steered(CASES[:6])

    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-shard=1/2", "--eval-repeat=3", "--collect-only", "-q"
    )

    names = [line.split("::")[1] for line in result.stdout.lines if "::" in line]
    expected = [c for c in CASES[:6] if shard.shard_of(c, 2) == 1]
    assert sorted({n.split("[")[0] for n in names}) == expected
    assert len(names) == 3 * len(expected)


def test_shards_are_balanced_by_the_durations_of_the_newest_results_file(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    ids = CASES[:6]
    # The hash split of these six puts other cases beside case-03: the balanced one
    # must not (case-03 takes longer than the other five together).
    assert [c for c in ids if shard.shard_of(c, 2) == shard.shard_of("case-03", 2)] != ["case-03"]
    root = make_suite.steered(ids)
    steer(root, "slow", "case-03", "1.5")
    full = pytester.runpytest("-p", "no:cacheprovider")
    full.assert_outcomes(passed=6)
    (root / "slow" / "case-03").unlink()

    shards = []
    for k in (1, 2):
        result = pytester.runpytest(
            "-p", "no:cacheprovider", f"--eval-shard={k}/2", "--collect-only", "-q"
        )
        shards.append(sorted(line.split("::")[1] for line in result.outlines if "::" in line))
    # The longest case first, to shard 1; every other case to the shard with less time.
    assert shards == [["case-03"], [c for c in ids if c != "case-03"]]


def test_a_bad_shard_is_a_usage_error(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> None:
    make_suite.steered(["alpha"])
    for bad in ("0/3", "4/3", "1-3", "x/y"):
        result = pytester.runpytest("-p", "no:cacheprovider", f"--eval-shard={bad}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert f"got {bad!r}" in result.stderr.str()


@pytest.mark.slow
def test_merging_shards_gives_the_unsharded_verdict(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_suite.steered(CASES, severities={"case-04": "critical"})
    steer(root, "fail", "case-04")
    steer(root, "crash", "case-07")
    pytester.runpytest("-p", "no:cacheprovider", "--eval-save", "whole.json")
    for k in (1, 2, 3):
        pytester.runpytest(
            "-p", "no:cacheprovider", f"--eval-shard={k}/3", "--eval-save", f"s{k}.json"
        )
    capsys.readouterr()

    status = cli.main(
        [
            "merge",
            str(root / "s1.json"),
            str(root / "s2.json"),
            str(root / "s3.json"),
            "-o",
            str(root / "merged.json"),
        ]
    )
    err = capsys.readouterr().err

    whole, merged = load(root / "whole.json"), load(root / "merged.json")
    assert status == 1
    assert sorted(case_ids(merged)) == CASES
    for key in ("passed", "failed", "errors", "total", "pass_rate", "verdict", "verdict_reason"):
        assert merged[key] == whole[key], key
    assert merged["verdict"] == "BLOCKED"
    assert merged["complete"] is True
    assert sorted(merged["pins"]["case_files"]) == sorted(whole["pins"]["case_files"])  # type: ignore[index]
    assert "merged 3 files: 10/12 cases passed, eval gate: BLOCKED" in err
    # The metrics of all the shards' runs together, as the unsharded run's but for its
    # own wall times: computed again from the runs, not added up from the files'.
    runs = [RunRecord.from_dict(c) for c in merged["cases"]]  # type: ignore[union-attr]
    assert merged["metrics"] == compute_metrics(runs, [""]).to_dict()
    counted = ("runs", "graded", "passed", "failures_by_mode", "errors_by_kind")
    (mine,), (theirs,) = merged["metrics"]["variants"], whole["metrics"]["variants"]  # type: ignore[index]
    assert {k: mine[k] for k in counted} == {k: theirs[k] for k in counted}
    assert mine["errors_by_kind"] == {"crash": 1}


def test_merging_with_a_shard_missing_is_incomplete(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_suite.steered(CASES)
    for k in (1, 2):
        pytester.runpytest(
            "-p", "no:cacheprovider", f"--eval-shard={k}/3", "--eval-save", f"s{k}.json"
        )
    capsys.readouterr()

    status = cli.main(["merge", str(root / "s1.json"), str(root / "s2.json")])
    captured = capsys.readouterr()

    merged = json.loads(captured.out)
    assert status == 0
    assert merged["complete"] is False
    assert merged["incomplete_reasons"] == ["shards not merged: 3/3"]
    assert "warning: shards not merged: 3/3" in captured.err


@pytest.mark.slow
def test_trend_over_real_runs(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
) -> None:
    state = fake_claude()
    root = make_suite.steered(
        ["steady", "flaky", "broken"],
        agent="claude",
        severities={"broken": "advisory", "flaky": "advisory"},
    )
    plan = [
        {"fail": ["broken"], "tokens": 100},
        {"fail": ["broken", "flaky"], "tokens": 100},
        {"fail": ["broken"], "tokens": 100},
        {"fail": ["broken", "flaky"], "tokens": 5000},
    ]
    for step in plan:
        state.write_text(json.dumps(step), "utf-8")
        pytester.runpytest("-p", "no:cacheprovider")
    assert len(results_files(root)) == 4
    capsys.readouterr()

    status = cli.main(["trend", str(root / "evals" / "results")])
    out = capsys.readouterr().out
    last_two = cli.main(["trend", str(root / "evals" / "results"), "--last", "2"])
    out_two = capsys.readouterr().out

    assert status == 0
    assert out.startswith("last 4 of 4 runs")
    rates = [line.split()[1:3] for line in out.splitlines() if line.startswith("20")]
    assert rates == [["2/3", "66.7%"], ["1/3", "33.3%"], ["2/3", "66.7%"], ["1/3", "33.3%"]]
    flaky = next(line for line in out.splitlines() if line.startswith("flaky  "))
    assert flaky.split() == ["flaky", "2/4", "3", "100.0%"]
    calibration = out.split("calibration")[1].split("wall time")[0]
    saturated, failing = calibration.split("always failed")
    assert "steady" in saturated
    assert "broken" not in saturated
    assert "broken" in failing
    assert "steady" not in failing
    assert "wall time per run (seconds):" in out
    wall = out.split("wall time per run (seconds):")[1].split("\n\n")[0].splitlines()
    time_rows = {line.split()[0]: line.split()[1] for line in wall if line.strip()}
    assert time_rows["passed"] == "6"
    assert time_rows["failed"] == "6"
    assert "runaway runs" in out
    runaways = out.split("runaway runs")[1].splitlines()[1:]
    # Every case used 5,100 tokens in the last run against 200 before it.
    assert {line.split()[0] for line in runaways} == {"steady", "flaky", "broken"}
    assert all("tokens 5,100 vs 200" in line for line in runaways)
    assert "steady  1,425 ± 2,450" in out
    assert last_two == 0
    assert out_two.startswith("last 2 of 4 runs")


def test_trend_reads_the_results_directory_pytest_writes_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without DIR: eval_results_dir of the pytest configuration, from a subdirectory too.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\neval_results_dir = "agent-results"\n'
    )
    started = datetime(2026, 12, 1, 9, 30, tzinfo=timezone.utc)
    doc = document([_record("one", "passed", 1.0)], 0.9, started=started)
    resultsfile.write(doc, tmp_path / "agent-results" / "run.json")
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")

    assert cli.main(["trend"]) == 0
    assert capsys.readouterr().out.startswith("last 1 of 1 run")


def test_trend_of_an_empty_or_missing_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["trend", str(tmp_path)]) == 0
    assert "no results files" in capsys.readouterr().out
    assert cli.main(["trend", str(tmp_path / "nope")]) == 2
    assert "no such directory" in capsys.readouterr().err


def _record(case_id: str, outcome: str, duration: float, **usage: Any) -> RunRecord:
    severity = "advisory" if outcome == "xfailed" else "normal"
    return rec(case_id, outcome, severity, duration=duration, checks=[], **usage)


# Five runs of four always-passing cases (20 passed runs, durations 0.5 .. 10.0 in a
# shuffled order), two always-failing ones (10 failed runs, 30 .. 39) plus one advisory
# failure (xfailed, 45.5: it counts as failed), and an erroring case whose 1000 s
# runs are neither passed nor failed.
_PASSED_SECONDS = [
    [7.0, 0.5, 9.5, 3.0],
    [2.0, 10.0, 4.5, 6.5],
    [8.5, 1.5, 5.0, 3.5],
    [1.0, 6.0, 9.0, 2.5],
    [4.0, 7.5, 5.5, 8.0],
]
_FAILED_SECONDS = [[34.0, 37.0], [30.0, 39.0], [36.0, 31.0], [38.0, 33.0], [35.0, 32.0]]
# tokens_in + tokens_out per run. p1: mean 1,400, sample sd 316 (population sd would
# be 283). p2: the last run is a runaway (2,000 > 3 x 100). p3: 300 is exactly 3 x 100,
# not more: no runaway.
_TOKENS = {
    "p1": [(900, 100), (1100, 100), (1300, 100), (1500, 100), (1700, 100)],
    "p2": [(90, 10), (90, 10), (90, 10), (90, 10), (1900, 100)],
    "p3": [(100, 0), (100, 0), (100, 0), (100, 0), (300, 0)],
}
# p1: mean $0.03, sample sd $0.0158 (population: $0.0141); p2's last run is a runaway.
_COSTS = {
    "p1": [0.01, 0.02, 0.03, 0.04, 0.05],
    "p2": [0.001, 0.001, 0.001, 0.001, 0.01],
}


def _write_usage_and_time_runs(directory: Path) -> None:
    directory.mkdir(parents=True)
    for run in range(5):
        records = []
        for i, case_id in enumerate(["p1", "p2", "p3", "p4"]):
            usage: dict[str, Any] = {}
            if case_id in _TOKENS:
                usage["tokens_in"], usage["tokens_out"] = _TOKENS[case_id][run]
            if case_id in _COSTS:
                usage["cost_usd"] = _COSTS[case_id][run]
            records.append(_record(case_id, "passed", _PASSED_SECONDS[run][i], **usage))
        for i, case_id in enumerate(["f1", "f2"]):
            records.append(_record(case_id, "failed", _FAILED_SECONDS[run][i]))
        records.append(_record("err", "error", 1000.0))
        if run == 0:
            records.append(_record("adv", "xfailed", 45.5, tokens_in=500))
        started = datetime(2026, 11, 1 + run, 9, 0, tzinfo=timezone.utc)
        doc = document(records, 0.9, started=started, finished=started + timedelta(minutes=5))
        resultsfile.write(doc, directory / f"{resultsfile.file_stem(started)}.json")


def _section(out: str, title: str) -> dict[str, list[str]]:
    """The rows of the table under ``title``, by their first cell."""
    lines = out.split(title + "\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert lines[1].startswith("---"), lines
    return {row.split("  ")[0]: re.split(r"\s{2,}", row.strip()) for row in lines[2:]}


def test_trend_wall_time_percentiles_and_usage_mean_sd(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_usage_and_time_runs(tmp_path / "results")

    status = cli.main(["trend", str(tmp_path / "results")])
    out = capsys.readouterr().out

    assert status == 0
    assert out.startswith("last 5 of 5 runs")
    # Nearest rank: of 20 passed runs p50 is the 10th (5.00, not the interpolated
    # 5.25), p90 the 18th, p99 the 20th; of 11 failed runs the 6th, 10th and 11th.
    wall = _section(out, "wall time per run (seconds):")
    assert wall == {
        "passed": ["passed", "20", "5.00", "9.00", "10.00"],
        "failed": ["failed", "11", "35.00", "39.00", "45.50"],
    }
    usage = _section(out, "tokens and cost per case (mean ± sd):")
    assert usage == {
        "adv": ["adv", "500 ± 0", "n/a"],
        "p1": ["p1", "1,400 ± 316", "$0.0300 ± $0.0158"],
        "p2": ["p2", "480 ± 850", "$0.0028 ± $0.0040"],
        "p3": ["p3", "140 ± 89", "n/a"],
    }
    assert "runaway runs (over 3x the case's mean):\n" in out
    runaways = out.split("runaway runs (over 3x the case's mean):\n", 1)[1].splitlines()
    # p2's last run, in tokens and in cost; p3's run at exactly 3x its mean is not one.
    assert runaways == [
        "  p2 r0: tokens 2,000 vs 100",
        "  p2 r0: cost $0.0100 vs $0.0010",
    ]


#: The skill suite of the policy test: the fake ``claude`` loads todo-triage alone, so
#: release-notes is never recalled (tests/plugin/samples/claude-stream-skill.jsonl).
SKILL_CASES = {
    "fires": ("normal", "skill_used, skill: todo-triage"),
    "stays-quiet": ("normal", "skill_not_used, skill: release-notes"),
    "wrong-skill": ("advisory", "skill_used, skill: release-notes"),
}


def test_merged_shards_decide_with_the_policy_the_shards_ran_under(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Skill limits (one given with -o), blocking perturbations and a baseline: the
    merge of two shards reaches the verdict, exit status and gate of the unsharded run,
    as the shards stored the policy they were gated under."""
    root = pytester.path
    fake_credentials(monkeypatch)
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
    monkeypatch.delenv("FAKE_AGENT_SAMPLE", raising=False)
    monkeypatch.setenv("FAKE_AGENT_SAMPLE_CLAUDE", str(shutil.copy(SKILL_SAMPLE, root)))
    pytester.makeini(
        f"[pytest]\neval_sandbox_rw = {root}\neval_sandbox_ro = {SAMPLES}\n"
        "eval_agent = claude\neval_skill_max_false_trigger = 0.5\n"
        "eval_perturb = typo\neval_perturb_n = 1\neval_perturb_blocking = true\n"
    )
    for case_id, (severity, check) in SKILL_CASES.items():
        (root / "evals").mkdir(exist_ok=True)
        (root / "evals" / f"{case_id}.yaml").write_text(
            f"id: {case_id}\ndefends: .claude/skills/todo-triage\nseverity: {severity}\n"
            f"prompt: Triage the TODOs\nchecks:\n  - {{type: {check}}}\n",
            "utf-8",
        )
    assert {shard.shard_of(c, 2) for c in SKILL_CASES} == {1, 2}
    args = ["-p", "no:cacheprovider", "-p", "no:randomly", "-o", "eval_skill_min_recall=0.9"]
    pytester.runpytest(*args, "--eval-save", "base.json").assert_outcomes(passed=4, xfailed=2)
    # The baseline spent a tenth of the tokens: this run's usage blocks against it.
    base = load(root / "base.json")
    for record in base["cases"]:  # type: ignore[attr-defined]
        record["tokens_in"], record["tokens_out"] = 1, 1
    (root / "base.json").write_text(json.dumps(base), "utf-8")
    gated = [*args, "--eval-baseline", "base.json"]

    whole = pytester.runpytest(*gated, "--eval-save", "whole.json")
    for k in (1, 2):
        pytester.runpytest(*gated, f"--eval-shard={k}/2", "--eval-save", f"s{k}.json")
    capsys.readouterr()
    status = cli.main(["merge", "s1.json", "s2.json", "-o", "merged.json"])
    err = capsys.readouterr().err

    unsharded, merged = load(root / "whole.json"), load(root / "merged.json")
    assert whole.ret == status == 1
    reason = str(unsharded["verdict_reason"])
    assert "skill release-notes: recall 0% below eval_skill_min_recall 90%" in reason
    assert "baseline: mean tokens per run" in reason
    for key in ("verdict", "verdict_reason", "policy", "skills", "perturbation", "passed"):
        assert merged[key] == unsharded[key], key
    assert [v["verdict"] for v in merged["variants"]] == [  # type: ignore[attr-defined]
        v["verdict"]
        for v in unsharded["variants"]  # type: ignore[attr-defined]
    ]
    gate_keys = ("blocked", "reasons", "regressed", "pass_rate", "tokens_mean", "compared_on")
    assert {k: merged["baseline"][k] for k in gate_keys} == {  # type: ignore[index]
        k: unsharded["baseline"][k]  # type: ignore[index]
        for k in gate_keys
    }
    assert f"eval gate: BLOCKED ({reason})" in err


def test_shards_gated_under_different_policies_do_not_merge(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    make_suite.steered(CASES[:4])
    pytester.runpytest("-p", "no:cacheprovider", "--eval-shard=1/2", "--eval-save", "s1.json")
    pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-o",
        "eval_min_pass_rate=0.5",
        "--eval-shard=2/2",
        "--eval-save",
        "s2.json",
    )
    capsys.readouterr()

    status = cli.main(["merge", "s1.json", "s2.json"])

    assert status == 2
    assert capsys.readouterr().err.strip() == (
        "evalcases: cannot merge results files gated under different policies: "
        "s1.json and s2.json differ in min_pass_rate (0.9 and 0.5)"
    )
