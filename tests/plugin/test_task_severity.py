"""A task directory's check severities (docs/case-format.md, "Task-directory format"): the
case's marker is its highest check severity, and a failed run is as severe as its most
severe failed check: LOW checks failing alone are an advisory failure (xfailed), MEDIUM
at most a normal one, any HIGH a critical one."""

from __future__ import annotations

import pytest

from tests.helpers.results import only_results
from tests.helpers.suite import SuiteBuilder

#: Writes svc.py without an __init__ and without tests.
AGENT = """\
import pathlib
pathlib.Path("svc.py").write_text("class Service:\\n    pass\\n")
print("Added the Service class.")
"""

SERVICE = "{id: service-exists, type: file_exists, path: svc.py}"
INIT = "{id: has-init, type: file_contains, file: svc.py, pattern: 'def __init__'"
TESTS = "{id: tests-exist, type: file_exists, path: test_svc.py}"

TASKS = {
    # HIGH passes, LOW fails.
    "low-only": [SERVICE, INIT + ", severity: LOW}"],
    # HIGH fails (and LOW).
    "high-fails": [TESTS, INIT + ", severity: LOW}"],
    # HIGH passes; MEDIUM and LOW fail.
    "medium-fails": [SERVICE, INIT + ", severity: MEDIUM}", TESTS[:-1] + ", severity: LOW}"],
}

#: The -n values each scenario runs with: serially, and under xdist.
XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])


@pytest.fixture
def suite(make_suite: SuiteBuilder) -> SuiteBuilder:
    files: dict[str, str | bytes | None] = {"AGENTS.md": "Services are classes.\n"}
    for name, checks in TASKS.items():
        files[f"tasks/{name}/task.md"] = "Add a Service class in svc.py.\n"
        files[f"tasks/{name}/checks.yaml"] = (
            "task: The service is a class\ndefends: AGENTS.md\nchecks:\n"
            + "".join(f"  - {check}\n" for check in checks)
        )
    make_suite(AGENT, fixtures=files)
    return make_suite


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "-rxf", *args)


@XDIST
def test_only_low_checks_failing_is_an_advisory_failure(
    suite: SuiteBuilder, pytester: pytest.Pytester, xdist: list[str]
) -> None:
    # -m critical selects it: its marker is its highest check severity, HIGH.
    result = run(pytester, "tasks/low-only", "-m", "critical", *xdist)

    result.assert_outcomes(xfailed=1)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "suite: 0/1 cases passed · Score: 1/2 (50%) · 0 errors · advisory 0/1",
            "eval gate: PASS",
            # pytest before 8.2 puts "reason: " before the reason.
            "XFAIL tasks/low-only/checks.yaml::low-only - *advisory failure of a critical "
            "case, only LOW checks failed: has-init: svc.py: pattern 'def __init__' not found",
        ]
    )
    (record,) = only_results(pytester.path)["cases"]
    assert (record["outcome"], record["severity"], record["failure_severity"]) == (
        "xfailed",
        "critical",
        "advisory",
    )


@XDIST
def test_a_failing_high_check_fails_the_case_as_critical(
    suite: SuiteBuilder, pytester: pytest.Pytester, xdist: list[str]
) -> None:
    result = run(pytester, "tasks/high-fails", *xdist)

    result.assert_outcomes(failed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["eval gate: BLOCKED (1 critical case failed: high-fails)"])
    (record,) = only_results(pytester.path)["cases"]
    assert (record["outcome"], record["failure_severity"]) == ("failed", "critical")


def test_medium_checks_failing_at_most_are_a_normal_failure(
    suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    result = run(pytester, "tasks/medium-fails")

    result.assert_outcomes(failed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["eval gate: BLOCKED (1 normal case failed: medium-fails)"])
    (record,) = only_results(pytester.path)["cases"]
    assert (record["severity"], record["failure_severity"]) == ("critical", "normal")


@XDIST
def test_the_gate_counts_each_failure_under_its_own_severity(
    suite: SuiteBuilder, pytester: pytest.Pytester, xdist: list[str]
) -> None:
    result = run(pytester, "tasks", *xdist)

    result.assert_outcomes(failed=2, xfailed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "suite: 0/3 cases passed · * · critical 0/1, normal 0/1, advisory 0/1",
            "eval gate: BLOCKED (1 critical case failed: high-fails; "
            "1 normal case failed: medium-fails)",
        ]
    )
    passed = {r["id"]: r["outcome"] for r in only_results(pytester.path)["cases"]}
    assert passed == {"low-only": "xfailed", "high-fails": "failed", "medium-fails": "failed"}
