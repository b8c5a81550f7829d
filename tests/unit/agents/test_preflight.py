"""The preflight's checks (agents/preflight.py), on the drivers' own requirements: the
program on PATH, the credentials in the environment or the CLI's home, the version."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.agents import make_agent, preflight
from pytest_evalcases.agents.base import (
    AgentResult,
    AgentSettings,
    Invocation,
    RunRequest,
    adapt,
)
from pytest_evalcases.errors import UsageError
from pytest_evalcases.process import ProcessResult
from tests.helpers.agents import FAKES

#: Every variable that gives an agent a credential, or another provider with its own.
CREDENTIAL_VARIABLES = [
    ("claude", "ANTHROPIC_API_KEY"),
    ("claude", "ANTHROPIC_AUTH_TOKEN"),
    ("claude", "CLAUDE_CODE_OAUTH_TOKEN"),
    ("claude", "CLAUDE_CODE_USE_BEDROCK"),
    ("claude", "CLAUDE_CODE_USE_VERTEX"),
    ("claude", "CLAUDE_CODE_USE_FOUNDRY"),
    ("codex", "OPENAI_API_KEY"),
    ("codex", "CODEX_API_KEY"),
    ("gemini", "GEMINI_API_KEY"),
    ("gemini", "GOOGLE_API_KEY"),
    ("gemini", "GOOGLE_APPLICATION_CREDENTIALS"),
    ("gemini", "GOOGLE_GENAI_USE_VERTEXAI"),
]


def env_of(home: Path, **variables: str) -> dict[str, str]:
    """An environment with the fake CLIs on PATH, ``home`` as HOME and no credential."""
    path = f"{FAKES}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
    return {"PATH": path, "HOME": str(home), **variables}


def check(
    name: str,
    home: Path,
    *,
    runs: int = 1,
    bare: int = 0,
    scripted: int = 0,
    platform: str = "linux",
    **env: str,
) -> preflight.Checked:
    agent = make_agent(AgentSettings(name, command="fake-agent {prompt}"))
    needs = preflight.Needs(runs=runs, bare=bare, scripted=scripted)
    return preflight.check(agent, needs, env_of(home, **env), home, platform=platform)


def problem(name: str, home: Path, **kwargs: Any) -> str:
    with pytest.raises(UsageError) as info:
        check(name, home, **kwargs)
    return str(info.value)


def login(home: Path, *parts: str) -> Path:
    path = home.joinpath(*parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}", "utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "install"),
    [
        ("claude", "npm install -g @anthropic-ai/claude-code"),
        ("codex", "npm install -g @openai/codex"),
        ("gemini", "npm install -g @google/gemini-cli"),
    ],
)
def test_a_missing_program_names_it_and_its_install_command(
    tmp_path: Path, name: str, install: str
) -> None:
    agent = make_agent(AgentSettings(name))
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}

    with pytest.raises(UsageError) as info:
        preflight.check(agent, preflight.Needs(runs=1), env, tmp_path)

    assert str(info.value) == (
        f"agent {name!r}: program {name!r} not found on PATH; "
        f"install it with `{install}`, or put it on PATH"
    )


def test_a_missing_command_names_its_first_word(tmp_path: Path) -> None:
    agent = make_agent(AgentSettings("command", command="no-such-cli --flag {prompt}"))

    with pytest.raises(UsageError) as info:
        preflight.check(agent, preflight.Needs(runs=1), env_of(tmp_path), tmp_path)

    assert str(info.value) == (
        "agent 'command': program 'no-such-cli' (the first word of eval_agent_command) "
        "not found on PATH; correct eval_agent_command (ini) or --eval-agent-command"
    )


@pytest.mark.parametrize(
    ("name", "variables", "file"),
    [
        (
            "claude",
            "ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN",
            ".claude/.credentials.json exists ($CLAUDE_CONFIG_DIR, default ~/.claude)",
        ),
        (
            "codex",
            "OPENAI_API_KEY or CODEX_API_KEY",
            ".codex/auth.json exists ($CODEX_HOME, default ~/.codex)",
        ),
        (
            "gemini",
            "GEMINI_API_KEY, GOOGLE_API_KEY or GOOGLE_APPLICATION_CREDENTIALS",
            ".gemini/oauth_creds.json exists ($GEMINI_CLI_HOME/.gemini, default ~/.gemini)",
        ),
    ],
)
def test_no_credential_names_the_variables_and_the_login_file(
    tmp_path: Path, name: str, variables: str, file: str
) -> None:
    assert problem(name, tmp_path) == (
        f"agent {name!r} has no credentials: set {variables}, or log in so that {tmp_path}/{file}"
    )


@pytest.mark.parametrize("name", ["claude", "codex", "gemini"])
def test_runs_the_scripted_model_answers_ask_for_no_credential(tmp_path: Path, name: str) -> None:
    check(name, tmp_path, runs=2, bare=0, scripted=2)
    # One live run among them asks for one again.
    assert "has no credentials" in problem(name, tmp_path, runs=3, scripted=2)


@pytest.mark.parametrize(
    "args",
    [
        ("-c", "model_provider=mine"),
        (
            "-c",
            'model_providers.mine={base_url="http://127.0.0.1:9/v1"}',
            "-c",
            "model_provider=mine",
        ),
        ("--oss",),
    ],
)
def test_a_codex_provider_of_the_users_own_brings_its_own_credentials(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    agent = make_agent(AgentSettings("codex", args=args))
    checked = preflight.check(agent, preflight.Needs(runs=1), env_of(tmp_path), tmp_path)
    assert checked.program == "codex"


@pytest.mark.parametrize(("name", "variable"), CREDENTIAL_VARIABLES)
def test_any_one_variable_is_enough_but_not_an_empty_one(
    tmp_path: Path, name: str, variable: str
) -> None:
    assert check(name, tmp_path, **{variable: "x"}).program == name
    assert "no credentials" in problem(name, tmp_path, **{variable: ""})


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("claude", (".claude", ".credentials.json")),
        ("codex", (".codex", "auth.json")),
        ("gemini", (".gemini", "oauth_creds.json")),
    ],
)
def test_a_login_file_in_the_default_home_is_enough(
    tmp_path: Path, name: str, parts: tuple[str, ...]
) -> None:
    login(tmp_path, *parts)

    assert check(name, tmp_path).version == f"{name} 0.0.0 (fake)"


@pytest.mark.parametrize(
    ("name", "variable", "parts"),
    [
        ("claude", "CLAUDE_CONFIG_DIR", (".credentials.json",)),
        ("codex", "CODEX_HOME", ("auth.json",)),
        ("gemini", "GEMINI_CLI_HOME", (".gemini", "oauth_creds.json")),
    ],
)
def test_the_home_variable_moves_the_login_file(
    tmp_path: Path, name: str, variable: str, parts: tuple[str, ...]
) -> None:
    moved = tmp_path / "elsewhere"
    login(moved, *parts)

    assert check(name, tmp_path, **{variable: str(moved)}).program == name
    empty = tmp_path / "empty"
    assert f"so that {empty}/" in problem(name, tmp_path, **{variable: str(empty)})


def test_a_bare_claude_run_with_only_the_oauth_token_is_an_error(tmp_path: Path) -> None:
    token = {"CLAUDE_CODE_OAUTH_TOKEN": "t"}
    assert check("claude", tmp_path, bare=0, **token).program == "claude"
    said = problem("claude", tmp_path, bare=1, **token)
    assert "1 collected case runs bare" in said
    assert said.endswith(
        "reads only ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN; set one, or write "
        "`bare: false` on those cases"
    )


def test_a_bare_claude_run_with_only_a_gateway_token_passes(tmp_path: Path) -> None:
    # Claude Code 2.1.197 --bare sends it as `Authorization: Bearer` (docs/agents.md).
    checked = check("claude", tmp_path, runs=2, bare=2, ANTHROPIC_AUTH_TOKEN="t")
    assert checked.program == "claude"


def test_a_bare_claude_run_with_only_the_login_file_is_an_error(tmp_path: Path) -> None:
    credentials = login(tmp_path, ".claude", ".credentials.json")

    assert check("claude", tmp_path, runs=3, bare=0).program == "claude"
    assert problem("claude", tmp_path, runs=3, bare=2) == (
        "agent 'claude': 2 collected cases run bare (`claude --bare`), which ignores "
        "CLAUDE_CODE_OAUTH_TOKEN, the "
        f"login in {credentials} and the keychain and reads only ANTHROPIC_API_KEY or "
        "ANTHROPIC_AUTH_TOKEN; set one, or write `bare: false` on those cases"
    )
    assert "1 collected case runs bare" in problem("claude", tmp_path, bare=1)
    assert check("claude", tmp_path, bare=2, ANTHROPIC_API_KEY="x").program == "claude"


def test_bare_runs_of_the_other_agents_log_in_as_usual(tmp_path: Path) -> None:
    login(tmp_path, ".codex", "auth.json")
    login(tmp_path, ".gemini", "oauth_creds.json")

    assert check("codex", tmp_path, bare=1).program == "codex"
    assert check("gemini", tmp_path, bare=1).program == "gemini"


def test_on_macos_a_claude_login_may_be_in_the_keychain(tmp_path: Path) -> None:
    assert check("claude", tmp_path, platform="darwin").program == "claude"
    assert "reads only ANTHROPIC_API_KEY" in problem("claude", tmp_path, bare=1, platform="darwin")
    assert "no credentials" in problem("codex", tmp_path, platform="darwin")


def test_the_command_agent_has_no_credential_check_and_no_version(tmp_path: Path) -> None:
    agent = make_agent(AgentSettings("command", command=f"{FAKES / 'claude'} {{prompt}}"))

    checked = preflight.check(agent, preflight.Needs(runs=1), env_of(tmp_path), tmp_path)

    assert checked == preflight.Checked(str(FAKES / "claude"), None)


class ThirdParty:
    """An agent of someone else's: no requirements declared."""

    name = "mine"

    def __init__(self, argv: tuple[str, ...]) -> None:
        self.argv = argv

    def invocation(self, request: RunRequest) -> Invocation:
        return Invocation(self.argv)

    def parse(self, result: ProcessResult, request: RunRequest) -> AgentResult:  # pragma: no cover
        raise NotImplementedError


def test_a_third_party_agent_gets_the_program_check_and_the_version_only(tmp_path: Path) -> None:
    # Adapted as make_agent adapts what a registered factory makes.
    found = adapt(ThirdParty(("gemini", "-p")), AgentSettings("mine"))
    missing = adapt(ThirdParty(("not-there",)), AgentSettings("mine"))

    checked = preflight.check(found, preflight.Needs(runs=1), env_of(tmp_path), tmp_path)
    with pytest.raises(UsageError) as info:
        preflight.check(missing, preflight.Needs(runs=1), env_of(tmp_path), tmp_path)

    assert checked == preflight.Checked("gemini", "gemini 0.0.0 (fake)")
    assert str(info.value) == (
        "agent 'mine': program 'not-there' not found on PATH; "
        "install it, or choose another agent with --eval-agent"
    )


def test_a_version_that_fails_or_hangs_is_unknown(tmp_path: Path) -> None:
    script = tmp_path / "slow"
    script.write_text("#!/bin/sh\nsleep 5\n", "utf-8")
    script.chmod(0o755)
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\nexit 1\n", "utf-8")
    failing.chmod(0o755)
    env = env_of(tmp_path)

    assert preflight.read_version(str(script), env, tmp_path, timeout=0.2) is None
    assert preflight.read_version(str(failing), env, tmp_path, timeout=5) is None
    assert preflight.read_version("not-there", env, tmp_path, timeout=5) is None


def test_machine_files_lists_what_exists_of_the_machine_wide_configuration(
    tmp_path: Path,
) -> None:
    etc = tmp_path / "etc"
    (etc / "claude-code" / "managed-settings.d").mkdir(parents=True)
    (etc / "claude-code" / "CLAUDE.md").write_text("policy")
    (etc / "claude-code" / "managed-settings.d" / "10-base.json").write_text("{}")
    (etc / "elsewhere.json").write_text("{}")
    needs = preflight.Requirements(
        machine_config=(
            ("", str(etc / "claude-code")),
            ("SYSTEM_SETTINGS", str(etc / "settings.json")),
            ("", str(etc / "absent")),
        )
    )

    assert preflight.machine_files(needs, {}) == (
        etc / "claude-code" / "CLAUDE.md",
        etc / "claude-code" / "managed-settings.d" / "10-base.json",
    )
    # A variable moves the default: the file it names counts, the default does not.
    moved = {"SYSTEM_SETTINGS": str(etc / "elsewhere.json")}
    assert preflight.machine_files(needs, moved)[-1] == etc / "elsewhere.json"
    assert preflight.machine_files(preflight.Requirements(), {}) == ()


def test_the_built_in_agents_name_their_machine_wide_configuration() -> None:
    def defaults(name: str) -> list[str]:
        requirements = make_agent(AgentSettings(name=name)).requirements
        assert requirements is not None
        return [default for _, default in requirements.machine_config]

    assert defaults("claude") == ["/etc/claude-code"]
    assert defaults("codex") == ["/etc/codex"]
    assert defaults("gemini") == [
        "/etc/gemini-cli/settings.json",
        "/etc/gemini-cli/system-defaults.json",
    ]
