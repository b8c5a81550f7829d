"""agents/home.py and the drivers' ``isolate``: a fresh agent home holds the operator's
credential files and nothing else; the runner removes it after the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_evalcases.agents import make_agent
from pytest_evalcases.agents.base import AgentSettings
from pytest_evalcases.run.agenthome import agent_home


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def operator_home(tmp_path: Path) -> Path:
    """A home full of personal configuration, with one credential file per CLI."""
    home = tmp_path / "operator"
    for name, text in {
        ".claude/CLAUDE.md": "personal rule",
        ".claude/settings.json": '{"hooks": {}}',
        ".claude/skills/mine/SKILL.md": "a skill",
        ".claude/.credentials.json": '{"claudeAiOauth": "token"}',
        ".codex/AGENTS.md": "personal rule",
        ".codex/config.toml": 'model = "mine"',
        ".codex/auth.json": '{"OPENAI_API_KEY": "sk-mine"}',
        ".gemini/GEMINI.md": "personal rule",
        ".gemini/settings.json": json.dumps(
            {"security": {"auth": {"selectedType": "oauth-personal"}}, "mcpServers": {"x": {}}}
        ),
        ".gemini/oauth_creds.json": '{"refresh_token": "r"}',
        ".gemini/google_accounts.json": '{"active": "me@example.com"}',
    }.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return home


@pytest.mark.parametrize(
    ("agent", "variable", "copied"),
    [
        ("claude", "CLAUDE_CONFIG_DIR", [".credentials.json"]),
        ("codex", "CODEX_HOME", ["auth.json"]),
        (
            "gemini",
            "GEMINI_CLI_HOME",
            [".gemini/google_accounts.json", ".gemini/oauth_creds.json", ".gemini/settings.json"],
        ),
    ],
)
def test_a_fresh_home_holds_only_the_credentials(
    tmp_path: Path, agent: str, variable: str, copied: list[str]
) -> None:
    home = operator_home(tmp_path)
    root = tmp_path / "run"
    root.mkdir()

    variables = make_agent(AgentSettings(name=agent)).isolate(root, {"HOME": str(home)})

    assert list(variables) == [variable]
    fresh = Path(variables[variable])
    assert fresh.is_relative_to(root)
    assert files(fresh) == copied
    for name in copied:
        if name.endswith("settings.json"):
            continue
        source = home / f".{agent}" / Path(name).name
        assert (fresh / name).read_text() == source.read_text()
        assert (fresh / name).stat().st_mode & 0o077 == 0


def test_gemini_keeps_only_the_operators_auth_choice(tmp_path: Path) -> None:
    home = operator_home(tmp_path)

    variables = make_agent(AgentSettings(name="gemini")).isolate(tmp_path, {"HOME": str(home)})

    settings = json.loads(
        (Path(variables["GEMINI_CLI_HOME"]) / ".gemini/settings.json").read_text()
    )
    assert settings == {"security": {"auth": {"selectedType": "oauth-personal"}}}


def test_gemini_selects_api_key_auth_when_a_key_is_set_and_nothing_is_chosen(
    tmp_path: Path,
) -> None:
    env = {"HOME": str(tmp_path / "empty"), "GEMINI_API_KEY": "k"}

    variables = make_agent(AgentSettings(name="gemini")).isolate(tmp_path / "run", env)

    settings = json.loads(
        (Path(variables["GEMINI_CLI_HOME"]) / ".gemini/settings.json").read_text()
    )
    assert settings == {"security": {"auth": {"selectedType": "gemini-api-key"}}}


def test_the_cli_variable_names_the_real_home_to_copy_from(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "auth.json").write_text("{}")
    env = {"HOME": str(tmp_path / "nothing-here"), "CODEX_HOME": str(elsewhere)}

    variables = make_agent(AgentSettings(name="codex")).isolate(tmp_path / "run", env)

    assert files(Path(variables["CODEX_HOME"])) == ["auth.json"]


def test_the_runner_removes_the_home_after_the_run_and_inherit_makes_none(
    tmp_path: Path,
) -> None:
    claude = make_agent(AgentSettings(name="claude"))
    operator = operator_home(tmp_path)
    env = {"HOME": str(operator)}

    with agent_home(claude, env, "isolated") as (variables, writable):
        made = Path(variables["CLAUDE_CONFIG_DIR"])
        assert (made / ".credentials.json").is_file()
        # In a sandbox the fresh home is what the agent may write, besides its workspace.
        assert writable == (made.parent,)
    assert not made.parent.exists()

    with agent_home(claude, env, "inherit") as (variables, writable):
        assert variables == {}
        # The operator's own: ~/.claude and ~/.claude.json, not the rest of $HOME.
        assert writable == (operator / ".claude", operator / ".claude.json")
    with agent_home(claude, {**env, "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}, "inherit") as (
        _,
        writable,
    ):
        assert writable == (tmp_path / "cfg",)
    command = make_agent(AgentSettings(name="command", command="true"))
    with agent_home(command, env, "isolated") as (variables, writable):
        assert variables == {}
        assert writable == ()
