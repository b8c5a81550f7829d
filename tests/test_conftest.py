"""The suite's own guard (tests/conftest.py): a pytester session under xdist workers in a
test not marked ``xdist`` fails, so that the default developer run (``pytest -m "not
slow"``) never starts them unawares; a marked test, or a parametrized one whose id names
``xdist``, may."""

from __future__ import annotations

import pytest

from tests.conftest import starts_workers

#: Inner tests that ask their pytester for a session with ``-n 0``: xdist reads the
#: option and starts no worker, so the guard is what decides, cheaply.
GUARDED = """
import pytest

@pytest.mark.parametrize("how", ["runpytest", "runpytest_inprocess", "inline_run"])
def test_unmarked(pytester, how):
    getattr(pytester, how)("-n", "0")

@pytest.mark.xdist
def test_marked(pytester):
    pytester.runpytest("-n", "0").assert_outcomes()

@pytest.mark.parametrize("mode", ["serial", "xdist"])
def test_parametrized(pytester, mode):
    pytester.runpytest(*(["-n", "0"] if mode == "xdist" else [])).assert_outcomes()
"""


def test_a_pytester_session_under_xdist_fails_an_unmarked_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_guarded=GUARDED)

    result = pytester.runpytest("-p", "pytester", "-p", "tests.conftest", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=3, failed=3)
    result.stdout.fnmatch_lines(
        [
            f"*test_unmarked?{how}? runs pytest under xdist: mark it xdist (tests/conftest.py)"
            for how in ("runpytest", "runpytest_inprocess", "inline_run")
        ],
    )


@pytest.mark.parametrize(
    "args",
    [("-n", "2"), ("-n2",), ("--numprocesses=2",), ("--numprocesses", "2"), ("--tx", "popen")],
)
def test_every_spelling_of_the_workers_option_starts_workers(args: tuple[str, ...]) -> None:
    assert starts_workers(("-p", "no:cacheprovider", *args))


@pytest.mark.parametrize("args", [(), ("--eval-concurrency", "2"), ("-k", "n"), ("--no-header",)])
def test_other_options_start_no_worker(args: tuple[str, ...]) -> None:
    assert not starts_workers(args)
