"""What a run the scripted model answers gets of the operator's environment
(agents/requirements.py, ``scripted_env``): none of their credentials, the drivers'
stand-ins instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.agents import claude, codex, gemini, home
from pytest_evalcases.agents.requirements import SCRIPTED_KEY, scripted_env

OPERATOR = {
    "PATH": "/usr/bin",
    "ANTHROPIC_API_KEY": "sk-ant-Rk2pW7qZ9x",
    "ANTHROPIC_AUTH_TOKEN": "Tb5nQ8vL3m",
    "CLAUDE_CODE_OAUTH_TOKEN": "Oa4kJ6hF1d",
    "CLAUDE_CODE_USE_BEDROCK": "1",
    "OPENAI_API_KEY": "sk-Mw3xC8bN5t",
    "CODEX_API_KEY": "Cx7gH2jK4l",
    "GEMINI_API_KEY": "Gm9sD4fR6y",
    "GOOGLE_API_KEY": "Gg1aZ5xV8u",
    "GOOGLE_GENAI_USE_VERTEXAI": "true",
}


@pytest.mark.parametrize(
    ("requirements", "key"),
    [
        (claude.REQUIREMENTS, "ANTHROPIC_API_KEY"),
        (codex.REQUIREMENTS, "OPENAI_API_KEY"),
        (gemini.REQUIREMENTS, "GEMINI_API_KEY"),
    ],
)
def test_none_of_the_operators_credentials_reach_a_scripted_run(
    requirements: object, key: str
) -> None:
    credentials = requirements.credentials  # type: ignore[attr-defined]
    env = scripted_env(credentials, OPERATOR, own_home=False)
    assert env[key] == SCRIPTED_KEY
    assert env["PATH"] == "/usr/bin"
    # Its own CLI's keys, tokens and providers (another CLI's are no concern of its).
    own = [*credentials.variables, *credentials.providers, *credentials.bare_variables]
    assert all(env.get(name) in (None, SCRIPTED_KEY) for name in own)


def test_a_scripted_run_reaches_no_other_machine_through_any_proxy() -> None:
    credentials = claude.REQUIREMENTS.credentials
    assert credentials is not None
    given = {**OPERATOR, "HTTPS_PROXY": "http://proxy.corp:3128", "NO_PROXY": "corp"}

    env = scripted_env(credentials, given, own_home=False)

    assert env["HTTPS_PROXY"] == env["HTTP_PROXY"] == env["all_proxy"] == "http://127.0.0.1:9"
    assert env["NO_PROXY"] == "127.0.0.1,localhost,::1"


def test_a_fresh_home_gets_no_login_copied_into_it(tmp_path: Path) -> None:
    login = tmp_path / ".codex" / "auth.json"
    login.parent.mkdir()
    login.write_text('{"OPENAI_API_KEY": "sk-Mw3xC8bN5t"}')
    credentials = codex.REQUIREMENTS.credentials
    assert credentials is not None

    inherited = scripted_env(credentials, {"HOME": str(tmp_path)}, own_home=False)
    isolated = scripted_env(credentials, {"HOME": str(tmp_path)}, own_home=True)
    _, copied = home.make(credentials.home, tmp_path / "run", isolated)

    # With the operator's own home the CLI uses it as it is; a fresh one holds nothing.
    assert home.source_dir(credentials.home, inherited) == login.parent
    assert list(copied.iterdir()) == []
