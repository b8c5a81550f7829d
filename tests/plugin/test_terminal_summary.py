"""The ``eval gate`` section as a terminal shows it: each variant's tokens and cost when
its agent reports them, and the verdict line in pytest's own outcome colours
(docs/results.md, "Tokens and cost in the summary"; docs/reference.md)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.results import steer, without_metrics
from tests.helpers.suite import SuiteBuilder

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def gate_section(out: str) -> list[str]:
    """The lines of the ``eval gate`` section, up to the next ``===`` line."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "= eval gate =" in line) + 1
    end = next(i for i in range(start, len(lines)) if ANSI.sub("", lines[i]).startswith("="))
    return [line for line in lines[start:end] if line]


def test_tokens_and_cost_of_a_variant_are_in_the_summary(
    make_suite: SuiteBuilder, fake_claude: Callable[..., Path], pytester: pytest.Pytester
) -> None:
    fake_claude(tokens=1234, cost=0.5)
    make_suite.steered(["alpha", "beta"], agent="claude")

    claude = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save")
    # The command agent reports neither: no line rather than "n/a".
    command = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save", "--eval-agent=command")

    claude.assert_outcomes(passed=2)
    assert without_metrics(gate_section(claude.stdout.str())) == [
        "suite: 2/2 cases passed · Score: 2/2 (100%) · 0 errors · normal 2/2",
        # 1,234 in + 100 out per run
        "  tokens 2,668 (1,334 per run) · cost $1.0000 ($0.5000 per run)",
        "eval gate: PASS",
    ]
    command.assert_outcomes(passed=2)
    assert without_metrics(gate_section(command.stdout.str())) == [
        "suite: 2/2 cases passed · Score: 2/2 (100%) · 0 errors · normal 2/2",
        "eval gate: PASS",
    ]


GREEN, RED, YELLOW, BOLD = "\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[1m"


def verdict_line(out: str) -> str:
    return next(line for line in out.splitlines() if "eval gate: " in line)


@pytest.mark.parametrize(
    ("steering", "status", "colour"),
    [
        pytest.param({}, "PASS", GREEN, id="pass"),
        pytest.param({"fail": "beta"}, "BLOCKED", RED, id="blocked"),
        pytest.param({"crash": "beta"}, "INCONCLUSIVE", YELLOW, id="inconclusive"),
    ],
)
def test_the_verdict_is_in_pytest_s_outcome_colour_with_color_yes(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    steering: dict[str, str],
    status: str,
    colour: str,
) -> None:
    root = make_suite.steered(["alpha", "beta"])
    for kind, case_id in steering.items():
        steer(root, kind, case_id)

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save", "--color=yes")

    line = verdict_line(result.stdout.str())
    assert line.startswith(f"{colour}{BOLD}eval gate: {status}"), repr(line)
    # The other lines of the section stay plain.
    assert "\x1b[" not in "\n".join(gate_section(result.stdout.str())[:-1])


#: pytest's colour settings, and whether the verdict is coloured under each.
SETTINGS = {
    "color-no": (["--color=no"], {"FORCE_COLOR": "1"}, False),
    "force-color": ([], {"FORCE_COLOR": "1"}, True),
    "no-color": ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
    "not-a-terminal": ([], {}, False),
}


def test_the_verdict_colour_follows_pytest_s_colour_settings(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_suite.steered(["alpha"])
    # Pytester sets PY_COLORS=0, which outranks the variables under test.
    monkeypatch.delenv("PY_COLORS")

    coloured = {}
    for name, (args, env, _) in SETTINGS.items():
        with monkeypatch.context() as m:
            for variable, value in env.items():
                m.setenv(variable, value)
            result = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save", *args)
        coloured[name] = GREEN in verdict_line(result.stdout.str())

    assert coloured == {name: expected for name, (_, _, expected) in SETTINGS.items()}
