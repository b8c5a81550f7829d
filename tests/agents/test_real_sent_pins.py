"""What the real CLIs sent their model, in the pins (docs/results.md, "Pins"): each CLI
driven by the plugin's scripted model (``script:``), offline, its runs recorded. The same
configuration twice gives the same pins; with Claude Code a changed ``CLAUDE.md``
changes the context hash (Claude Code puts it in the first user message, not the system
prompt) and the baseline gate says so as information, and another ``--eval-model``
changes the model sent, which the gate warns of.

The CLIs come from ``EVALCASES_AGENT_CLIS`` (tests/agents/test_real_clis.py says how);
without them these tests skip.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from tests.agents.test_real_clis import cli
from tests.plugin.test_scripted import offline  # noqa: F401 (fixture)

pytestmark = [pytest.mark.real_cli, pytest.mark.usefixtures("offline")]

#: The instruction file each CLI reads from its working directory.
RULES = {"claude": "CLAUDE.md", "codex": "AGENTS.md", "gemini": "GEMINI.md"}
#: What each CLI runs with, as the example suite's README has it (docs/config-contract.md).
ARGS = {"claude": "", "codex": "--trust --dangerously-bypass-hook-trust", "gemini": ""}

CASE = """id: {id}
defends: {rules}
prompt: {prompt}
script:
  - shell: echo made > made.txt
  - text: done
checks:
  - {{type: file_matches, path: made.txt, pattern: made}}
"""


def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, agent: str) -> None:
    monkeypatch.setenv("PATH", f"{cli(agent).parent}{os.pathsep}{os.environ['PATH']}")
    # Pytester makes its directory the home, where Gemini CLI's `--version` (the
    # preflight) leaves files in `.gemini/`: the suite's configuration would change.
    home = pytester.path.parent / f"{pytester.path.name}-home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    args = f"eval_agent_args = {ARGS[agent]}\n" if ARGS[agent] else ""
    pytester.makeini(f"[pytest]\neval_agent = {agent}\n{args}")
    (pytester.path / RULES[agent]).write_text("Never push to main. MARK-rules-v1\n")
    (pytester.path / "evals").mkdir()
    # Two cases, two prompts: their requests differ only in the prompt and the workspace.
    for case, prompt in (("one", "Write made.txt please"), ("two", "Quickly, make made.txt")):
        (pytester.path / "evals" / f"{case}.yaml").write_text(
            CASE.format(id=case, rules=RULES[agent], prompt=prompt)
        )


def run(pytester: pytest.Pytester, save: str, *args: str) -> pytest.RunResult:
    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-save", save, *args)
    result.assert_outcomes(passed=2)
    return result


def sent(pytester: pytest.Pytester, save: str) -> dict[str, Any]:
    doc = json.loads((pytester.path / save).read_text("utf-8"))
    found: dict[str, Any] = doc["pins"]["sent"][""]
    return found


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_the_same_configuration_twice_gives_the_same_pins(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    suite(pytester, monkeypatch, agent)

    run(pytester, "a.json")
    again = run(pytester, "b.json", "--eval-baseline", "a.json")

    first = sent(pytester, "a.json")
    assert first["runs"] == 2
    assert first["scripted"] is True
    assert first["models"]
    assert first["tools"]
    # Two cases, two workspaces, two prompts: one system prompt and one context.
    assert "system_prompts" not in first
    assert "contexts" not in first
    assert sent(pytester, "b.json") == first
    assert "pins differ" not in again.stdout.str()
    assert "pins changed" not in again.stdout.str()


def test_claude_codes_context_hash_follows_claude_md_and_its_model_pin_the_model(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite(pytester, monkeypatch, "claude")
    run(pytester, "base.json")
    (pytester.path / "CLAUDE.md").write_text("Never push to main. MARK-rules-v2\n")
    changed = run(pytester, "rules.json", "--eval-baseline", "base.json")
    (pytester.path / "CLAUDE.md").write_text("Never push to main. MARK-rules-v1\n")
    other = run(pytester, "model.json", "--eval-baseline", "base.json", "--eval-model", "haiku")

    base, rules, model = (sent(pytester, f) for f in ("base.json", "rules.json", "model.json"))
    assert rules["context_sha256"] != base["context_sha256"]
    assert rules["system_prompt_sha256"] == base["system_prompt_sha256"]
    assert (rules["models"], rules["tools"], rules["sampling"]) == (
        base["models"],
        base["tools"],
        base["sampling"],
    )
    changed.stdout.fnmatch_lines(
        [
            "pins changed as expected with the configuration: configuration fingerprint "
            "* -> * (CLAUDE.md); sent: context * -> *"
        ]
    )
    assert "WARNING: pins differ" not in changed.stdout.str()
    assert model["models"] != base["models"]
    assert model["context_sha256"] == base["context_sha256"]
    other.stdout.fnmatch_lines(
        ["WARNING: pins differ from the baseline*sent: models sent * -> *haiku*"]
    )
