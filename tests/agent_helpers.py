"""Shared by the agent tests: the environment that puts the fake CLIs on PATH."""

from __future__ import annotations

import os
from pathlib import Path

FAKES = Path(__file__).parent / "fake_agents"
SAMPLES = Path(__file__).parent / "agent_samples"


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
