"""The status at the end of the line while agents run (docs/reference.md, "Progress")."""

from __future__ import annotations

import pytest

from tests.helpers.suite import SuiteBuilder

#: An agent slow enough for the status to show (after 2 s, refreshed every second),
#: that prints on its standard output and answers wrongly. It runs until pytest's
#: output (the file ``stdout`` that ``runpytest_subprocess`` writes) shows the status,
#: or for as long as its second argument says.
SLOW = """
import pathlib, sys, time
out = pathlib.Path(sys.argv[1]) / "stdout"
deadline = time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline and "[running: " not in out.read_text("utf-8", "replace"):
    time.sleep(0.05)
print("wrong answer")
"""

CASE = """
id: slow-case
defends: AGENTS.md
prompt: answer
checks:
  - type: output_matches
    pattern: right
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (("--color=yes",), True),
        (("--color=yes", "--eval-concurrency=2"), True),
        (("--color=no",), False),
        (("--color=yes", "-q"), False),
    ],
    ids=["colour", "concurrent", "no-colour", "quiet"],
)
def test_a_status_shows_while_an_agent_runs_and_leaves_no_trace(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, args: tuple[str, ...], shown: bool
) -> None:
    # Where the status must not show, 3.6 s is time enough for it to show twice.
    make_suite(
        SLOW,
        {"slow-case": CASE},
        command=f"{{python}} {{rootdir}}/agent.py {{rootdir}} {60 if shown else 3.6}",
        ini="eval_agent = command\n",
    )

    result = pytester.runpytest_subprocess("-p", "no:randomly", "-rA", *args)

    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert ("[running: slow-case " in text) is shown, text
    if shown:
        # On the item's own line, then erased: cursor back over it, clear to the end.
        line = next(line for line in result.outlines if "[running: slow-case" in line)
        assert line.startswith("evals/slow-case.yaml")
        assert "\x1b[K" in line.partition("[running: ")[2]
        assert text.count("[running: ") >= 1
        # Never in what pytest captured of the run (the failure's sections).
        failure = text.partition("FAILURES")[2]
        assert "running:" not in failure
