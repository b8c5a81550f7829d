"""The example suite ``example_cases/config-contract`` with the real Claude Code, Codex
and Gemini CLI (its README; docs/config-contract.md): every case of the agent's is
graded as designed, offline, with no credential in the environment; run as the README
says with the hook taken out (``without-hook/``), the hook's case fails, naming the
hook event where the CLI can show one.

The CLIs come from ``EVALCASES_AGENT_CLIS`` (tests/agents/test_real_clis.py says how);
without them these tests skip.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.recording import format as recording
from tests.agents.test_real_clis import cli
from tests.helpers.results import only_results
from tests.plugin.test_scripted import CREDENTIALS, offline  # noqa: F401 (fixture)

pytestmark = [pytest.mark.real_cli, pytest.mark.usefixtures("offline")]

EXAMPLE = Path(__file__).parents[2] / "example_cases" / "config-contract"

#: What the example's README runs each agent with.
ARGS = {
    "claude": [],
    "codex": ["-o", "eval_agent_args=--trust --dangerously-bypass-hook-trust"],
    "gemini": ["-o", "eval_agent_args=--policy .gemini/policies/no-env.toml"],
}

#: Every case of each agent passes; the other agents' cases are skipped (``agents:``).
CASES = {
    "claude": [
        "api-rule-on-demand",
        "env-read-denied",
        "force-push-blocked",
        "operator-config-absent",
        "push-not-blocked",
        "skill-offered",
    ],
    "codex": ["agents-md-reaches", "env-read-denied", "force-push-blocked", "push-not-blocked"],
    "gemini": ["api-rule-on-demand", "env-read-denied", "force-push-blocked", "push-not-blocked"],
}

#: What the hook's case says without the hook: the event, where the CLI shows hooks.
WITHOUT_HOOK = {
    "claude": ("hook-ran", "no PreToolUse hook ran (hooks that ran, by event: none)"),
    "codex": ("refused-by-hook", "no call of tool 'shell' with input 'push --force' refused"),
    "gemini": ("hook-ran", "no BeforeTool hook 'no-force-push' ran"),
}


@pytest.fixture
def example(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example suite as the pytester directory, the CLIs on the path."""
    for name in ("claude", "codex", "gemini"):
        monkeypatch.setenv("PATH", f"{cli(name).parent}{os.pathsep}{os.environ['PATH']}")
    shutil.copytree(
        EXAMPLE, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("results")
    )
    return pytester.path


def cases(root: Path) -> dict[str, dict[str, Any]]:
    """The cases of the session's results file, by id."""
    return {record["id"]: record for record in only_results(root)["cases"]}


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_the_example_grades_every_case_of_the_real_cli_offline(
    pytester: pytest.Pytester, example: Path, agent: str
) -> None:
    assert not [name for name in CREDENTIALS if name in os.environ]

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-agent", agent, *ARGS[agent])

    others = sum(len(ids) for other, ids in CASES.items() if other != agent)
    result.assert_outcomes(passed=len(CASES[agent]), skipped=others)
    records = cases(example)
    for case in CASES[agent]:
        record = records[f"{agent}-{case}"]
        assert record["outcome"] == "passed", record
        assert record["scripted"] is True
        # Every request the CLI sent its model was answered here: none left the machine.
        found = recording.exchange_file(example / "evals" / "results" / record["recording"])
        assert found is not None
        posted = [e for e in recording.read(found).exchanges if e.method == "POST"]
        assert posted
        assert {e.source for e in posted} == {"scripted"}


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_without_the_hook_the_hook_case_of_the_real_cli_fails(
    pytester: pytest.Pytester, example: Path, agent: str
) -> None:
    # The README's command: the configuration with the hook, then without.
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--eval-agent",
        agent,
        *ARGS[agent],
        "--eval-config",
        "with-hook=.",
        "--eval-config",
        f"without-hook={example / 'without-hook'}",
        "-k",
        f"{agent}-force-push",
    )

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"FAILED *{agent}-force-push-blocked*[[]without-hook[]]"])
    record = cases(example)[f"{agent}-force-push-blocked"]
    check, said = WITHOUT_HOOK[agent]
    failed = {c["id"]: c["message"] for c in record["checks"] if not c["passed"]}
    assert failed[check].startswith(said), failed
