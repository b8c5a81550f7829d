"""Shared by the agent tests: the environment that puts the fake CLIs on PATH."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.agents.base import Agent, AgentResult, AgentSettings, RunRequest, run_agent
from pytest_evalcases.errors import AgentError

#: The shared data stays at the top of tests/, beside this package.
FAKES = Path(__file__).parents[1] / "fake_agents"
SAMPLES = Path(__file__).parents[1] / "agent_samples"


def fake_env(
    sample: Path | str | None = None, exit_code: int = 0, stderr: str = "", **env: str
) -> dict[str, str]:
    """This process's environment with the fakes first on PATH, printing ``sample``
    (a file name in agent_samples/ or a path) and exiting with ``exit_code``."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_AGENT_")}
    full["PATH"] = f"{FAKES}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
    if sample is not None:
        full["FAKE_AGENT_SAMPLE"] = str(SAMPLES / sample if isinstance(sample, str) else sample)
    full["FAKE_AGENT_EXIT"] = str(exit_code)
    full["FAKE_AGENT_STDERR"] = stderr
    full.update(env)
    return full


def fake_request(
    workspace: Path,
    *,
    sample: Path | str | None = None,
    exit_code: int = 0,
    stderr: str = "",
    prompt: str = "Do the task.",
    bare: bool = True,
    needs_transcript: bool = False,
    timeout: float = 30,
    **env: str,
) -> RunRequest:
    """A run of a fake CLI: ``sample`` is a file name in agent_samples/ or a path."""
    return RunRequest(
        prompt=prompt,
        workspace=workspace,
        bare=bare,
        timeout=timeout,
        env=fake_env(sample, exit_code, stderr, **env),
        needs_transcript=needs_transcript,
    )


class Driver:
    """One agent driver under test, built from its factory with per-test settings, and
    the fake CLI's runs it is tested with: ``prompt`` and ``bare`` unless a test says."""

    def __init__(
        self,
        factory: Callable[[AgentSettings], Agent],
        name: str,
        *,
        prompt: str = "Do the task.",
        bare: bool = True,
    ) -> None:
        self.factory = factory
        self.name = name
        self.prompt = prompt
        self.bare = bare

    def agent(self, **settings: Any) -> Agent:
        return self.factory(AgentSettings(name=self.name, **settings))

    def request(self, workspace: Path, **kwargs: Any) -> RunRequest:
        """A run of this driver's fake CLI (:func:`fake_request`)."""
        kwargs.setdefault("prompt", self.prompt)
        kwargs.setdefault("bare", self.bare)
        return fake_request(workspace, **kwargs)

    def run(self, req: RunRequest, **settings: Any) -> AgentResult:
        return run_agent(self.agent(**settings), req)

    def error(self, req: RunRequest, **settings: Any) -> AgentError:
        with pytest.raises(AgentError) as info:
            self.run(req, **settings)
        return info.value

    def runpytest(self, pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
        """Run the plugin in ``pytester`` with this driver as ``--eval-agent``."""
        return pytester.runpytest("--eval-agent", self.name, "-p", "no:cacheprovider", *args)

    def run_cases(
        self,
        pytester: pytest.Pytester,
        monkeypatch: pytest.MonkeyPatch,
        cases: dict[str, str],
        sample: str,
        *args: str,
        exit_code: int = 0,
    ) -> pytest.RunResult:
        """The plugin run over ``cases`` (path without ``.yaml`` -> YAML) in ``pytester``,
        this driver's fake printing ``sample`` and exiting with ``exit_code``."""
        pytester.makefile(".yaml", **cases)
        # The fake CLI may keep its record in the rootdir, also under the sandbox, and
        # reads its sample from this checkout, which may be below /tmp (hidden there).
        pytester.makeini(f"[pytest]\neval_sandbox_rw = .\neval_sandbox_ro = {SAMPLES}\n")
        use_fake(monkeypatch, sample, exit_code)
        return self.runpytest(pytester, *args)

    def recorded_run(self, workspace: Path, **kwargs: Any) -> dict[str, Any]:
        """Run ``request(workspace, **kwargs)`` recording the fake CLI: its one call."""
        record = workspace / "record.json"
        self.run(self.request(workspace, FAKE_AGENT_RECORD=str(record), **kwargs))
        (seen,) = recorded_calls(record)
        return seen


#: A credential for each agent CLI, so that the session's preflight lets the fakes run.
#: Variables the drivers read for nothing else (ANTHROPIC_API_KEY changes Claude's hints).
#: Values share no 8 characters with what the plugin writes: any such piece of a secret
#: is redacted (a value with "evalcases" in it redacted the stored runs' format name).
FAKE_CREDENTIALS = {
    # A bare Claude run reads this one only (docs/agents.md, "Before the first run").
    "ANTHROPIC_API_KEY": "a1f3c9e27b5d4086",
    "CODEX_API_KEY": "c2e4a8f16d3b9057",
    "GOOGLE_API_KEY": "f3d5b7e9a1c2e468",
}


def fake_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Give every agent CLI a (fake) credential in the environment of the plugin."""
    for name, value in FAKE_CREDENTIALS.items():
        monkeypatch.setenv(name, value)


def use_fake(monkeypatch: pytest.MonkeyPatch, sample: str, exit_code: int = 0) -> None:
    """Make the plugin's agent CLIs the fakes, printing ``sample`` (in agent_samples/),
    with fake credentials for the preflight."""
    fake_credentials(monkeypatch)
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
    monkeypatch.setenv("FAKE_AGENT_SAMPLE", str(SAMPLES / sample))
    monkeypatch.setenv("FAKE_AGENT_EXIT", str(exit_code))


def sample_file(directory: Path, text: str, name: str = "sample.json") -> Path:
    """A sample for the fake CLI to print, written to ``directory/name``."""
    path = directory / name
    path.write_text(text)
    return path


def recorded_calls(record: Path) -> list[dict[str, Any]]:
    """The runs the fake CLI recorded (``FAKE_AGENT_RECORD``), without the
    ``--version`` calls that pins make: argv, stdin, cwd and EVALCASES_* env each."""
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    return [call for call in calls if call["argv"] != ["--version"]]
