"""The results document: exactly the documented JSON of a small set of records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_evalcases.results import reader, writer
from pytest_evalcases.results.document import SuiteSelection
from pytest_evalcases.results.factors import Factors
from pytest_evalcases.results.record import CheckRecord

from .records import FINISHED, doc, run

#: A case's entry in a variant after its one run passed, and after it failed.
PASSED_ONCE = {
    "outcome": "passed",
    "runs": 1,
    "graded": 1,
    "passes": 1,
    "errors": 0,
    "pass_rate": 1.0,
    "ci95": [0.2065, 1.0],
    "min_pass_rate": 1.0,
}
FAILED_ONCE = {
    **PASSED_ONCE,
    "outcome": "failed",
    "passes": 0,
    "pass_rate": 0.0,
    "ci95": [0.0, 0.7935],
}


def test_the_document_of_two_cases_in_two_variants_is_exactly_the_documented_json() -> None:
    records = [
        run("alpha", "passed", "main", tokens_in=100, tokens_out=20, cost_usd=0.5),
        run("beta", "failed", "main", tokens_in=200, tokens_out=40),
        run("alpha", "passed", "pr", cost_usd=0.25),
        run("beta", "passed", "pr"),
    ]

    data = doc(
        records,
        finished=FINISHED,
        sources={"main": "main-dir", "pr": "pr-dir"},
        order=["main", "pr"],
        factors={
            "main": Factors("claude", "opus", ("--verbose",), "main-dir"),
            "pr": Factors("claude", "opus", ("--verbose",), "pr-dir"),
        },
    ).to_dict()

    cases = data.pop("cases")
    main = {
        "name": "main",
        "source": "main-dir",
        "factors": {
            "agent": "claude",
            "model": "opus",
            "args": ["--verbose"],
            "config": "main-dir",
        },
        "passed": 1,
        "failed": 1,
        "errors": 0,
        "skipped": 0,
        "total": 2,
        "pass_rate": 0.5,
        "checks_passed": 1,
        "checks_total": 2,
        "verdict": "BLOCKED",
        "usage": {
            "runs_with_tokens": 2,
            "tokens_total": 360,
            "tokens_mean": 180.0,
            "runs_with_cost": 1,
            "cost_total": 0.5,
            "cost_mean": 0.5,
        },
        "cases": [{"id": "alpha", **PASSED_ONCE}, {"id": "beta", **FAILED_ONCE}],
    }
    pr = {
        **main,
        "name": "pr",
        "source": "pr-dir",
        "factors": {**main["factors"], "config": "pr-dir"},  # type: ignore[dict-item]
        "passed": 2,
        "failed": 0,
        "pass_rate": 1.0,
        "checks_passed": 2,
        "verdict": "PASS",
        "usage": {
            "runs_with_tokens": 0,
            "tokens_total": 0,
            "tokens_mean": None,
            "runs_with_cost": 1,
            "cost_total": 0.25,
            "cost_mean": 0.25,
        },
        "cases": [{"id": "alpha", **PASSED_ONCE}, {"id": "beta", **PASSED_ONCE}],
    }
    assert data == {
        "format": 1,
        "date": "2026-12-01T09:30:00.000Z",
        "finished": "2026-12-01T09:31:02.500Z",
        "duration": 62.5,
        "complete": True,
        "incomplete_reasons": [],
        "complete_suite": True,
        "selection": None,
        "mode": "run",
        "passed": 3,
        "failed": 1,
        "errors": 0,
        "skipped": 0,
        "total": 4,
        "pass_rate": 0.75,
        "counts": {
            "passed": 3,
            "failed": 1,
            "errors": 0,
            "skipped": 0,
            "total": 4,
            "pass_rate": 0.75,
        },
        "checks_passed": 3,
        "checks_total": 4,
        "verdict": "BLOCKED",
        "verdict_reason": "main: 1 normal case failed: beta",
        "min_pass_rate": 0.9,
        "policy": {
            "min_pass_rate": 0.9,
            "red_first": False,
            "skill_min_recall": None,
            "skill_max_false_trigger": None,
            "perturb_blocking": False,
            "perturb_max_delta": None,
            "baseline": None,
            "override": None,
        },
        "override": None,
        "quarantined": [],
        "shard": None,
        "usage": {
            "runs_with_tokens": 2,
            "tokens_total": 360,
            "tokens_mean": 180.0,
            "runs_with_cost": 2,
            "cost_total": 0.75,
            "cost_mean": 0.375,
        },
        "pins": {},
        "variants": [main, pr],
        "comparisons": [
            {
                "baseline": "main",
                "variant": "pr",
                "differ": ["config"],
                "regressed_cases": [],
                "improved_cases": ["beta"],
                "regressed_checks": [],
                "improved_checks": [["beta", "c"]],
                "mcnemar_p": 1.0,
            }
        ],
        "metrics": {
            "runaway_factor": 3.0,
            "tokens_mean": 180.0,
            "variants": [
                {
                    "variant": "main",
                    "runs": 2,
                    "graded": 2,
                    "passed": 1,
                    "success_rate": 0.5,
                    "ci95": [0.0945, 0.9055],
                    "wall_passed": {"runs": 1, "p50": 0.0, "p90": 0.0, "p99": 0.0},
                    "wall_failed": {"runs": 1, "p50": 0.0, "p90": 0.0, "p99": 0.0},
                    # Only what happened: beta's cost was not reported, not zero.
                    "tokens": {"runs": 2, "mean": 180.0, "sd": 84.852814},
                    "cost": {"runs": 1, "mean": 0.5, "sd": 0.0},
                    "runaways": [],
                    "failures_by_mode": {"unclassified": 1},
                    "errors_by_kind": {},
                },
                {
                    "variant": "pr",
                    "runs": 2,
                    "graded": 2,
                    "passed": 2,
                    "success_rate": 1.0,
                    "ci95": [0.3424, 1.0],
                    "wall_passed": {"runs": 2, "p50": 0.0, "p90": 0.0, "p99": 0.0},
                    "wall_failed": {"runs": 0, "p50": None, "p90": None, "p99": None},
                    "tokens": None,
                    "cost": {"runs": 1, "mean": 0.25, "sd": 0.0},
                    "runaways": [],
                    "failures_by_mode": {},
                    "errors_by_kind": {},
                },
            ],
        },
        "skills": [],
    }
    assert [c["id"] for c in cases] == ["alpha", "beta", "alpha", "beta"]
    assert cases[0] == records[0].to_dict()


def test_a_broken_case_file_counts_as_an_error_everywhere_and_is_not_a_run() -> None:
    broken = run("broken", "error", kind="file", checks=[])

    data = doc([run("alpha", "passed"), broken]).to_dict()

    assert (data["passed"], data["errors"], data["total"]) == (1, 1, 2)
    assert [v["errors"] for v in data["variants"]] == [1]
    assert data["verdict"] == "INCONCLUSIVE"
    assert data["usage"]["runs_with_tokens"] == 0


def test_baseline_and_merge_keys_come_last_and_only_when_present() -> None:
    plain = doc([run("alpha", "passed")])

    with_baseline = plain.with_changes(baseline={"file": "a.json"}).to_dict()

    assert list(plain.to_dict())[-1] == "cases"
    assert list(with_baseline)[-2:] == ["cases", "baseline"]


def test_a_document_read_back_is_the_document_written(tmp_path: Path) -> None:
    records = [
        run("alpha", "passed", "main", tokens_in=3, tokens_out=4),
        run("alpha", "failed", "pr", checks=[CheckRecord("c", "t", "d", False, "no")]),
    ]
    written = doc(records, finished=FINISHED, order=["main", "pr"], shard=(1, 2))
    path = writer.write(written, tmp_path / "r.json")

    assert reader.load(path).to_dict() == written.to_dict()


def test_secrets_are_redacted_when_the_file_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "hunter2-hunter2-hunter2")
    records = [run("alpha", "failed", error="saw hunter2-hunter2-hunter2 in the output")]

    path = writer.write(doc(records), tmp_path / "r.json")

    text = path.read_text("utf-8")
    assert "hunter2" not in text
    assert "saw [REDACTED] in the output" in text


def test_an_incomplete_document_passes_nowhere() -> None:
    records = [run("alpha", "passed", "main"), run("alpha", "passed", "pr")]

    incomplete = doc(records, complete=False, incomplete_reasons=["interrupted"]).to_dict()
    whole = doc(records).to_dict()

    assert (incomplete["verdict"], incomplete["verdict_reason"]) == (
        "INCONCLUSIVE",
        "run incomplete: interrupted",
    )
    assert [v["verdict"] for v in incomplete["variants"]] == ["INCONCLUSIVE", "INCONCLUSIVE"]
    assert whole["verdict"] == "PASS"
    assert [v["verdict"] for v in whole["variants"]] == ["PASS", "PASS"]


NULL_COUNTS = dict.fromkeys(("passed", "failed", "errors", "skipped", "total", "pass_rate"))


@pytest.mark.parametrize(
    "kind",
    ["part of the suite", "cut short", "red-first"],
)
def test_a_run_that_is_not_the_suites_state_has_its_counts_under_counts_only(
    kind: str, tmp_path: Path
) -> None:
    # The seed's jq one-liner reads the top level: there a partial, cut-short or
    # red-first run must show nothing rather than counts that are not the suite's.
    records = [run("alpha", "passed"), run("beta", "failed")]
    kw: dict[str, object] = {
        "part of the suite": {
            "selection": SuiteSelection(("-k", "alpha or beta"), 3, 1, 3, 1),
        },
        "cut short": {"complete": False, "incomplete_reasons": ["interrupted"]},
        "red-first": {"mode": "red-first"},
    }[kind]
    written = doc(records, finished=FINISHED, **kw)
    path = writer.write(written, tmp_path / "r.json")
    data = json.loads(path.read_text("utf-8"))

    assert {k: data[k] for k in NULL_COUNTS} == NULL_COUNTS
    real = data["counts"]
    assert (real["passed"], real["failed"], real["total"]) == (1, 1, 2)
    if kind != "red-first":
        assert real["pass_rate"] == 0.5
    # Read back, the document has its real counts, and writes the same file again.
    again = reader.load(path)
    assert again.counts == written.counts
    assert again.to_dict() == written.to_dict()


def test_a_whole_suite_run_has_the_same_counts_at_the_top_and_under_counts(
    tmp_path: Path,
) -> None:
    written = doc([run("alpha", "passed"), run("beta", "failed")])
    data = json.loads(writer.write(written, tmp_path / "r.json").read_text("utf-8"))

    assert {k: data[k] for k in NULL_COUNTS} == data["counts"]
    assert (data["passed"], data["total"], data["pass_rate"]) == (1, 2, 0.5)


def test_a_file_written_before_counts_reads_its_counts_from_the_top(tmp_path: Path) -> None:
    data = doc([run("alpha", "passed"), run("beta", "failed")]).to_dict()
    del data["counts"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data), "utf-8")

    assert reader.load(path).counts.passed == 1
    assert reader.load(path).counts.total == 2
