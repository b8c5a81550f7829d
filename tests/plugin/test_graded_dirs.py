"""``--eval-workspace DIR`` (docs/agents.md, "No agent: grading existing directories"):
``DIR`` is one workspace for every case, or holds one directory per case; in the second
layout a case without its directory is an error, never graded against ``DIR``."""

from __future__ import annotations

import pytest

from tests.helpers.suite import SuiteBuilder

IDS = ("discount-no-print", "refund-rounding", "order-audit")


def _case(case_id: str) -> str:
    return f"id: {case_id}\ndefends: AGENTS.md\nchecks: [{{type: file_exists, path: done.txt}}]\n"


@pytest.fixture
def suite(make_suite: SuiteBuilder) -> SuiteBuilder:
    make_suite(
        cases={case_id: _case(case_id) for case_id in IDS},
        fixtures={
            # One case's directory, and a done.txt that would pass the others if the
            # directory itself were graded for them.
            "out/run-1/discount-no-print/done.txt": "",
            "out/run-1/done.txt": "",
            "out/single/done.txt": "",
            "out/single/src/app.py": "",
        },
    )
    return make_suite


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_case_without_its_directory_beside_others_is_an_error(
    suite: SuiteBuilder, pytester: pytest.Pytester, xdist: list[str]
) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-workspace", "out/run-1", *xdist)

    result.assert_outcomes(passed=1, errors=2)
    out = result.stdout.str()
    run = pytester.path / "out" / "run-1"
    for case_id in ("refund-rounding", "order-audit"):
        assert f"case {case_id} (normal) defends AGENTS.md: no verdict (workspace)" in out
        assert (
            f"no directory for case {case_id} in {run}: it holds per-case directories "
            f"(discount-no-print), so each case is graded in its own {run}/<case-id>/"
        ) in out
    assert result.ret == 2


def test_a_directory_without_per_case_directories_is_one_workspace(
    suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-workspace", "out/single")

    result.assert_outcomes(passed=3)
