"""What grading walks of a workspace is bounded (docs/agents.md, "Kept workspaces", and
docs/replay.md, "What else is stored"): an agent that leaves many tiny files costs no
more than the plugin's entry limits, lowered here by the suite's conftest, and a kept
workspace counts what it takes on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers.results import only_results, results_files
from tests.helpers.suite import SuiteBuilder

#: Every process of the session reads the conftest.
LOW_LIMITS = """
from pytest_evalcases import defaults

defaults.WORKSPACE_MAX_ENTRIES = 100
defaults.KEEP_MAX_ENTRIES = 100
defaults.CHANGES_MAX_ENTRIES = 20
"""

#: Leaves as many one-byte files in many/ as the prompt says, and a sparse file as
#: large as the second word says (in MB), then answers.
AGENT = """
import os, pathlib, sys
count, sparse = (int(word) for word in sys.argv[1].split())
pathlib.Path("many").mkdir()
for i in range(count):
    pathlib.Path(f"many/f{i}.txt").write_text("x")
if sparse:
    with open("sparse.bin", "wb") as f:
        f.truncate(sparse * 1_000_000)
print("done")
"""


def case(case_id: str, files: int, sparse_mb: int = 0) -> str:
    return f"""
        id: {case_id}
        defends: AGENTS.md
        prompt: "{files} {sparse_mb}"
        checks:
          - {{id: made, type: file_exists, path: many/f0.txt}}
          - {{id: answered, type: output_matches, pattern: "^never"}}
        """


@pytest.fixture
def make_suite(make_suite: SuiteBuilder) -> SuiteBuilder:
    return make_suite.with_ini("eval_agent = command\neval_timeout = 60\n")


def kept_lines(out: str) -> dict[str, str]:
    """The ``workspace kept:`` line of each failed case, by case id."""
    found: dict[str, str] = {}
    case = ""
    for line in out.splitlines():
        if line.startswith("case "):
            case = line.split()[1]
        elif line.startswith("workspace kept: "):
            found[case] = line
    return found


def test_many_files_are_walked_no_further_than_the_limits_and_the_report_says_so(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite(
        AGENT,
        {"swarm": case("swarm", 300), "crowd": case("crowd", 50)},
        fixtures={"conftest.py": LOW_LIMITS, "AGENTS.md": "Make files.\n"},
    )

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=120)

    # Graded as usual: the run failed its check, no error.
    result.assert_outcomes(failed=2)
    (results,) = results_files(root)
    records = {r["id"]: r for r in only_results(root)["cases"]}
    for record in records.values():
        assert [(c["id"], c["passed"]) for c in record["checks"]] == [
            ("made", True),
            ("answered", False),
        ]
    lines = kept_lines(result.stdout.str())
    # 300 files: not kept, not stored, not compared.
    swarm = records["swarm"]
    assert lines["swarm"] == (
        f"workspace kept: {swarm['workspace']} (not moved to "
        f"{os.path.relpath(results.parent / (results.stem + '.workspaces'), root)}: it holds "
        "more than 100 files and directories, the most a kept workspace may)"
    )
    assert (Path(swarm["workspace"]) / "many" / "f299.txt").is_file()
    stored = json.loads((results.parent / swarm["recording"] / "run.json").read_text())
    assert stored["changes"]["archive"] is None
    assert stored["changes"]["omitted"] == [{"path": ".", "bytes": 0, "reason": "entries"}]
    assert stored["changes"]["truncated"] is True
    assert stored["workspace_unchanged"] is False
    # 50 files: kept; its changes stored up to 20 entries, the rest listed.
    crowd = records["crowd"]
    assert lines["crowd"] == f"workspace kept: {crowd['workspace']}"
    assert len(list((Path(crowd["workspace"]) / "many").iterdir())) == 50
    stored = json.loads((results.parent / crowd["recording"] / "run.json").read_text())
    assert stored["changes"]["entries"] == 20
    assert stored["changes"]["truncated"] is True
    assert {o["reason"] for o in stored["changes"]["omitted"]} == {"entries"}
    # The directory many/ and its 50 files: 20 stored, 31 listed.
    assert len(stored["changes"]["omitted"]) == 31


@pytest.mark.slow
def test_a_kept_workspace_counts_the_blocks_of_its_tiny_files_and_the_size_of_a_sparse_one(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    probe = pytester.path / "probe"
    probe.write_text("x")
    block = os.lstat(probe).st_blocks * 512
    if block < 4096:
        pytest.skip("this filesystem keeps a one-byte file in less than 4 KiB")
    root = make_suite(
        AGENT,
        {
            "tiny": case("tiny", 400),
            "sparse": case("sparse", 1, sparse_mb=5),
            "small": case("small", 10),
        },
        fixtures={"AGENTS.md": "Make files.\n"},
        ini="eval_keep_max_mb = 1\n",
    )

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=120)

    result.assert_outcomes(failed=3)
    lines = kept_lines(result.stdout.str())
    records = {r["id"]: r for r in only_results(root)["cases"]}
    # 400 bytes of content, but 400 blocks of 4 KiB on disk.
    assert lines["tiny"].startswith(f"workspace kept: {records['tiny']['workspace']} (not moved")
    assert "MB exceed eval_keep_max_mb = 1)" in lines["tiny"]
    assert "its 5" in lines["sparse"]
    assert "MB exceed eval_keep_max_mb = 1)" in lines["sparse"]
    assert lines["small"] == f"workspace kept: {records['small']['workspace']}"
    assert ".workspaces" in records["small"]["workspace"]
