"""``--eval-override "RATIONALE"`` and quarantined critical cases (docs/results.md,
"Overrides and quarantines"): an override lifts a block of normal cases on record, is
refused for a failing critical case, is recorded unused when nothing blocked, survives
``evalcases merge``; a quarantined critical case is named in the summary, the results
file and by ``evalcases lint``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases import cli
from pytest_evalcases.session import shard
from tests.helpers.git import git
from tests.helpers.results import only_results, steer
from tests.helpers.suite import SuiteBuilder

RATIONALE = "norm-b flakes on the provider's outage, tracked in #412"
SEVERITIES = {"crit-a": "critical"}


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly", *args)


@pytest.fixture
def no_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """No git identity of the machine's, and none of the CI variables but GITHUB_ACTOR."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GITLAB_USER_LOGIN", "BUILD_REQUESTEDFOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_ACTOR", "octocat")


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_block_of_normal_cases_is_overridden_on_record(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, no_identity: None, workers: list[str]
) -> None:
    root = make_suite.steered(["crit-a", "norm-b", "norm-c"], severities=SEVERITIES)
    git(root, "init", "-q")
    git(root, "config", "user.name", "Ada Lovelace")
    git(root, "config", "user.email", "ada@example.com")
    steer(root, "fail", "norm-b")

    result = run(pytester, "--eval-override", RATIONALE, *workers)

    out = result.stdout.str()
    assert result.ret == 0, out
    assert "override applied: BLOCKED lifted (1 normal case failed: norm-b)" in out
    assert f"eval gate: PASS (overridden: {RATIONALE})" in out
    doc = only_results(root)
    assert (doc["verdict"], doc["verdict_reason"]) == ("PASS", f"overridden: {RATIONALE}")
    assert doc["policy"]["override"] == RATIONALE
    record = doc["override"]
    # Given when the run finished without it: the moment of its verdict.
    assert record.pop("at") == doc["finished"]
    assert record == {
        "rationale": RATIONALE,
        "outcome": "applied",
        "why": "blocked only by normal cases",
        "verdict": "BLOCKED",
        "reasons": ["1 normal case failed: norm-b"],
        "cases": ["norm-b"],
        "by": {"name": "Ada Lovelace", "email": "ada@example.com", "source": "git config"},
    }
    # The case keeps its outcome: the override is the run's decision, not the case's.
    assert [v["verdict"] for v in doc["variants"]] == ["BLOCKED"]
    assert {c["id"]: c["outcome"] for c in doc["cases"]}["norm-b"] == "failed"


def test_a_block_of_the_baseline_gate_is_overridden(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, no_identity: None
) -> None:
    ids = [f"case-{i}" for i in range(10)]
    root = make_suite.steered(ids, ini="eval_baseline_tolerance = 50\n")
    run(pytester, "--eval-save", "base.json")
    steer(root, "fail", "case-3")

    result = run(pytester, "--eval-baseline", "base.json", "--eval-override", RATIONALE)

    out = result.stdout.str()
    assert result.ret == 0, out
    assert f"eval gate: PASS (overridden: {RATIONALE})" in out
    record = only_results(root)["override"]
    assert record["why"] == "blocked only by normal cases and the baseline gate"
    assert record["reasons"] == [
        "1 normal case failed: case-3",
        "baseline: 1 case passed in the baseline and fails now: case-3",
    ]
    assert record["cases"] == ["case-3"]


def test_a_failing_critical_case_cannot_be_overridden(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, no_identity: None
) -> None:
    root = make_suite.steered(["crit-a", "norm-b"], severities=SEVERITIES)
    steer(root, "fail", "crit-a")
    steer(root, "fail", "norm-b")

    result = run(pytester, "--eval-override", RATIONALE)

    out = result.stdout.str()
    assert result.ret == 1, out
    assert (
        "override refused: 1 critical case failed: crit-a (no override for a failing "
        "critical case)" in out
    )
    assert (
        "eval gate: BLOCKED (1 critical case failed: crit-a; 1 normal case failed: norm-b)" in out
    )
    doc = only_results(root)
    assert doc["verdict"] == "BLOCKED"
    assert {k: doc["override"][k] for k in ("outcome", "verdict", "cases", "by")} == {
        "outcome": "refused",
        "verdict": "BLOCKED",
        "cases": ["crit-a", "norm-b"],
        "by": {"name": "octocat", "email": None, "source": "env GITHUB_ACTOR"},
    }


def test_an_override_without_a_block_is_recorded_unused(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, no_identity: None
) -> None:
    root = make_suite.steered(["crit-a", "norm-b"], severities=SEVERITIES)

    result = run(pytester, "--eval-override", RATIONALE)

    out = result.stdout.str()
    assert result.ret == 0, out
    assert "override unused: the verdict is PASS: nothing to override" in out
    result.stdout.re_match_lines([r"^eval gate: PASS$"])
    doc = only_results(root)
    assert (doc["verdict"], doc["verdict_reason"]) == ("PASS", "")
    assert (doc["override"]["outcome"], doc["override"]["verdict"]) == ("unused", "PASS")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--eval-override", " "], "--eval-override needs a rationale"),
        (
            ["--eval-override", RATIONALE, "--eval-red-first"],
            "--eval-override and --eval-red-first cannot be combined",
        ),
        (
            ["--eval-override", RATIONALE, "--eval-no-save"],
            "--eval-override and --eval-no-save cannot be combined: an override must be "
            "on record in the results file",
        ),
    ],
)
def test_an_override_that_cannot_be_judged_or_recorded_is_a_usage_error(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    root = make_suite.steered(["crit-a", "norm-b"], severities=SEVERITIES)
    steer(root, "fail", "norm-b")

    result = run(pytester, *args)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert not (root / "evals" / "results").exists()


def test_merged_shards_keep_the_overridden_verdict(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    no_identity: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ids = ["crit-a", "norm-b", "norm-c", "norm-d"]
    assert {shard.shard_of(c, 2) for c in ids} == {1, 2}
    root = make_suite.steered(ids, severities=SEVERITIES)
    steer(root, "fail", "norm-b")
    whole = run(pytester, "--eval-override", RATIONALE, "--eval-save", "whole.json")
    for k in (1, 2):
        run(
            pytester,
            "--eval-override",
            RATIONALE,
            f"--eval-shard={k}/2",
            "--eval-save",
            f"s{k}.json",
        )
    capsys.readouterr()

    status = cli.main(["merge", "s1.json", "s2.json", "-o", "merged.json"])

    err = capsys.readouterr().err
    unsharded, merged = load(root / "whole.json"), load(root / "merged.json")
    assert whole.ret == status == 0
    assert f"eval gate: PASS (overridden: {RATIONALE})" in err
    for key in ("verdict", "verdict_reason", "policy"):
        assert merged[key] == unsharded[key], key
    same = ("rationale", "outcome", "why", "verdict", "reasons", "cases", "by")
    assert {k: merged["override"][k] for k in same} == {k: unsharded["override"][k] for k in same}
    assert merged["override"]["at"] in {load(root / f"s{k}.json")["override"]["at"] for k in (1, 2)}


def test_shards_with_and_without_an_override_do_not_merge(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    no_identity: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_suite.steered(["crit-a", "norm-b", "norm-c", "norm-d"], severities=SEVERITIES)
    run(pytester, "--eval-override", RATIONALE, "--eval-shard=1/2", "--eval-save", "s1.json")
    run(pytester, "--eval-shard=2/2", "--eval-save", "s2.json")
    capsys.readouterr()

    status = cli.main(["merge", "s1.json", "s2.json"])

    assert status == 2
    assert (
        "cannot merge results files gated under different policies: s1.json and s2.json "
        f'differ in override ("{RATIONALE}" and null)' in capsys.readouterr().err
    )


QUARANTINED = """\
id: crit-q
defends: AGENTS.md
severity: critical
quarantine: flaky since model X
prompt: crit-q
checks:
  - type: output_matches
    pattern: '^ok'
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_quarantined_critical_case_is_named_in_the_summary_and_the_results_file(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, workers: list[str]
) -> None:
    root = make_suite.steered(["norm-b"])
    (root / "evals" / "crit-q.yaml").write_text(QUARANTINED, "utf-8")

    result = run(pytester, *workers)

    out = result.stdout.str()
    assert result.ret == 0, out
    assert (
        "quarantined critical case: crit-q (flaky since model X): the gate does not check it" in out
    )
    doc = only_results(root)
    assert doc["quarantined"] == [
        {
            "id": "crit-q",
            "severity": "critical",
            "reason": "flaky since model X",
            "file": "evals/crit-q.yaml",
        }
    ]
    runs = {c["id"]: c for c in doc["cases"]}
    assert (runs["crit-q"]["outcome"], runs["crit-q"]["quarantine"]) == (
        "skipped",
        "flaky since model X",
    )
    assert runs["norm-b"]["quarantine"] is None


def test_lint_warns_of_a_quarantined_critical_case(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = pytester.path
    pytester.makeini("[pytest]\n")
    (root / "AGENTS.md").write_text("Answer with ok.\n", "utf-8")
    (root / "evals").mkdir()
    (root / "evals" / "crit-q.yaml").write_text(QUARANTINED, "utf-8")
    normal = QUARANTINED.replace("crit-q", "norm-q").replace("critical", "normal")
    (root / "evals" / "norm-q.yaml").write_text(normal, "utf-8")
    monkeypatch.chdir(root)

    status = cli.main(["lint", "evals"])

    out = capsys.readouterr().out
    assert status == 0, out
    assert (
        "evals/crit-q.yaml:4: WARNING quarantined-critical: critical case 'crit-q' is "
        "quarantined (flaky since model X): the gate does not check what it defends until "
        "the quarantine ends" in out
    )
    assert "norm-q.yaml:4: WARNING quarantined-critical" not in out


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data
