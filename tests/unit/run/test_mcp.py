"""The MCP servers of one run (docs/mcp.md): a mock as the plugin's own module with the
plugin's interpreter, its spec and log in a directory of the run's, what each driver
makes of the servers, and the cases it cannot run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_evalcases import mcpmock
from pytest_evalcases.agents import make_agent
from pytest_evalcases.agents.base import AgentResult, AgentSettings, RunRequest
from pytest_evalcases.cases.loading import LoadedCase
from pytest_evalcases.errors import RunError
from pytest_evalcases.run.mcp import mcp_run
from tests.unit.cases.test_mcp_field import CASE, load


def case(tmp_path: Path, text: str = CASE) -> LoadedCase:
    (loaded,) = load(tmp_path, text)
    return loaded


def request(tmp_path: Path, servers: tuple, bare: bool = True) -> RunRequest:  # type: ignore[type-arg]
    return RunRequest("p", tmp_path, bare, 10.0, {}, mcp_servers=servers)


def test_a_mock_runs_the_plugins_module_with_its_spec_and_a_log_of_the_run(tmp_path: Path) -> None:
    claude = make_agent(AgentSettings(name="claude"))
    with mcp_run(case(tmp_path), claude, "isolated", {"CLAUDE_CONFIG_DIR": "x"}) as run:
        tracker, github = run.servers
        (directory,) = run.writable
        assert (tracker.command, tracker.args[:2]) == (sys.executable, ("-I", mcpmock.__file__))
        assert tracker.env == ()
        spec = json.loads(Path(tracker.args[2]).read_text())
        assert spec["server"] == "tracker"
        assert spec["tools"]["lookup_ticket"]["returns"] == [
            {"match": "T-7", "returns": "the ticket"}
        ]
        assert Path(spec["log"]).parent == directory == run.log.parent
        assert (github.command, github.args, github.env) == (
            "npx",
            ("-y", "server-github"),
            (("TOKEN", "x"),),
        )
        result = run.attach(AgentResult(text="done"))
        assert result.mcp is not None
        assert (result.mcp.mocks, result.mcp.listed) == (("tracker",), ())
    # The run's directory goes with it.
    assert not directory.exists()


def test_a_case_without_mcp_gives_no_server(tmp_path: Path) -> None:
    command = make_agent(AgentSettings(name="command", command="echo {prompt}"))
    plain = case(
        tmp_path, CASE.split("mcp:")[0] + "checks:\n  - {type: output_matches, pattern: x}\n"
    )
    with mcp_run(plain, command, "isolated", {}) as run:
        assert (run.servers, run.writable, run.log) == ((), (), None)
        assert run.attach(AgentResult(text="x")).mcp is None


@pytest.mark.parametrize(
    ("agent", "mode", "said"),
    [
        ("command", "isolated", "gives MCP servers to claude, codex and gemini only"),
        ("gemini", "inherit", "never writes into the operator's"),
    ],
)
def test_a_case_with_mcp_its_agent_cannot_be_given_is_a_case_error(
    tmp_path: Path, agent: str, mode: str, said: str
) -> None:
    made = make_agent(AgentSettings(name=agent, command="echo {prompt}"))
    with pytest.raises(RunError, match=said) as info, mcp_run(case(tmp_path), made, mode, {}):  # type: ignore[arg-type]
        pass
    assert info.value.kind == "case"


def test_gemini_finds_the_servers_in_its_homes_settings(tmp_path: Path) -> None:
    gemini = make_agent(AgentSettings(name="gemini"))
    home_env = dict(gemini.isolate(tmp_path / "home", {"GEMINI_API_KEY": "k"}))
    with mcp_run(case(tmp_path), gemini, "isolated", home_env) as run:
        settings = json.loads(
            (Path(home_env["GEMINI_CLI_HOME"]) / ".gemini" / "settings.json").read_text()
        )
        assert settings["security"] == {"auth": {"selectedType": "gemini-api-key"}}
        assert settings["mcpServers"]["github"] == {
            "command": "npx",
            "args": ["-y", "server-github"],
            "env": {"TOKEN": "x"},
        }
        assert settings["mcpServers"]["tracker"]["args"][:2] == ["-I", mcpmock.__file__]
        assert list(settings["mcpServers"]) == [s.name for s in run.servers]


def test_claude_takes_only_the_runs_servers_and_allows_their_tools(tmp_path: Path) -> None:
    claude = make_agent(AgentSettings(name="claude"))
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"ws": {"command": "w"}}}))
    with mcp_run(case(tmp_path), claude, "inherit", {}) as run:
        bare = list(claude.invocation(request(tmp_path, run.servers)).argv)
        not_bare = list(claude.invocation(request(tmp_path, run.servers, bare=False)).argv)
    at = bare.index("--strict-mcp-config")
    inline = json.loads(bare[at + 2])
    assert list(inline["mcpServers"]) == ["tracker", "github"]
    assert bare[at + 3 :] == ["--allowedTools", "mcp__tracker", "mcp__github"]
    # Not bare: the workspace's .mcp.json too, named, as the strict flag ignores it.
    at = not_bare.index("--strict-mcp-config")
    assert not_bare[at + 3 :] == [
        str(tmp_path / ".mcp.json"),
        *("--allowedTools", "mcp__tracker", "mcp__github", "mcp__ws"),
    ]


def test_codex_gets_each_server_approved_on_the_command_line(tmp_path: Path) -> None:
    codex = make_agent(AgentSettings(name="codex"))
    with mcp_run(case(tmp_path), codex, "inherit", {}) as run:
        argv = list(codex.invocation(request(tmp_path, run.servers)).argv)
    overrides = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-c"]
    assert overrides[-1] == (
        'mcp_servers.github={"command"="npx","args"=["-y","server-github"],'
        '"env"={"TOKEN"="x"},"default_tools_approval_mode"="approve"}'
    )
    assert overrides[-2].startswith('mcp_servers.tracker={"command"=')
