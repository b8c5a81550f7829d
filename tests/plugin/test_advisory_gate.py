"""Advisory cases are reported and never block (docs/reference.md, "Exit statuses of
`pytest`"): in the live gate, in ``evalcases merge`` of shards, in the baseline gate
and in ``evalcases compare``, which all agree. The BLOCKED reason names every blocking
case, critical and normal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.results import steer
from tests.helpers.suite import SuiteBuilder

EVALCASES = Path(sys.executable).parent / "evalcases"
TWENTY = [f"case-{i:02d}" for i in range(20)]
ADVISORY = {"case-00": "advisory", "case-07": "advisory", "case-13": "advisory"}


def evalcases(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EVALCASES), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def saved(pytester: pytest.Pytester, name: str, *args: str) -> tuple[int, dict[str, object]]:
    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-save", name, *args)
    return int(result.ret), json.loads((pytester.path / name).read_text("utf-8"))


@pytest.mark.slow
def test_three_advisory_failures_in_twenty_cases_pass_live_merged_and_compared(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(TWENTY, severities=ADVISORY)
    status, _ = saved(pytester, "base.json")
    assert status == 0
    for case_id in ADVISORY:
        steer(root, "fail", case_id)

    live = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-baseline", "base.json", "--eval-save", "live.json"
    )
    one, _ = saved(pytester, "shard-1.json", "--eval-shard", "1/2")
    two, _ = saved(pytester, "shard-2.json", "--eval-shard", "2/2")
    merged = evalcases(root, "merge", "shard-1.json", "shard-2.json", "-o", "merged.json")
    compared = evalcases(root, "compare", "base.json", "live.json")

    live.assert_outcomes(passed=17, xfailed=3)
    out = live.stdout.str()
    assert live.ret == 0, out
    assert "normal 17/17, advisory 0/3" in out
    assert (
        "pass rate (critical and normal) 100.0% -> 100.0%; 0 regressed, 0 improved, "
        "3 advisory regressed" in out
    )
    assert "eval gate: PASS" in out
    assert (one, two) == (0, 0)
    assert merged.returncode == 0, merged.stderr
    assert "merged 2 files: 17/20 cases passed, eval gate: PASS" in merged.stderr
    doc = json.loads((root / "merged.json").read_text("utf-8"))
    live_doc = json.loads((root / "live.json").read_text("utf-8"))
    assert (doc["verdict"], doc["verdict_reason"]) == ("PASS", "")
    assert live_doc["verdict"] == "PASS"
    # The results file's pass rate counts every graded case: 17 of 20.
    assert doc["pass_rate"] == live_doc["pass_rate"] == pytest.approx(0.85)
    assert compared.returncode == 0, compared.stdout
    assert "case-07           passed  xfailed  regressed (advisory)" not in compared.stdout
    rows = [line.split() for line in compared.stdout.splitlines() if line.startswith("case-")]
    assert rows == [
        [case_id, "passed", "failed", "regressed", "(advisory)"] for case_id in sorted(ADVISORY)
    ]
    assert "B passes the baseline gate against A" in compared.stdout


@pytest.mark.slow
def test_blocked_names_every_critical_and_normal_case_live_and_merged(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    failing = ["case-01", "case-02", "case-03", "case-04", "case-05", "case-06", "case-08"]
    root = make_suite.steered(TWENTY, severities={**ADVISORY, "case-01": "critical"})
    for case_id in [*failing, *ADVISORY]:
        steer(root, "fail", case_id)

    status, live = saved(pytester, "live.json")
    saved(pytester, "shard-1.json", "--eval-shard", "1/2")
    saved(pytester, "shard-2.json", "--eval-shard", "2/2")
    merged = evalcases(root, "merge", "shard-1.json", "shard-2.json", "-o", "merged.json")

    reason = (
        "1 critical case failed: case-01; "
        "6 normal cases failed: case-02, case-03, case-04, case-05, case-06, case-08"
    )
    assert status == 1
    assert (live["verdict"], live["verdict_reason"]) == ("BLOCKED", reason)
    assert merged.returncode == 1, merged.stderr
    doc = json.loads((root / "merged.json").read_text("utf-8"))
    assert (doc["verdict"], doc["verdict_reason"]) == ("BLOCKED", reason)
