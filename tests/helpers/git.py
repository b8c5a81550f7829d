"""git in the tests: a fixed identity and no global configuration of the machine's."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    """``git ARGS`` in ``cwd``; its standard output. Fails the test when git fails."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


def make_repo(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """A new repository at ``root`` with ``files`` (path -> text or bytes) committed."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, "utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    return root
