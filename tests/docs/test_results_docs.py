"""docs/results.md and docs/ci.md: the examples parse, and the documented JSON Schema
names every key a real results file has (and requires only keys it has)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_evalcases.report import github, gitlab, summary
from pytest_evalcases.report.findings import FailedCheck, Finding
from pytest_evalcases.results import gate
from pytest_evalcases.results.decode import from_dict
from pytest_evalcases.results.metrics import compute_metrics
from pytest_evalcases.results.policy import GatePolicy
from pytest_evalcases.results.record import CheckRecord, RunRecord
from tests.helpers.results import only_results, steer
from tests.helpers.suite import SuiteBuilder

DOCS = Path(__file__).resolve().parents[2] / "docs"


def fences(name: str, lang: str) -> list[str]:
    text = (DOCS / name).read_text("utf-8")
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def schema() -> dict[str, Any]:
    found = [json.loads(b) for b in fences("results.md", "json") if '"$schema"' in b]
    assert len(found) == 1
    doc: dict[str, Any] = found[0]
    return doc


def test_every_json_and_yaml_example_parses() -> None:
    assert len(fences("results.md", "json")) >= 3
    for block in fences("results.md", "json"):
        json.loads(block)
    workflows = fences("ci.md", "yaml")
    assert len(workflows) == 3  # the action's, the jobs step by step, GitLab's
    workflow = yaml.safe_load(workflows[1])
    assert set(workflow["jobs"]) == {"merge-gate", "full-suite", "merge", "drift"}
    drift = " ".join(str(step.get("run", "")) for step in workflow["jobs"]["drift"]["steps"])
    assert "evalcases trend history/ --last 52 --alert --html trend.html" in drift
    assert workflow[True]["schedule"]  # YAML 1.1 reads the key `on` as True
    gate = " ".join(str(step.get("run", "")) for step in workflow["jobs"]["merge-gate"]["steps"])
    assert "evalcases report --format github-comment results/pr.json" in gate
    assert f'startswith("{github.MARKER}")' in gate
    gitlab_job = yaml.safe_load(workflows[2])["evals"]
    reports = gitlab_job["artifacts"]["reports"]
    assert reports == {"junit": "results/junit.xml", "codequality": "results/codequality.json"}
    assert "--junitxml results/junit.xml" in gitlab_job["script"][0]
    assert "--format gitlab-codequality" in gitlab_job["after_script"][0]


def test_the_documented_code_quality_issue_has_the_shape_the_command_writes() -> None:
    (example,) = [json.loads(b) for b in fences("ci.md", "json")]
    found = [
        Finding(
            "beta",
            "",
            "failed",
            "normal",
            "evals/guards.yaml",
            3,
            (
                FailedCheck(
                    "starts-with-ok", "pattern '^ok' not found in the final answer: 'wrong'"
                ),
            ),
            "",
            1,
            1,
            0,
            1.0,
        )
    ]
    assert example == gitlab.codequality(found)


def test_the_documented_schema_matches_a_real_results_file(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(["alpha", "beta"])
    steer(root, "fail", "beta")
    pytester.runpytest("-p", "no:cacheprovider")
    real = only_results(root)
    documented = schema()

    top = documented["properties"]
    assert set(real) <= set(top)
    assert set(documented["required"]) <= set(real)
    case = top["cases"]["items"]
    for entry in real["cases"]:
        assert set(entry) <= set(case["properties"])
        assert set(case["required"]) <= set(entry)
        for check in entry["checks"]:
            assert set(check) <= set(case["properties"]["checks"]["items"]["properties"])
    assert set(real["pins"]) <= set(top["pins"]["properties"])
    assert set(real["usage"]) <= set(top["usage"]["properties"])
    metrics = top["metrics"]["properties"]["variants"]["items"]
    assert set(real["metrics"]) == set(top["metrics"]["properties"])
    assert [m["variant"] for m in real["metrics"]["variants"]] == [""]
    for entry in real["metrics"]["variants"]:
        assert set(entry) == set(metrics["properties"])
    variant_schema = top["variants"]["items"]
    for variant in real["variants"]:
        assert set(variant) <= set(variant_schema["properties"])
        verdict_schema = variant_schema["properties"]["cases"]["items"]
        for verdict in variant["cases"]:
            assert (
                set(verdict_schema["required"]) <= set(verdict) <= set(verdict_schema["properties"])
            )


def test_the_documented_example_has_the_shape_of_the_schema() -> None:
    documented = schema()
    example = next(
        json.loads(b)
        for b in fences("results.md", "json")
        if b.lstrip().startswith('{\n  "format"')
    )
    assert set(documented["required"]) <= set(example)
    assert set(example) <= set(documented["properties"])
    case_required = set(documented["properties"]["cases"]["items"]["required"])
    assert all(case_required <= set(c) for c in example["cases"])


def test_the_documented_override_and_quarantine_have_the_shape_of_a_real_file(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    """The section "Overrides and quarantines": its examples, the schema and the file
    of a run with a lifted block and a quarantined critical case hold the same keys."""
    root = make_suite.steered(["alpha", "beta"])
    steer(root, "fail", "beta")
    (root / "evals" / "crit-q.yaml").write_text(
        "id: crit-q\ndefends: AGENTS.md\nseverity: critical\nquarantine: flaky since model X\n"
        "prompt: crit-q\nchecks:\n  - {type: output_matches, pattern: '^ok'}\n",
        "utf-8",
    )
    pytester.runpytest("-p", "no:cacheprovider", "--eval-override", "beta is known to flake")
    real = only_results(root)
    top = schema()["properties"]
    examples = [json.loads(b) for b in fences("results.md", "json")]
    override = next(e for e in examples if isinstance(e, dict) and "rationale" in e)
    quarantined = next(e for e in examples if isinstance(e, list))

    assert real["override"]["outcome"] == "applied"
    assert set(real["override"]) == set(override) == set(top["override"]["required"])
    assert set(real["override"]["by"]) == set(override["by"])
    assert set(override["by"]) == set(top["override"]["properties"]["by"]["properties"])
    item = top["quarantined"]["items"]
    assert [set(q) for q in real["quarantined"]] == [set(q) for q in quarantined]
    assert set(quarantined[0]) == set(item["required"]) == set(item["properties"])


def metrics_example() -> dict[str, Any]:
    """The example of the section "Metrics"."""
    found = [json.loads(b) for b in fences("results.md", "json") if b.startswith('{\n  "metrics"')]
    assert len(found) == 1
    example: dict[str, Any] = found[0]["metrics"]
    return example


def metrics_runs() -> list[RunRecord]:
    """The runs of the section "Metrics": two cases, three repetitions, two variants;
    in ``pr`` a run that looped (a runaway), one that misused a tool, one timed out."""

    def run(case: str, variant: str, rep: int, outcome: str, *spent: Any, **kw: Any) -> RunRecord:
        duration, tokens_in, tokens_out, cost = spent
        passed = CheckRecord("c", "output_matches", None, outcome == "passed", "")
        return RunRecord(
            case_id=case,
            file=f"evals/{case}.json",
            line=0,
            defends="AGENTS.md",
            severity="normal",
            variant=variant,
            repetition=rep,
            outcome=outcome,
            checks=kw.pop("checks", [passed]),
            duration=duration,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost_usd=cost,
            nodeid=f"evals/{case}.json::{case}[{variant}-r{rep}]",
            **kw,
        )

    cl, at = "changelog-entry", "attribution-no-trailer"
    return [
        run(cl, "main", 0, "passed", 40.9, 18320, 426, 0.04028),
        run(cl, "main", 1, "passed", 38.2, 18102, 398, 0.03961),
        run(cl, "main", 2, "passed", 44.5, 18977, 455, 0.04177),
        run(at, "main", 0, "failed", 31.2, 18854, 412, 0.04182, failure_mode="unclassified"),
        run(at, "main", 1, "passed", 29.8, 18440, 380, 0.04051),
        run(at, "main", 2, "passed", 33.0, 18689, 401, 0.04110),
        run(cl, "pr", 0, "passed", 41.7, 18531, 433, 0.04093),
        run(cl, "pr", 1, "passed", 39.9, 18211, 410, 0.04002),
        run(cl, "pr", 2, "error", 600.0, None, None, None, error_kind="timeout", checks=[]),
        run(at, "pr", 0, "failed", 212.4, 191870, 2210, 0.41966, failure_mode="loop"),
        run(at, "pr", 1, "failed", 35.1, 18712, 395, 0.04120, failure_mode="tool_misuse"),
        run(at, "pr", 2, "passed", 30.6, 18385, 388, 0.04044),
    ]


def test_the_metrics_example_and_summary_sample_are_what_its_runs_give() -> None:
    report = gate.decide(metrics_runs(), GatePolicy(), order=["main", "pr"])
    documented = metrics_example()

    assert report.metrics.to_dict() == documented
    # What a results file holds reads back as it was written.
    read = from_dict({"cases": [], "metrics": documented}).metrics
    assert read is not None
    assert read.to_dict() == documented
    sample = next(b for b in fences("results.md", "text") if "runaway: " in b)
    lines = summary.lines(report)
    start = lines.index(sample.splitlines()[0])
    assert lines[start : start + len(sample.splitlines())] == sample.splitlines()


def test_the_documented_metrics_have_the_shape_of_the_schema() -> None:
    top = schema()["properties"]["metrics"]
    defs = schema()["$defs"]
    variant = top["properties"]["variants"]["items"]
    runaway = variant["properties"]["runaways"]["items"]
    full = next(
        json.loads(b) for b in fences("results.md", "json") if b.startswith('{\n  "format"')
    )
    for metrics in (metrics_example(), full["metrics"]):
        assert set(top["required"]) == set(metrics) == set(top["properties"])
        for entry in metrics["variants"]:
            assert set(variant["required"]) == set(entry) == set(variant["properties"])
            for wall in (entry["wall_passed"], entry["wall_failed"]):
                assert set(wall) == set(defs["wall"]["properties"])
            for spread in (entry["tokens"], entry["cost"]):
                assert spread is None or set(spread) == set(defs["spread"]["properties"])
            for found in entry["runaways"]:
                assert set(runaway["required"]) == set(found) == set(runaway["properties"])
    # The big example's metrics are those of its own runs.
    runs = [RunRecord.from_dict(c) for c in full["cases"]]
    assert compute_metrics(runs, [""]).to_dict() == full["metrics"]
