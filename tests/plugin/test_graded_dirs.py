"""``--eval-workspace DIR`` (docs/agents.md, "No agent: grading existing directories"):
``DIR`` is one workspace for every case, or holds one directory per case; in the second
layout a case without its directory is an error, never graded against ``DIR``."""

from __future__ import annotations

import pytest

from tests.helpers.suite import SuiteBuilder
from tests.plugin.test_regrade import AUDIT, path_of_bwrap_only

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


def test_grading_starts_no_process_and_loads_no_recorder(
    suite: SuiteBuilder, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No agent runs: no trial of bubblewrap (a failing one is all PATH holds), no git
    # watching the repository, no recording proxy; a command check would still need them.
    log = pytester.path / "processes.log"
    pytester.makeconftest(
        AUDIT.format(log=str(log))
        + "\n\ndef pytest_unconfigure(config):\n"
        + "    print('recorder:', 'pytest_evalcases.recording.recorder' in sys.modules)\n"
    )
    monkeypatch.setenv("PATH", str(path_of_bwrap_only(pytester.path)))

    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--eval-workspace", "out/single"
    )

    result.assert_outcomes(passed=3)
    assert not log.exists(), log.read_text()
    result.stdout.fnmatch_lines(["recorder: False"])
