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


def metadata_lines(pytester: pytest.Pytester, *args: str) -> list[str]:
    """The ``metadata:`` lines of the header of a run with ``args``."""
    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save", *args)
    # test_unit reads pytest-metadata's fixture: the metadata itself is still there
    result.assert_outcomes(passed=2)
    lines = header(result)
    # pytest's own lines and the plugin's are all there
    assert any(line.startswith("evalcases: agent command") for line in lines), lines
    assert any(line.startswith("rootdir:") for line in lines), lines
    return [line for line in lines if line.startswith("metadata: ")]


def test_the_metadata_line_shows_only_when_asked_for(pytester: pytest.Pytester) -> None:
    verbose = metadata_lines(pytester, "-v")
    very_verbose = metadata_lines(pytester, "-vv")
    given = metadata_lines(pytester, "-v", "--metadata", "team", "evals")
    from_json = metadata_lines(pytester, "-v", '--metadata-from-json={"team": "evals"}')

    assert verbose == []
    assert [line.startswith("metadata: {'Python': ") for line in very_verbose] == [True]
    assert ["'team': 'evals'" in line for line in given + from_json] == [True, True]
