"""The scripted model (docs/config-contract.md, "The scripted model"): a case's
``script:`` played by the plugin for the real Claude Code, Codex and Gemini CLI, with no
credential in the environment, nothing sent off the machine and nothing spent; the
run is marked ``scripted`` in the results.

The CLIs come from ``EVALCASES_AGENT_CLIS`` (tests/agents/test_real_clis.py says how);
without them these tests skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_evalcases.recording import format as recording
from tests.agents.test_real_clis import cli, real_suite
from tests.helpers.model_server import Reply, model_server
from tests.helpers.results import only_results
from tests.helpers.sandbox import USER_CACHE

#: Every variable that could give a CLI a credential or another provider.
CREDENTIALS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_GEMINI_BASE_URL",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
)

#: A shell turn that makes a file, then the answer; checks on both. The red case's
#: check must fail: the file is there.
CASES = """\
cases:
  - id: makes-a-file
    defends: AGENTS.md
    prompt: Make the file
    script:
      - shell: echo made-by-the-script > made.txt
      - text: "all done: made.txt"
    checks:
      - {type: file_matches, path: made.txt, pattern: made-by-the-script}
      - {type: output_matches, pattern: "^all done"}
      - {type: tool_called, tool: shell}
  - id: red
    defends: AGENTS.md
    prompt: Make the file
    script:
      - shell: echo made-by-the-script > made.txt
      - text: all done
    checks:
      - {type: file_absent, path: made.txt}
"""


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credential of any CLI in the environment, a home of nobody's."""
    for name in CREDENTIALS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # Codex sets up its own sandbox only outside /tmp (docs/agents.md, "The agent's home").
    monkeypatch.setenv("XDG_CACHE_HOME", str(USER_CACHE))


@pytest.mark.real_cli
@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
@pytest.mark.usefixtures("offline")
def test_a_script_drives_the_real_cli_with_no_key_and_nothing_spent(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    real_suite(pytester, monkeypatch, agent, "scripted.yaml", CASES)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, failed=1)
    results = only_results(pytester.path)
    records = {r["id"]: r for r in results["cases"]}
    green, red = records["makes-a-file"], records["red"]
    assert [c["passed"] for c in green["checks"]] == [True, True, True]
    assert [c["passed"] for c in red["checks"]] == [False]
    for record in (green, red):
        assert record["scripted"] is True
        assert (record["tokens_in"], record["tokens_out"], record["cost_usd"]) == (None,) * 3
    # Every model request was answered by the script: none left the machine.
    found = recording.exchange_file(pytester.path / "evals" / "results" / green["recording"])
    assert found is not None
    posted = [e for e in recording.read(found).exchanges if e.method == "POST"]
    assert posted
    assert {e.source for e in posted} == {"scripted"}


def test_a_script_on_an_agent_whose_model_the_plugin_cannot_play_is_an_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".ini", tox="[pytest]\neval_agent = command\neval_agent_command = true\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "scripted.yaml").write_text(CASES)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        ["*scripted.yaml:2: `script:` plays the model of claude, codex, gemini only*'command'*"]
    )


@pytest.mark.real_cli
@pytest.mark.usefixtures("offline")
def test_a_tool_turn_calls_the_clis_tool_by_its_own_name_with_its_input(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = cli("claude")
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    pytester.makefile(".ini", tox="[pytest]\neval_agent = claude\n")
    (pytester.path / "evals" / "fixtures" / "api" / "src" / "api").mkdir(parents=True)
    (pytester.path / "evals" / "fixtures" / "api" / "src" / "api" / "orders.py").write_text(
        "ORDERS = 'MARK-orders'\n"
    )
    (pytester.path / "evals" / "reads.yaml").write_text(
        "id: reads\ndefends: AGENTS.md\ncwd: fixtures/api\nprompt: Read the orders module\n"
        "script:\n"
        "  - tool: Read\n"
        "    input: {file_path: src/api/orders.py}\n"
        "  - text: read it\n"
        "checks:\n"
        "  - {type: tool_called, tool: read, input: orders}\n"
        "  - {type: output_matches, pattern: read it}\n"
    )

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)


@pytest.mark.real_cli
@pytest.mark.usefixtures("offline")
def test_a_refused_key_stops_the_live_runs_and_never_the_scripted_ones(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = cli("claude")
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    with model_server(
        "anthropic", lambda request: Reply(status=401, error="invalid x-api-key")
    ) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-Wq4rT8yU2iO6")
        pytester.makefile(".ini", tox="[pytest]\neval_agent = claude\n")
        (pytester.path / "evals").mkdir()
        live = "  - id: live-{n}\n    defends: AGENTS.md\n    prompt: hi\n    checks:\n"
        live += "      - {{type: output_matches, pattern: hi}}\n"
        (pytester.path / "evals" / "mixed.yaml").write_text(
            "cases:\n" + live.format(n=1) + live.format(n=2) + CASES.split("cases:\n", 1)[1]
        )

        result = pytester.runpytest("-p", "no:cacheprovider")

    # The second live run is not started after the first one's refusal; the scripted
    # ones run all the same: their key is no one's.
    result.assert_outcomes(passed=1, failed=1, errors=2)
    records = {r["id"]: r for r in only_results(pytester.path)["cases"]}
    assert records["live-1"]["error_kind"] == "authentication"
    assert records["makes-a-file"]["outcome"] == "passed"
    assert records["red"]["outcome"] == "failed"
