"""``--eval-timeout SECONDS``: the ini's ``eval_timeout`` on the command line. The
option beats the ini value, a case's own ``timeout:`` beats both, and a bad value is a
usage error that quotes it (docs/reference.md)."""

from __future__ import annotations

import pytest

from tests.helpers.suite import SuiteBuilder

#: Sleeps two seconds when the prompt says "slow", then answers.
AGENT = """\
import sys, time
if "slow" in sys.argv[1]:
    time.sleep(2)
print("done")
"""

CASE = """\
id: {id}
defends: AGENTS.md
prompt: Be slow.
{timeout}checks:
  - {{type: output_matches, pattern: done}}
"""


def suite(make_suite: SuiteBuilder, ini: str = "") -> None:
    make_suite(
        AGENT,
        {
            "slow-default": CASE.format(id="slow-default", timeout=""),
            "slow-own": CASE.format(id="slow-own", timeout="timeout: 30\n"),
        },
        fixtures={"AGENTS.md": "Take your time.\n"},
        ini=ini,
    )


def test_the_option_sets_the_timeout_and_a_case_s_own_timeout_wins(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    suite(make_suite)

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-timeout", "0.5", "-rE")

    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["ERROR *slow-default.yaml::slow-default - no verdict (timeout)*"])
    assert (
        "agent 'command' timed out after 0.5s (its whole process group was killed); "
        "raise `timeout:` on the case, or --eval-timeout / eval_timeout"
    ) in result.stdout.str()


@pytest.mark.slow
def test_the_option_beats_the_ini_value(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    suite(make_suite, ini="eval_timeout = 0.5\n")

    with_ini = pytester.runpytest("-p", "no:cacheprovider")
    with_option = pytester.runpytest("-p", "no:cacheprovider", "--eval-timeout=30")

    with_ini.assert_outcomes(passed=1, errors=1)
    with_option.assert_outcomes(passed=2)


@pytest.mark.parametrize("value", ["0", "-5", "ten", "nan", "inf", ""])
def test_a_bad_value_is_a_usage_error_quoting_it(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, value: str
) -> None:
    suite(make_suite)

    result = pytester.runpytest("-p", "no:cacheprovider", f"--eval-timeout={value}")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*argument --eval-timeout: expected a number of seconds > 0, got {value!r}"]
    )
