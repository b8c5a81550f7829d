"""docs/results.md and docs/ci.md: the examples parse, and the documented JSON Schema
names every key a real results file has (and requires only keys it has)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_evalcases.report import github, gitlab
from pytest_evalcases.report.findings import FailedCheck, Finding
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
    assert len(workflows) == 2
    workflow = yaml.safe_load(workflows[0])
    assert set(workflow["jobs"]) == {"merge-gate", "full-suite", "merge", "drift"}
    drift = " ".join(str(step.get("run", "")) for step in workflow["jobs"]["drift"]["steps"])
    assert "evalcases trend history/ --last 52 --alert --html trend.html" in drift
    assert workflow[True]["schedule"]  # YAML 1.1 reads the key `on` as True
    gate = " ".join(str(step.get("run", "")) for step in workflow["jobs"]["merge-gate"]["steps"])
    assert "evalcases report --format github-comment results/pr.json" in gate
    assert f'startswith("{github.MARKER}")' in gate
    gitlab_job = yaml.safe_load(workflows[1])["evals"]
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
