"""What other pytest plugins see of an eval item (docs/reference.md, "Beside other
pytest plugins"): reporters such as allure-pytest tell a failed test from a broken one
by the exception of the phase, an ``AssertionError`` (or ``pytest.fail``'s) being a
failure. So a check that does not hold raises an ``AssertionError``, and anything that
prevented a verdict raises neither.

The conftest records what a ``pytest_runtest_makereport`` hookwrapper is given, as
allure-pytest's own is; the plugin's own texts stay as they were.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers.suite import SuiteBuilder

#: Records, per item and phase, the class of the exception and what allure-pytest would
#: make of it (its ``_exception_brokes_test``): "failed" or "broken".
CONFTEST = """
import json, pathlib

import pytest

SEEN = pathlib.Path(__file__).parent / "seen.jsonl"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if call.excinfo is not None and not report.skipped:
        value = call.excinfo.value
        failure = isinstance(value, (AssertionError, pytest.fail.Exception))
        with SEEN.open("a") as out:
            out.write(json.dumps({
                "item": item.name, "when": call.when, "outcome": report.outcome,
                "exception": type(value).__name__,
                "allure": "failed" if failure else "broken",
            }) + "\\n")
    return report
"""

AGENT = """
import sys
case = sys.argv[1]
if case == "crashes":
    sys.exit(3)
print("ok" if case == "passes" else "wrong")
"""

CASE = """
id: {id}
defends: AGENTS.md
prompt: {id}
checks: [{{type: output_matches, pattern: '^ok'}}]
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_failure_is_an_assertion_error_an_error_is_not(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, workers: list[str]
) -> None:
    make_suite(
        AGENT,
        {case: CASE.format(id=case) for case in ("passes", "fails", "crashes")},
        fixtures={"conftest.py": CONFTEST, "evals/broken.yaml": "id: [unclosed\n"},
        ini="eval_agent = command\neval_timeout = 60\n",
    )

    result = pytester.runpytest("-p", "no:cacheprovider", *workers)

    result.assert_outcomes(passed=1, failed=1, errors=2)
    lines = (pytester.path / "seen.jsonl").read_text("utf-8").splitlines()
    seen = sorted((s["item"], s["when"], s["allure"]) for s in map(json.loads, lines))
    assert seen == [
        ("broken.yaml", "setup", "broken"),
        ("crashes", "setup", "broken"),
        ("fails", "call", "failed"),
    ]
    # The plugin's own texts are unchanged: no exception name, no traceback.
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "FAILED evals/fails.yaml::fails - output_matches-0 failed: *",
            "ERROR evals/broken.yaml::broken.yaml - case file error: evals/broken.yaml:2: *",
            "ERROR evals/crashes.yaml::crashes - no verdict (crash): *",
        ]
    )
    result.stdout.fnmatch_lines(["case crashes (normal) defends AGENTS.md: no verdict (crash)"])
    assert "Traceback" not in out
    assert "NoVerdict" not in out
    assert "AssertionError" not in out
    assert "CheckFailure" not in out
