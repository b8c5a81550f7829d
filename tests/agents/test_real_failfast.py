"""Failing fast, gateways and Gemini's folder trust with the real CLIs (docs/agents.md,
"Failing fast", "Model gateways"), against the scripted model servers of
:mod:`tests.helpers.model_server` on 127.0.0.1.

Claude Code retries a refused key for minutes on its own (CLAUDE_CODE_MAX_RETRIES is left
at its default here), and waits for an API it cannot reach: the session must end the
run at once and start no other run of the same credentials.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.recording import format as recording
from tests.agents.test_real_clis import CASE, acts, cli
from tests.helpers.model_server import ModelServer, Reply, model_server
from tests.helpers.results import only_results, results_files

pytestmark = pytest.mark.real_cli

KEY = "sk-ant-Zq7xK2pW9mR4"
CASES = 8
CLAUDE_INI = "[pytest]\neval_agent = claude\n"


@pytest.fixture
def claude_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ModelServer]:
    """The real ``claude`` pointed at a scripted Messages API, with its own retries."""
    program = cli("claude")
    with model_server("anthropic", acts) as server:
        monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        monkeypatch.delenv("CLAUDE_CODE_MAX_RETRIES", raising=False)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        yield server


def eight_cases(pytester: pytest.Pytester) -> None:
    pytester.makefile(".ini", tox=CLAUDE_INI)
    (pytester.path / "evals").mkdir()
    for i in range(CASES):
        (pytester.path / "evals" / f"acts{i}.yaml").write_text(
            CASE.replace("id: acts", f"id: acts{i}")
        )


def run_timed(pytester: pytest.Pytester, *options: str) -> tuple[pytest.RunResult, list[Any]]:
    began = time.monotonic()
    result = pytester.runpytest("-p", "no:cacheprovider", *options)
    # Measured for the record (docs/agents.md, "Failing fast"), never asserted.
    print(f"session of {CASES} cases {options}: {time.monotonic() - began:.1f}s")
    return result, only_results(pytester.path)["cases"]


MODES = pytest.mark.parametrize(
    ("options", "most"),
    [([], 1), (["--eval-concurrency", "2"], 2), (["-n", "2"], 2)],
    ids=["serial", "concurrency", "xdist"],
)


@MODES
def test_claude_with_a_wrong_key_runs_once_and_starts_no_other_run(
    pytester: pytest.Pytester, claude_api: ModelServer, options: list[str], most: int
) -> None:
    claude_api.script = lambda request: Reply(status=401, error="invalid x-api-key")
    eight_cases(pytester)

    result, cases = run_timed(pytester, *options)

    result.assert_outcomes(errors=CASES)
    assert {case["error_kind"] for case in cases} == {"authentication"}
    ran = [case["error"] for case in cases if "not started" not in case["error"]]
    assert 1 <= len(ran) <= most
    # Each run that started made one request: its CLI was ended before its first retry.
    assert len(claude_api.requests) == len(ran)
    for error in ran:
        assert error == (
            f"agent 'claude': the model API at {claude_api.url} refused the run's "
            "credentials: 401 Unauthorized: invalid x-api-key"
        )
    assert sum("not started: an earlier run of agent 'claude'" in c["error"] for c in cases) == (
        CASES - len(ran)
    )


@MODES
def test_claude_against_a_closed_port_runs_once_and_starts_no_other_run(
    pytester: pytest.Pytester,
    claude_api: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    options: list[str],
    most: int,
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", closed)
    eight_cases(pytester)

    result, cases = run_timed(pytester, *options)

    result.assert_outcomes(errors=CASES)
    assert {case["error_kind"] for case in cases} == {"server"}
    ran = [case["error"] for case in cases if "not started" not in case["error"]]
    assert 1 <= len(ran) <= most
    assert ran == [
        f"agent 'claude': the model API at {closed} could not be reached: "
        "[Errno 111] Connection refused"
    ] * len(ran)
    # Each run that started tried once: its CLI was ended before its first retry (the
    # proxy recorded every attempt).
    [results] = results_files(pytester.path)
    tries = [
        list(recording.read(results.parent / case["recording"] / recording.EXCHANGE).exchanges)
        for case in cases
        if case["recording"] and "not started" not in case["error"]
    ]
    assert [len(exchanges) for exchanges in tries] == [1] * len(ran)
    stopped = [case["error"] for case in cases if "not started" in case["error"]]
    assert len(stopped) == CASES - len(ran)
    assert all("Connection refused" in error for error in stopped)
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_bare_claude_case_runs_with_a_gateways_bearer_token_only(
    pytester: pytest.Pytester, claude_api: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "gw-Tq8zR3nV6kL1xY5"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", token)
    pytester.makefile(".ini", tox=CLAUDE_INI)
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "acts.yaml").write_text(CASE + "bare: true\n")

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    # The proxy forwarded the token as the CLI sent it ...
    assert claude_api.requests
    for request in claude_api.requests:
        assert request.headers.get("Authorization") == f"Bearer {token}"
        assert "x-api-key" not in {name.lower() for name in request.headers}
    # ... and the recording holds none of it.
    [results] = results_files(pytester.path)
    runs = results.parent / f"{results.stem}.runs"
    stored = [p for p in runs.rglob("*") if p.is_file()]
    assert any(p.name == recording.EXCHANGE for p in stored)
    for path in stored:
        assert token not in path.read_bytes().decode("utf-8", "replace")
    [exchange] = [p for p in stored if p.name == recording.EXCHANGE]
    for entry in recording.read(exchange).exchanges:
        assert "authorization" not in {name for name, _ in entry.request.headers}


@pytest.mark.parametrize("home", ["isolated", "inherit"])
def test_gemini_runs_in_its_workspace_without_the_user_trusting_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, home: str
) -> None:
    program = cli("gemini")
    with model_server("gemini", acts) as server:
        gemini_home = tmp_path / "gemini-home"
        (gemini_home / ".gemini").mkdir(parents=True)
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"maxAttempts": 1},
        }
        (gemini_home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
        monkeypatch.setenv("GEMINI_API_KEY", "Wb4yF9dS2kP7")
        monkeypatch.setenv("GEMINI_CLI_HOME", str(gemini_home))
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        # The user trusts nothing: not the workspace, not in the environment.
        monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE", raising=False)
        pytester.makefile(".ini", tox=f"[pytest]\neval_agent = gemini\neval_agent_home = {home}\n")
        (pytester.path / "evals").mkdir()
        (pytester.path / "evals" / "acts.yaml").write_text(
            CASE.replace(
                '{type: tool_called, tool: shell, input: "made\\\\.txt"}',
                "{type: tool_called, tool: shell}",
            )
        )

        result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    assert [r.tool_results for r in server.conversation()] == [0, 1]
    # The trust was the run's own: no trusted folder was written in the user's home.
    assert not (gemini_home / ".gemini" / "trustedFolders.json").exists()
