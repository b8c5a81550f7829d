"""``--eval-override`` judged by the gate on plain run records (docs/results.md,
"Overrides and quarantines"): what it lifts, what it refuses, what stays of the verdict;
who gave it; the record read back as written."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.results import gate, override, reader, writer
from pytest_evalcases.results.baseline import BaselineResult
from pytest_evalcases.results.override import Author
from pytest_evalcases.results.policy import GatePolicy
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.results.skills import SkillLimits
from tests.helpers.git import git
from tests.helpers.results import rec

WHY = "accepted in review"


def decided(records: list[RunRecord], **kw: Any) -> gate.GateReport:
    baseline = kw.pop("baseline", None)
    incomplete = kw.pop("incomplete", ())
    policy = GatePolicy(override=WHY, **kw)
    return gate.decide(records, policy, baseline=baseline, incomplete=incomplete)


def blocking_baseline() -> BaselineResult:
    return BaselineResult(
        label="base.json",
        rows=(),
        pass_rate=(1.0, 1.0),
        tokens_mean=(100.0, 200.0),
        cost_mean=(None, None),
        reasons=("mean tokens per run 200 is above 1.3x the baseline's 100",),
        pin_differences=(),
    )


def skill_check(passed: bool, kind: str = "skill_used") -> dict[str, Any]:
    return {"id": "s", "type": kind, "skill": "triage", "passed": passed}


def test_a_block_of_the_baseline_gate_alone_is_lifted() -> None:
    report = decided([rec("a", "passed", "critical")], baseline=blocking_baseline())

    assert (report.verdict.status, report.verdict.reason) == ("PASS", f"overridden: {WHY}")
    assert report.override is not None
    assert (report.override.outcome, report.override.why) == (
        "applied",
        "blocked only by the baseline gate",
    )
    assert report.override.reasons == (
        "baseline: mean tokens per run 200 is above 1.3x the baseline's 100",
    )
    assert report.override.cases == ()


def test_a_critical_case_in_any_variant_refuses_the_override() -> None:
    records = [
        rec("a", "passed", "critical", "main"),
        rec("a", "failed", "critical", "pr"),
        rec("b", "failed", "normal", "main"),
    ]

    report = decided(records)

    assert report.verdict.status == "BLOCKED"
    assert report.override is not None
    assert report.override.outcome == "refused"
    assert report.override.why == (
        "1 critical case failed: a (no override for a failing critical case)"
    )
    assert report.override.reasons == (
        "main: 1 normal case failed: b",
        "pr: 1 critical case failed: a",
    )


def test_a_trigger_shortfall_on_a_critical_case_refuses_the_override() -> None:
    """A critical case passes on 1 of 2 runs (its min_pass_rate 0.5); the missed
    trigger of its other run makes the skill's recall fall short: not overridable."""
    records = [
        rec("crit", "passed", "critical", checks=[skill_check(True)], min_pass_rate=0.5),
        rec(
            "crit",
            "failed",
            "critical",
            repetition=1,
            checks=[skill_check(False)],
            min_pass_rate=0.5,
        ),
    ]

    report = decided(records, skill_limits=SkillLimits(min_recall=0.9))

    assert report.verdict.status == "BLOCKED"
    assert report.override is not None
    assert report.override.outcome == "refused"
    assert report.override.why == (
        "a skill's trigger score falls short on 1 critical case: crit (no override for a "
        "failing critical case)"
    )


def test_a_trigger_shortfall_on_normal_cases_is_lifted() -> None:
    records = [
        rec("crit", "passed", "critical"),
        rec("norm", "passed", checks=[skill_check(True)], min_pass_rate=0.5),
        rec("norm", "failed", repetition=1, checks=[skill_check(False)], min_pass_rate=0.5),
    ]

    report = decided(records, skill_limits=SkillLimits(min_recall=0.9))

    assert report.verdict.status == "PASS"
    assert report.override is not None
    assert report.override.why == "blocked only by skills' trigger scores"


def test_a_lifted_block_with_errors_or_an_unfinished_run_is_inconclusive() -> None:
    errored = decided([rec("b", "failed"), rec("e", "error", checks=[])])
    unfinished = decided([rec("b", "failed")], incomplete=("interrupted",))

    assert (errored.verdict.status, errored.verdict.reason) == (
        "INCONCLUSIVE",
        f"1 case errored: e; block overridden: {WHY}",
    )
    assert (unfinished.verdict.status, unfinished.verdict.reason) == (
        "INCONCLUSIVE",
        f"run incomplete: interrupted; block overridden: {WHY}",
    )
    assert errored.override is not None
    assert errored.override.outcome == "applied"


def test_without_an_override_the_verdict_is_the_gates() -> None:
    report = gate.decide([rec("b", "failed")], GatePolicy())

    assert report.verdict.status == "BLOCKED"
    assert report.override is None


def test_the_override_is_read_back_as_written(tmp_path: Path) -> None:
    report = decided([rec("b", "failed"), rec("q", "skipped", quarantine="flaky")])
    started = datetime(2026, 12, 1, 9, 30, tzinfo=timezone.utc)
    written = writer.document(
        report, started=started, finished=started, overrider=Author("Ada", None, "env USER")
    )

    path = writer.write(written, tmp_path / "r.json")
    data = written.to_dict()

    assert reader.load(path).to_dict() == data
    assert data["override"]["by"] == {"name": "Ada", "email": None, "source": "env USER"}
    assert data["override"]["at"] == "2026-12-01T09:30:00.000Z"
    assert data["quarantined"] == [
        {"id": "q", "severity": "normal", "reason": "flaky", "file": "evals/q.yaml"}
    ]


def test_who_is_git_config_else_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.name", "Ada Lovelace")
    git(repo, "config", "user.email", "ada@example.com")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ci = {"GITHUB_ACTOR": "octocat", "USER": "runner"}

    assert override.author(repo, ci) == Author("Ada Lovelace", "ada@example.com", "git config")
    assert override.author(elsewhere, ci) == Author("octocat", None, "env GITHUB_ACTOR")
    assert override.author(elsewhere, {"GITLAB_USER_LOGIN": "gl", "GITLAB_USER_EMAIL": "g@x"}) == (
        Author("gl", "g@x", "env GITLAB_USER_LOGIN")
    )
    assert override.author(elsewhere, {}) == Author()
