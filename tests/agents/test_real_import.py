"""``evalcases import`` of sessions the real CLIs saved (docs/writing-cases.md, "From an
incident"): each CLI runs two turns in a git repository whose second commit comes after
the session; the imported case has the first turn's prompt verbatim, a fixture at the
first commit, lints clean but for its TODOs, collects, and under ``--eval-red-first``
against the scripted model is reported as passing on first write (it tests nothing
until the author writes its check).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from pytest_evalcases.cli.main import main
from tests.agents.test_real_clis import cli
from tests.helpers.git import git
from tests.helpers.model_server import ModelServer, Reply, Request, model_server
from tests.helpers.sandbox import USER_CACHE

pytestmark = pytest.mark.real_cli

#: Quotes, a colon, a blank line and an indented line: what a block scalar must keep.
PROMPT = 'Fix the "flaky" test in app.py: it fails on Mondays.\n\n  Keep the API as it is.'
SECOND = "Now run the tests."
#: The commit the session starts from, and the one made after it.
BEFORE = "2020-01-02T03:04:05+00:00"
AFTER = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() + 86400))


def acts(request: Request) -> Reply:
    """Run one shell command in the first turn, then answer."""
    if request.tool_results == 0:
        return Reply(shell="echo made-by-the-agent > made.txt", input_tokens=120, output_tokens=9)
    return Reply(text="done", output_tokens=4)


@dataclass(frozen=True)
class Cli:
    """One installed CLI pointed at the scripted model, with a home of its own."""

    name: str
    home: Path
    #: Each turn's command line, the prompt where it says ``{prompt}`` (else last).
    turns: tuple[tuple[str, ...], ...]
    #: What pytest needs to run the case with it.
    ini: str
    #: Where it saves its sessions, below its home.
    sessions: str


SESSION_ID = "3f2a9c1e-1111-4222-8333-444455556666"


@pytest.fixture(params=["claude", "codex", "gemini"])
def agent(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Cli]:
    name: str = request.param
    program = cli(name)
    dialect = {"claude": "anthropic", "codex": "openai", "gemini": "gemini"}[name]
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home = tmp_path / f"{name}-home"
    home.mkdir()
    with model_server(dialect, acts) as server:
        yield _configure(name, server, home, monkeypatch)


def _configure(name: str, server: ModelServer, home: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    if name == "claude":
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-Zq7xK2pW9mR4")
        monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
        allow = ("--permission-mode", "acceptEdits", "--allowedTools", "Bash")
        # --allowedTools takes any number of values: the prompt goes before it.
        first = ("claude", "-p", "{prompt}", "--output-format", "json", "--session-id", SESSION_ID)
        then = ("claude", "-p", "{prompt}", "--output-format", "json", "--resume", SESSION_ID)
        first, then = (*first, *allow), (*then, *allow)
        return Cli(name, home, (first, then), "[pytest]\n", "projects/*/*.jsonl")
    if name == "codex":
        monkeypatch.setenv("OPENAI_API_KEY", "sk-Jt5vN8cQ3hL6")
        monkeypatch.setenv("CODEX_HOME", str(home))
        # Codex sets up its own sandbox only outside /tmp (docs/agents.md, "The agent's home").
        monkeypatch.setenv("XDG_CACHE_HOME", str(USER_CACHE))
        provider = (
            f'model_providers.scripted={{name="scripted",base_url="{server.url}/v1",'
            'env_key="OPENAI_API_KEY",wire_api="responses",'
            "request_max_retries=0,stream_max_retries=0}"
        )
        config = ("-c", "model_provider=scripted", "-c", provider)
        bypass = "--dangerously-bypass-approvals-and-sandbox"
        first = ("codex", "exec", "--json", "--skip-git-repo-check", *config, bypass)
        then = ("codex", "exec", "resume", "--last", "--json", *config, bypass)
        ini = f"[pytest]\neval_agent_args = -c model_provider=scripted -c '{provider}'\n"
        return Cli(name, home, (first, then), ini, "sessions/*/*/*/rollout-*.jsonl")
    (home / ".gemini").mkdir()
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    settings["general"] = {"maxAttempts": 1}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    monkeypatch.setenv("GEMINI_API_KEY", "Wb4yF9dS2kP7")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    monkeypatch.setenv("GEMINI_CLI_NO_RELAUNCH", "true")
    first = ("gemini", "-o", "json", "--yolo", "--session-id", SESSION_ID, "-p")
    then = ("gemini", "-o", "json", "--yolo", "--resume", SESSION_ID, "-p")
    return Cli(name, home, (first, then), "[pytest]\n", ".gemini/tmp/*/chats/session-*.jsonl")


def session_in_repo(agent: Cli, repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A two-turn session of ``agent`` in a new repository ``repo``, started after its
    first commit; the second commit comes after the session. The session file."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "trunk")
    commit(repo, "app.py", "VERSION = 1\n", BEFORE, monkeypatch)
    for argv, prompt in zip(agent.turns, (PROMPT, SECOND), strict=True):
        done = subprocess.run(
            [prompt if a == "{prompt}" else a for a in argv]
            + ([] if "{prompt}" in argv else [prompt]),
            cwd=repo,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
    assert (repo / "made.txt").is_file()
    commit(repo, "app.py", "VERSION = 2\n", AFTER, monkeypatch)
    # Gemini CLI once (in CI, under load; not reproduced alone) left a second chat file
    # beside the session's: the session is the file that holds its first prompt, the
    # fullest one if two do.
    files = sorted(agent.home.glob(agent.sessions))
    holding = [f for f in files if "fails on Mondays" in f.read_text(errors="replace")]
    assert holding, [(f.name, f.stat().st_size) for f in files]
    return max(holding, key=lambda f: f.stat().st_size)


def commit(repo: Path, name: str, text: str, date: str, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / name).write_text(text)
    with monkeypatch.context() as patch:
        patch.setenv("GIT_AUTHOR_DATE", date)
        patch.setenv("GIT_COMMITTER_DATE", date)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"at {date}")


def test_an_imported_session_is_a_case_at_the_sessions_commit_that_is_red_first_until_checked(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    agent: Cli,
    tmp_path: Path,
) -> None:
    session = session_in_repo(agent, tmp_path / "repo", monkeypatch)
    first_commit = git(tmp_path / "repo", "rev-parse", "HEAD~1").strip()
    monkeypatch.chdir(pytester.path)

    assert main(["import", agent.name, str(session), "--at", "1"]) == 0

    out, err = capsys.readouterr()
    case = pytester.path / "evals" / "fix-the-flaky-test-in-app.yaml"
    fixture = pytester.path / "evals" / "fixtures" / "fix-the-flaky-test-in-app"
    assert out.split() == ["evals/fix-the-flaky-test-in-app.yaml", str(fixture)]
    command = f"pytest evals/{case.name} --eval-red-first --eval-agent {agent.name}"
    assert err.endswith(f"then confirm it fails first: {command}\n")
    text = case.read_text()
    data = yaml.safe_load(text)
    assert data["prompt"] == PROMPT
    assert data["cwd"] == f"fixtures/{fixture.name}"
    # The fixture is the repository at the session's start: the first commit, not HEAD.
    assert sorted(p.name for p in fixture.iterdir()) == ["app.py"]
    assert (fixture / "app.py").read_text() == "VERSION = 1\n"
    assert f"`git archive` of {first_commit}" in text
    how = "Codex recorded commit" if agent.name == "codex" else "records no commit"
    assert how in text
    assert "git init -q -b trunk" in data["setup"]
    assert 'tool: shell, input: "echo made-by-the-agent > made\\\\.txt"' in text
    assert data["defends"] == "TODO"

    # The one thing lint says is what is left to write.
    assert main(["lint", str(case.relative_to(pytester.path))]) == 0
    findings = capsys.readouterr().out.splitlines()
    assert findings == [
        f"evals/{case.name}:12: WARNING todo: TODO left for the author: defends",
        f"evals/{case.name}:{_line(text, '  - type:')}: WARNING todo: TODO left for the author: "
        "checks[0]",
    ]

    # Run as printed: its placeholder check passes, so red-first says it tests nothing.
    pytester.makefile(".ini", pytest=agent.ini)
    result = pytester.runpytest(*command.split()[1:], "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*passes on first write*"])
    assert (fixture / "app.py").read_text() == "VERSION = 1\n"


def _line(text: str, start: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(start))
