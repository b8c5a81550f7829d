"""Judge checks (docs/judge.md): a model's yes/no answer about a run, reported and never
blocking until its check id is calibrated against human labels (Cohen's kappa ≥ 0.6 on
at least 30), then blocking like any check; a judge answer out of the fixed format is
an error of kind ``judge``; a replayed or regraded run keeps its stored judgement and
asks nothing.

The judge here is the scripted one (a judge check's ``script:``), or the command agent,
which writes each prompt it is asked to a file: a test sees whether the judge was asked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.results.calibration import Label, append_labels
from tests.helpers.suite import SuiteBuilder

EVALCASES = Path(sys.executable).parent / "evalcases"

#: The agent: answers "done", and writes a file; asked as a judge (its prompt says
#: VERDICT), it appends the prompt to asked.txt and answers what judge.txt says.
AGENT = """
import sys
from pathlib import Path

root = Path(sys.argv[1])
prompt = sys.argv[2]
if "VERDICT:" in prompt:
    with open(root / "asked.txt", "a") as f:
        f.write(prompt + "\\n=====\\n")
    print((root / "judge.txt").read_text())
else:
    Path("made.txt").write_text("made by the agent\\n")
    print("done: made.txt")
"""

COMMAND = "{python} {rootdir}/agent.py {rootdir} {prompt}"


def case(case_id: str, script: list[str] | None = None, *, severity: str = "critical") -> str:
    scripted = f"\n    script: {json.dumps(script)}" if script is not None else ""
    return f"""\
id: {case_id}
defends: AGENTS.md
severity: {severity}
prompt: Make the file
checks:
  - type: file_exists
    path: made.txt
  - id: explains
    type: judge
    question: Does the answer name the file it made?{scripted}
"""


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest("-p", "no:cacheprovider", "-rx", "--eval-save", "out.json", *args)
    saved = pytester.path / "out.json"
    return result, json.loads(saved.read_text("utf-8")) if saved.exists() else {}


def evalcases(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EVALCASES), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def judge_of(doc: dict[str, Any], case_id: str) -> dict[str, Any]:
    (entry,) = [c for c in doc["cases"] if c["id"] == case_id]
    (check,) = [c for c in entry["checks"] if c["type"] == "judge"]
    judge: dict[str, Any] = check["judge"]
    return {**judge, "passed": check["passed"], "outcome": entry["outcome"]}


def test_an_uncalibrated_judge_saying_no_never_blocks(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite(
        AGENT,
        {"says-no": case("says-no", ["VERDICT: no\nREASON: it names no file"])},
        fixtures={"AGENTS.md": "x\n"},
        command=COMMAND,
    )

    result, doc = run(pytester)

    result.assert_outcomes(xfailed=1)
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    assert "the judge (script) answered no: it names no file" in out
    assert "eval gate: PASS" in out
    judge = judge_of(doc, "says-no")
    assert judge["yes"] is False
    assert (judge["blocking"], judge["source"], judge["outcome"]) == (False, "scripted", "xfailed")


def test_a_malformed_judge_answer_is_an_error_of_kind_judge(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite(
        AGENT,
        {"rambles": case("rambles", ["Yes, I think it does."])},
        fixtures={"AGENTS.md": "x\n"},
        command=COMMAND,
    )

    result, doc = run(pytester)

    result.assert_outcomes(errors=1)
    assert result.ret == 2
    (entry,) = doc["cases"]
    assert entry["error_kind"] == "judge"
    assert "not in the fixed format" in entry["error"]
