"""``--eval-regrade`` of a real ``claude`` run (docs/replay.md, "Regrade"): the run is
recorded against the scripted Messages API, a check changes, and the regrade changes
the verdict from what was stored, without the CLI, the API or any other process."""

from __future__ import annotations

import gzip
import json
import os
import tarfile

import pytest

from pytest_evalcases.run import artifacts, changes
from tests.agents.test_real_clis import CASE, CLAUDE_INI, claude_env  # noqa: F401 - a fixture
from tests.helpers.model_server import ModelServer
from tests.helpers.results import results_files
from tests.plugin.test_regrade import AUDIT, path_of_bwrap_only

pytestmark = pytest.mark.real_cli

KEY = "sk-ant-Zq7xK2pW9mR4"

#: The stored run now fails its first check; the answer and transcript checks still hold.
CHANGED = CASE.replace("pattern: made-by-the-agent}", "pattern: made-by-someone-else}")


def test_regrade_of_a_claude_run_changes_the_verdict_without_starting_any_process(
    pytester: pytest.Pytester,
    claude_env: ModelServer,  # noqa: F811 - the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytester.makefile(".ini", tox=CLAUDE_INI)
    (pytester.path / "evals").mkdir()
    case = pytester.path / "evals" / "acts.yaml"
    case.write_text(CASE)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    [live] = results_files(pytester.path)
    directory = live.parent / f"{live.stem}.runs" / "acts"
    stored = json.loads((directory / artifacts.RUN_FILE).read_text())
    assert stored["answer"].startswith("done:")
    assert [(c["kind"], "made.txt" in c["input"]) for c in stored["tool_calls"]] == [
        ("shell", True)
    ]
    with tarfile.open(directory / changes.CHANGES) as tar:
        assert tar.getnames() == ["made.txt"]
    requests = len(claude_env.requests)
    # No secret of the environment in any stored file, compressed or not.
    for path in directory.iterdir():
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            data = gzip.decompress(data)
        assert KEY.encode() not in data, path

    case.write_text(CHANGED)
    log = pytester.path / "processes.log"
    pytester.makeconftest(AUDIT.format(log=str(log)))
    monkeypatch.setenv("PATH", str(path_of_bwrap_only(pytester.path)))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--eval-regrade")

    result.assert_outcomes(failed=1)
    assert not log.exists(), log.read_text()
    assert len(claude_env.requests) == requests
    regraded = max(results_files(pytester.path), key=os.path.getmtime)
    doc = json.loads(regraded.read_text())
    assert doc["regraded_from"] == live.name
    [record] = doc["cases"]
    assert [c["passed"] for c in record["checks"]] == [False, True, True]
    assert record["turns"] == 2
    # Nothing spent by the regrade; what the stored run reported is kept apart.
    assert (record["tokens_in"], record["tokens_out"], record["cost_usd"]) == (None, None, None)
    assert record["recorded_tokens_in"] == stored["usage"]["input_tokens"]
    assert record["recorded_cost_usd"] == stored["cost_usd"] > 0
