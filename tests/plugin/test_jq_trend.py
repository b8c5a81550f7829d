"""The seed's one-liner over a results directory (docs/results.md, "A trend with jq"):
with the real ``jq``, a whole-suite run prints its counts, a run of part of the suite
and a red-first run print empty columns, never counts that are not the suite's."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.results import results_files, steer
from tests.helpers.suite import SuiteBuilder

JQ = shutil.which("jq") or "/usr/bin/jq"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "results.md"

pytestmark = pytest.mark.skipif(not Path(JQ).exists(), reason="needs the jq binary")


def documented_commands() -> list[str]:
    """The ``jq`` commands of the section, in order, as the docs write them."""
    text = DOCS.read_text("utf-8")
    section = text[text.index("### A trend with jq") :]
    section = section[: section.index("\n### ", 1)]
    blocks = re.findall(r"^```sh\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.startswith("jq ")]


def jq(command: str, cwd: Path) -> list[str]:
    """``command`` run with the real jq in ``cwd``, the glob expanded as a shell would."""
    words = shlex.split(command)
    assert words[-1] == "evals/results/*.json"
    files = [str(p.relative_to(cwd)) for p in sorted((cwd / "evals/results").glob("*.json"))]
    done = subprocess.run(
        [JQ, *words[1:-1], *files], cwd=cwd, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_documented_one_liners_print_a_true_trend(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(["alpha", "beta", "gamma"])
    steer(root, "fail", "gamma")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2, failed=1)
    pytester.runpytest("-p", "no:cacheprovider", "-k", "alpha")
    pytester.runpytest("-p", "no:cacheprovider", "--eval-red-first")
    files = results_files(root)
    docs = [json.loads(p.read_text("utf-8")) for p in files]
    assert [(d["mode"], d["complete_suite"]) for d in docs] == [
        ("run", True),
        ("run", False),
        ("red-first", True),
    ]
    dates = [d["date"] for d in docs]
    one_liner, whole_only, by_counts = documented_commands()
    assert one_liner == "jq -r '[.date, .passed, .total] | @tsv' evals/results/*.json"

    # The whole run's counts; the partial run (1 of 1 passed) and the red-first run
    # (its outcomes inverted) show nothing rather than a pass rate of another suite.
    assert jq(one_liner, root) == [f"{dates[0]}\t2\t3", f"{dates[1]}\t\t", f"{dates[2]}\t\t"]
    assert jq(whole_only, root) == [f"{dates[0]}\t2\t3"]
    assert jq(by_counts, root) == [
        f"{dates[0]}\trun\ttrue\t2\t3",
        f"{dates[1]}\trun\tfalse\t1\t1",
        f"{dates[2]}\tred-first\ttrue\t{docs[2]['counts']['passed']}\t3",
    ]
