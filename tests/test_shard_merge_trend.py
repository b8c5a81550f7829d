"""``--eval-shard K/N`` with ``evalcases merge``, and ``evalcases trend``, on results
files written by real runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_evalcases import cli, shard
from results_helpers import install_fake_claude, make_suite, results_files, steer

CASES = [f"case-{i:02d}" for i in range(12)]


def load(path: Path) -> dict[str, object]:
    doc: dict[str, object] = json.loads(path.read_text("utf-8"))
    return doc


def case_ids(doc: dict[str, object]) -> list[str]:
    return [c["id"] for c in doc["cases"]]  # type: ignore[attr-defined,index]


@pytest.mark.parametrize("total", [2, 3, 5])
def test_shards_cover_every_case_exactly_once(pytester: pytest.Pytester, total: int) -> None:
    root = make_suite(pytester, CASES)
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
    pytester: pytest.Pytester,
) -> None:
    make_suite(pytester, CASES[:6])

    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-shard=1/2", "--eval-repeat=3", "--collect-only", "-q"
    )

    names = [line.split("::")[1] for line in result.stdout.lines if "::" in line]
    expected = [c for c in CASES[:6] if shard.shard_of(c, 2) == 1]
    assert sorted({n.split("[")[0] for n in names}) == expected
    assert len(names) == 3 * len(expected)


def test_a_bad_shard_is_a_usage_error(pytester: pytest.Pytester) -> None:
    make_suite(pytester, ["alpha"])
    for bad in ("0/3", "4/3", "1-3", "x/y"):
        result = pytester.runpytest("-p", "no:cacheprovider", f"--eval-shard={bad}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert f"got {bad!r}" in result.stderr.str()


def test_merging_shards_gives_the_unsharded_verdict(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_suite(pytester, CASES, severities={"case-04": "critical"})
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


def test_merging_with_a_shard_missing_is_incomplete(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_suite(pytester, CASES)
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


def test_trend_over_real_runs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    state = install_fake_claude(pytester.path, monkeypatch)
    root = make_suite(
        pytester,
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


def test_trend_of_an_empty_or_missing_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["trend", str(tmp_path)]) == 0
    assert "no results files" in capsys.readouterr().out
    assert cli.main(["trend", str(tmp_path / "nope")]) == 2
    assert "no such directory" in capsys.readouterr().err
