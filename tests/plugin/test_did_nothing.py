"""A run in which the agent says nothing and changes no file passes every negative check
by default: the case's report, the eval gate and the results file say so
(docs/results.md, "Runs that did nothing")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_evalcases.results import reader as resultsfile
from pytest_evalcases.results.reader import ResultsFileError
from tests.helpers.sandbox import requires_bwrap
from tests.helpers.suite import SuiteBuilder

#: Says nothing for "idle", writes a file and says nothing for "touch", answers for
#: "speak"; exits 0 every time.
AGENT = """\
import pathlib, sys
prompt = sys.argv[1]
if "touch" in prompt:
    pathlib.Path("notes.txt").write_text("done\\n")
elif "commit" in prompt:
    pathlib.Path("src/app.py").write_text("print(2)\\n")
elif "speak" in prompt:
    print("All done.")
"""

NEGATIVE = """\
id: {id}
defends: AGENTS.md
cwd: fixtures/app
setup: mkdir -p build && echo built > build/out.txt
prompt: Please {word} now.
checks:
  - {{type: output_not_matches, pattern: "(?i)co-authored-by"}}
  - {{type: file_not_contains, file: src/app.py, pattern: password}}
"""

WARNING = "the agent said nothing and changed no file: its negative checks passed by default"


@pytest.mark.parametrize(
    "sandbox", [pytest.param("none"), pytest.param("bwrap", marks=requires_bwrap)]
)
def test_a_run_that_did_nothing_is_flagged_in_report_gate_and_results(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, sandbox: str
) -> None:
    make_suite(
        AGENT,
        {
            **{
                word: NEGATIVE.format(id=word, word=word)
                for word in ("idle", "touch", "commit", "speak")
            },
            # did nothing too, but failed: its checks did not pass by default
            "idle-failing": "id: idle-failing\ndefends: AGENTS.md\nprompt: Please idle.\n"
            "checks:\n  - {type: output_matches, pattern: done}\n",
        },
        fixtures={"AGENTS.md": "Never add a trailer.\n", "evals/fixtures/app/src/app.py": "1\n"},
        ini=f"eval_sandbox = {sandbox}\n",
    )

    result = pytester.runpytest("-rA", "-p", "no:cacheprovider", "--eval-save", "r.json")

    result.assert_outcomes(passed=4, failed=1)
    out = result.stdout.str()
    # once in the passing case's report (-rA), once in the eval gate section
    assert out.count(f"warning: idle: {WARNING}") == 2, out
    for busy in ("touch", "commit", "speak", "idle-failing"):
        assert f"warning: {busy}:" not in out
    gate = out[out.index("= eval gate =") :]
    assert f"warning: idle: {WARNING}" in gate
    data = json.loads((pytester.path / "r.json").read_text())
    flagged = {case["id"]: case["did_nothing"] for case in data["cases"]}
    assert flagged == {
        "idle": True,
        "idle-failing": True,
        "touch": False,
        "commit": False,
        "speak": False,
    }
    # the reader knows the key, and a results file without it (an older one) still reads
    path = pytester.path / "r.json"
    assert [r.did_nothing for r in resultsfile.load(path).cases if r.case_id == "idle"] == [True]
    for case in data["cases"]:
        del case["did_nothing"]
    path.write_text(json.dumps(data))
    assert not any(r.did_nothing for r in resultsfile.load(path).cases)


def test_a_results_file_with_a_bad_did_nothing_is_refused(tmp_path: Path) -> None:
    record = {
        "id": "a",
        "outcome": "passed",
        "file": "evals/a.yaml",
        "line": 0,
        "defends": "AGENTS.md",
        "severity": "normal",
        "did_nothing": "yes",
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"cases": [record]}))

    with pytest.raises(ResultsFileError, match=r"cases\[0\]\.did_nothing: expected true or false"):
        resultsfile.load(path)
