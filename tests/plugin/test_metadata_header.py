"""pytest-metadata (brought by pytest-json-report) prints ``metadata: {...}`` in the
header of every ``-v`` run; the plugin keeps that line out unless the user asks for it
(``-vv``, or one of pytest-metadata's options), and leaves the metadata itself alone
(docs/reference.md, "Header lines")."""

from __future__ import annotations

import pytest

from tests.helpers.suite import SuiteBuilder

#: A test of the user's that reads pytest-metadata's fixture.
USES_METADATA = """\
def test_metadata(metadata):
    assert "Python" in metadata
"""


@pytest.fixture(autouse=True)
def suite(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> None:
    make_suite.steered(["alpha"])
    pytester.makepyfile(test_unit=USES_METADATA)


def header(result: pytest.RunResult) -> list[str]:
    out = result.stdout.lines
    return out[: next(i for i, line in enumerate(out) if line.startswith("collect"))]


def test_verbose_runs_have_no_metadata_line(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save", "-v")

    # test_unit reads pytest-metadata's fixture: the metadata itself is still there
    result.assert_outcomes(passed=2)
    lines = header(result)
    assert not [line for line in lines if line.startswith("metadata:")], lines
    # pytest's own lines and the plugin's are all there
    assert any(line.startswith("evalcases: agent command") for line in lines), lines
    assert any(line.startswith("rootdir:") for line in lines), lines


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["-vv"], id="vv"),
        pytest.param(["-v", "--metadata", "team", "evals"], id="metadata"),
        pytest.param(["-v", '--metadata-from-json={"team": "evals"}'], id="metadata-from-json"),
    ],
)
def test_asking_for_metadata_shows_the_line(pytester: pytest.Pytester, args: list[str]) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save", *args)

    result.assert_outcomes(passed=2)
    assert [line for line in header(result) if line.startswith("metadata: {'Python': ")]
