"""pytest-rerunfailures beside the plugin (docs/reference.md, "Beside other pytest
plugins"): a rerun replaces the attempt it reruns, in the gate and the results file as
in pytest's own report; the rerun's outcome is the item's.

pytest-rerunfailures is not a dependency (under xdist it opens a socket in every
session): it is installed apart (:mod:`tests.helpers.plugins`).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.plugins import load_apart
from tests.helpers.suite import SuiteBuilder

#: Each case's attempts are counted in ``attempts/<case>``; the first attempt of
#: ``flaky-error`` crashes (an error: no verdict), the first of ``flaky-fail`` answers
#: wrong (a failure), every other attempt answers right; ``always-fails`` never does.
AGENT = """
import pathlib, sys
root, case = pathlib.Path(sys.argv[1]), sys.argv[2].split()[0]
counter = root / "attempts" / case
counter.parent.mkdir(exist_ok=True)
attempt = len(counter.read_text()) if counter.exists() else 0
counter.write_text("x" * (attempt + 1))
if case == "flaky-error" and attempt == 0:
    sys.exit(3)
if case == "always-fails" or (case == "flaky-fail" and attempt == 0):
    print("wrong")
else:
    print("ok " + case)
"""

CASE = """
id: {id}
defends: AGENTS.md
prompt: {id}
checks: [{{type: output_matches, pattern: '^ok'}}]
"""


def reruns(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    cases: list[str],
    *args: str,
) -> tuple[pytest.RunResult, dict[str, Any], ET.Element]:
    """Run ``cases`` with ``--reruns 2``: the result, the results file, the JUnit XML."""
    load_apart(monkeypatch, "pytest_rerunfailures", "pytest-rerunfailures")
    if tuple(int(p) for p in pytest.__version__.split(".")[:2]) < (8, 2):
        pytest.skip("pytest-rerunfailures needs pytest 8.2 or later")
    make_suite(
        AGENT,
        {case: CASE.format(id=case) for case in cases},
        command="{python} {rootdir}/agent.py {rootdir} {prompt}",
        ini="eval_agent = command\neval_timeout = 60\n",
    )
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--reruns", "2", f"--junitxml={junit}", *args
    )
    (results,) = (pytester.path / "evals" / "results").glob("*.json")
    return result, json.loads(results.read_text("utf-8")), ET.parse(junit).getroot()


def attempts(root: Path, case: str) -> int:
    return len((root / "attempts" / case).read_text())


WORKERS = [
    pytest.param([], id="serial"),
    pytest.param(["-n", "2"], id="xdist"),
    # The rerun's agent run is started ahead again, as its item is set up again.
    pytest.param(["--eval-concurrency", "2"], id="concurrency"),
]


@pytest.mark.slow
@pytest.mark.parametrize("workers", WORKERS)
def test_a_rerun_after_an_error_or_a_failure_is_the_items_outcome(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    result, doc, junit = reruns(
        make_suite, pytester, monkeypatch, ["flaky-error", "flaky-fail", "steady"], *workers
    )

    # The agent ran again and its second attempt passed: so did the item.
    assert attempts(pytester.path, "flaky-error") == 2
    assert attempts(pytester.path, "flaky-fail") == 2
    assert result.parseoutcomes() == {"passed": 3, "rerun": 2}, result.stdout.str()
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["eval gate: PASS*"])
    # One record per case, the last attempt's: the reruns are not repetitions.
    assert sorted((c["id"], c["outcome"], c["repetition"]) for c in doc["cases"]) == [
        ("flaky-error", "passed", 0),
        ("flaky-fail", "passed", 0),
        ("steady", "passed", 0),
    ]
    assert (doc["verdict"], doc["complete"]) == ("PASS", True)
    suite = junit if junit.tag == "testsuite" else junit[0]
    assert (suite.get("failures"), suite.get("errors")) == ("0", "0")


@pytest.mark.slow
@pytest.mark.parametrize("workers", WORKERS)
def test_a_case_that_fails_every_rerun_is_one_failed_record(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    result, doc, _ = reruns(make_suite, pytester, monkeypatch, ["always-fails"], *workers)

    assert attempts(pytester.path, "always-fails") == 3
    assert result.parseoutcomes() == {"failed": 1, "rerun": 2}, result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert [(c["id"], c["outcome"]) for c in doc["cases"]] == [("always-fails", "failed")]
    assert doc["verdict"] == "BLOCKED"
