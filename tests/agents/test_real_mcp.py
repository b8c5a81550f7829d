"""A case's MCP servers with the real Claude Code, Codex and Gemini CLI, offline against
the scripted model (docs/mcp.md): the example's mock tracker is called and graded from
the mock's own log, the answer its ``match`` chose reaches the model, ``mcp_not_called``
fails a call, a regrade grades the stored calls again; no MCP server of the operator's
starts, and a workspace's ``.mcp.json`` does only with ``bare: false``.

A server "starts" here when a file appears: the plugin's own mock server, given a spec
whose log is that file, writes a line to it as it starts. Those tests run without the
sandbox (:data:`UNCONTAINED`), whose private ``/tmp`` and read-only filesystem would keep
a started server from leaving its file; which servers a CLI starts does not depend on it.
The example's runs are contained (``eval_sandbox`` ``auto``, bubblewrap where installed).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases import mcpmock
from tests.agents.test_real_clis import cli
from tests.helpers.results import only_results, results_files
from tests.plugin.test_scripted import offline  # noqa: F401 (fixture)

pytestmark = [pytest.mark.real_cli, pytest.mark.usefixtures("offline")]

EXAMPLE = Path(__file__).parents[2] / "example_cases" / "mcp-tracker"
AGENTS = ["claude", "codex", "gemini"]

#: What the marker tests run with: no sandbox, so that a started server leaves its file.
UNCONTAINED = ("-p", "no:cacheprovider", "-o", "eval_sandbox=none")

#: The example's case with the closing tool called too: `not-closed` must fail.
CLOSES = """
  - mcp: {server: tracker, tool: close_ticket}
    input: {id: T-7}
"""


@pytest.fixture
def example(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example as the pytester directory, the CLIs on the path, and no
    ``PYTHONPATH`` for them to pass on to a mock server."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    for name in AGENTS:
        monkeypatch.setenv("PATH", f"{cli(name).parent}{os.pathsep}{os.environ['PATH']}")
    shutil.copytree(
        EXAMPLE, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("results")
    )
    return pytester.path


def record_of(root: Path) -> dict[str, Any]:
    (record,) = only_results(root)["cases"]
    assert isinstance(record, dict)
    return record


def checks_of(record: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    return {c["id"]: (c["passed"], c["message"]) for c in record["checks"]}


def stored_run(root: Path, record: dict[str, Any]) -> dict[str, Any]:
    data = json.loads((root / "evals" / "results" / record["recording"] / "run.json").read_text())
    assert isinstance(data, dict)
    return data


def not_bare(root: Path) -> None:
    """The example's case with ``bare: false``."""
    case = root / "evals" / "ticket-looked-up.yaml"
    case.write_text(case.read_text().replace("prompt:", "bare: false\nprompt:", 1))


def marker_server(marker: Path, name: str) -> dict[str, Any]:
    """A server that leaves ``marker`` behind when a CLI starts it."""
    spec = marker.with_suffix(".spec.json")
    tools = {"ping_me": {"description": "a tool", "returns": "pong"}}
    spec.write_text(json.dumps({"server": name, "log": str(marker), "tools": tools}))
    program, *args = mcpmock.command(spec)
    return {"command": program, "args": args, "env": {}}


def test_a_marker_server_leaves_its_marker_when_started(tmp_path: Path) -> None:
    # What the tests below rely on: a started server leaves its file.
    server = marker_server(tmp_path / "started.log", "probe")
    subprocess.run([server["command"], *server["args"]], input="", check=True)
    assert (tmp_path / "started.log").is_file()


@pytest.mark.parametrize("agent", AGENTS)
def test_the_mock_tracker_is_called_and_graded_from_its_log(
    pytester: pytest.Pytester, example: Path, agent: str
) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-agent", agent)

    result.assert_outcomes(passed=1)
    record = record_of(example)
    checks = checks_of(record)
    assert all(passed for passed, _ in checks.values()), checks
    assert checks["looked-up"][1].endswith("""called 1 time(s): lookup_ticket '{"id":"T-7"}'""")
    # The answer the first `match` chose reached the model, not the fallback.
    assert "drops the cents" in checks["ticket-reached-model"][1]
    # The mock's own log, as the run stored it.
    served = stored_run(example, record)["mcp"]
    assert served["mocks"] == ["tracker"]
    assert served["listed"] == ["tracker"]
    assert served["calls"] == [
        [{"server": "tracker", "tool": "lookup_ticket", "input": '{"id":"T-7"}'}]
    ]

    # A regrade reads the stored calls: no CLI, no mock.
    regraded = pytester.runpytest("-p", "no:cacheprovider", "--eval-agent", agent, "--eval-regrade")
    regraded.assert_outcomes(passed=1)


@pytest.mark.parametrize("agent", AGENTS)
def test_mcp_not_called_fails_when_the_tool_was_called(
    pytester: pytest.Pytester, example: Path, agent: str
) -> None:
    case = example / "evals" / "ticket-looked-up.yaml"
    text = case.read_text()
    case.write_text(text.replace("script:\n", "script:" + CLOSES, 1))

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-agent", agent)

    result.assert_outcomes(failed=1)
    checks = checks_of(record_of(example))
    assert checks["not-closed"] == (
        False,
        "MCP server 'tracker' tool 'close_ticket' must not be called; "
        """called close_ticket '{"id":"T-7"}'""",
    )
    assert checks["looked-up"][0] is True


def test_no_server_of_the_operators_starts(
    pytester: pytest.Pytester,
    example: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The operator's home, away from the suite (pytester's HOME is the suite's directory,
    # above the workspaces, whose .gemini/ Gemini CLI would read as the project's).
    tmp_path = tmp_path_factory.mktemp("operator")
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    markers = {
        name: tmp_path / f"{name}.log"
        for name in ("claude-home", "claude-config", "codex", "gemini")
    }
    (home / ".codex").mkdir(parents=True)
    (home / ".gemini").mkdir()
    config = tmp_path / "claude-config"
    config.mkdir()
    servers = {name: marker_server(path, name) for name, path in markers.items()}
    for path, name in (
        (home / ".claude.json", "claude-home"),
        (config / ".claude.json", "claude-config"),
    ):
        path.write_text(json.dumps({"mcpServers": {name: servers[name]}}))
    (home / ".gemini" / "settings.json").write_text(
        json.dumps({"mcpServers": {"gemini": servers["gemini"]}})
    )
    codex = servers["codex"]
    (home / ".codex" / "config.toml").write_text(
        "[mcp_servers.codex]\n"
        f"command = {json.dumps(codex['command'])}\n"
        f"args = {json.dumps(codex['args'])}\n"
    )

    # Not bare: Claude Code's --bare alone would keep them out.
    not_bare(example)
    for agent in AGENTS:
        result = pytester.runpytest(*UNCONTAINED, "--eval-agent", agent)
        result.assert_outcomes(passed=1)
    # An inherited home of Claude Code's: its .claude.json is the operator's own.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    inherited = pytester.runpytest(
        *UNCONTAINED, "--eval-agent", "claude", "-o", "eval_agent_home=inherit"
    )
    inherited.assert_outcomes(passed=1)

    started = {name: path.read_text() for name, path in markers.items() if path.exists()}
    assert started == {}
    assert len(results_files(example)) == 4


@pytest.mark.parametrize("bare", [False, True])
def test_a_workspace_mcp_json_server_starts_only_when_not_bare(
    pytester: pytest.Pytester, example: Path, tmp_path: Path, bare: bool
) -> None:
    marker = tmp_path / "workspace-server.log"
    fixture = example / "evals" / "fixtures" / "shop"
    server = marker_server(marker, "wsserver")
    (fixture / ".mcp.json").write_text(json.dumps({"mcpServers": {"wsserver": server}}))
    if not bare:
        not_bare(example)

    result = pytester.runpytest(*UNCONTAINED, "--eval-agent", "claude")

    result.assert_outcomes(passed=1)
    assert marker.exists() is not bare


@pytest.mark.parametrize("trusted", [False, True])
def test_a_workspace_codex_config_server_starts_only_in_a_trusted_project(
    pytester: pytest.Pytester, example: Path, tmp_path: Path, trusted: bool
) -> None:
    marker = tmp_path / "workspace-server.log"
    server = marker_server(marker, "wsserver")
    config = example / "evals" / "fixtures" / "shop" / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        "[mcp_servers.wsserver]\n"
        f"command = {json.dumps(server['command'])}\n"
        f"args = {json.dumps(server['args'])}\n"
    )
    not_bare(example)
    trust = ["-o", "eval_agent_args=--trust"] if trusted else []

    result = pytester.runpytest(*UNCONTAINED, "--eval-agent", "codex", *trust)

    result.assert_outcomes(passed=1)
    assert marker.exists() is trusted


def test_mcp_not_called_of_a_real_server_claude_could_not_start_is_an_error(
    pytester: pytest.Pytester, example: Path
) -> None:
    case = example / "evals" / "ticket-looked-up.yaml"
    broken = '  broken:\n    command: "false"\n'
    text = case.read_text().replace("mcp:\n", "mcp:\n" + broken, 1)
    check = "  - {id: broken-unused, type: mcp_not_called, server: broken}\n"
    case.write_text(text + check)

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-agent", "claude")

    result.assert_outcomes(errors=1)
    record = record_of(example)
    assert record["error_kind"] == "no-transcript"
    said = "did not connect to the server (connected: tracker)"
    result.stdout.fnmatch_lines([f"*mcp_not_called broken: the claude agent {said}*"])


#: The example's case as a conversation: the ticket is looked up on the first turn only,
#: and the second turn closes nothing but writes a note.
TWO_TURNS = """\
follow_ups:
  - And note it in NOTES.md.
checks:
  - {id: looked-up-first, type: mcp_called, server: tracker, tool: lookup_ticket, turn: 1}
  - {id: not-again, type: mcp_not_called, server: tracker, tool: lookup_ticket, turn: 2}
  - {id: looked-up-at-all, type: mcp_called, server: tracker, tool: lookup_ticket}
  - {id: noted, type: tool_called, tool: shell, input: NOTES, turn: 2}
"""


@pytest.mark.parametrize("agent", AGENTS)
def test_a_conversations_mcp_calls_are_each_turns_own(
    pytester: pytest.Pytester, example: Path, agent: str
) -> None:
    case = example / "evals" / "ticket-looked-up.yaml"
    text = case.read_text().split("checks:\n")[0]
    text = text.replace(
        "  - text: Fixed T-7 as the ticket says.\n",
        "  - text: Fixed T-7 as the ticket says.\n"
        "  - shell: echo fixed T-7 > NOTES.md\n"
        "  - text: Noted.\n",
    )
    case.write_text(text + TWO_TURNS)

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-agent", agent)

    result.assert_outcomes(passed=1)
    record = record_of(example)
    checks = checks_of(record)
    assert all(passed for passed, _ in checks.values()), checks
    assert checks["not-again"][1].startswith("turn 2: no call of")
    # The mock's log, kept per turn.
    served = stored_run(example, record)["mcp"]
    assert served["calls"] == [
        [{"server": "tracker", "tool": "lookup_ticket", "input": '{"id":"T-7"}'}],
        [],
    ]

    # The same check of turn 1 fails: the call was that turn's.
    case.write_text(case.read_text().replace("turn: 2}", "turn: 1}", 1))
    regraded = pytester.runpytest("-p", "no:cacheprovider", "--eval-agent", agent, "--eval-regrade")
    regraded.assert_outcomes(failed=1)
