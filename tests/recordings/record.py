"""Record the sample exchanges of this directory: each real agent CLI runs one case
through the plugin against the scripted model server of ``tests/helpers/model_server.py``
(two shell commands, then an answer), and the run's ``exchange.jsonl`` and results entry
are copied here. Run from the repository's root with the CLIs installed:

    EVALCASES_AGENT_CLIS=.../node_modules/.bin python -m tests.recordings.record
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.helpers.model_server import Reply, Request, model_server
from tests.helpers.sandbox import USER_CACHE

HERE = Path(__file__).parent
CLIS = Path(os.environ["EVALCASES_AGENT_CLIS"])

CASE = """
id: sample
defends: AGENTS.md
prompt: Write made.txt, then count the lines of made.txt
checks:
  - {type: file_matches, path: made.txt, pattern: made-by-the-agent}
  - {type: output_matches, pattern: "^done"}
"""


def script(request: Request) -> Reply:
    """Two shell commands (the second prints), then the answer."""
    if request.tool_results == 0:
        return Reply(shell="echo made-by-the-agent > made.txt", input_tokens=120, output_tokens=9)
    if request.tool_results == 1:
        return Reply(shell="wc -l made.txt", input_tokens=150, output_tokens=7)
    return Reply(text="done: made.txt has 1 line", input_tokens=180, output_tokens=6)


def record(agent: str, dialect: str, env: dict[str, str], ini: str, home: Path) -> None:
    with model_server(dialect, script) as server:  # type: ignore[arg-type]
        project = home / "project"
        (project / "evals").mkdir(parents=True)
        (project / "evals" / "sample.yaml").write_text(CASE)
        (project / "tox.ini").write_text(ini.format(url=server.url))
        run_env = {
            **os.environ,
            "PATH": f"{CLIS}{os.pathsep}{os.environ['PATH']}",
            **{k: v.format(url=server.url, home=home) for k, v in env.items()},
        }
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"],
            cwd=project,
            env=run_env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        print(agent, done.stdout[-400:], done.stderr[-2000:])
        [results] = (project / "evals" / "results").glob("*.json")
        entry = json.loads(results.read_text())["cases"][0]
        found = results.parent / entry["recording"]
        [exchange] = found.glob("exchange.jsonl*")
        shutil.copy(exchange, HERE / f"{agent}.{exchange.name}")
        (HERE / f"{agent}.record.json").write_text(json.dumps(entry, indent=2) + "\n")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="evalcases-samples-") as tmp:
        root = Path(tmp)
        (root / "claude" / "home").mkdir(parents=True)
        record(
            "claude",
            "anthropic",
            {
                "ANTHROPIC_BASE_URL": "{url}",
                "ANTHROPIC_API_KEY": "sk-ant-Zq7xK2pW9mR4",
                "CLAUDE_CODE_MAX_RETRIES": "0",
                "CLAUDE_CONFIG_DIR": "{home}/claude-home",
                "HOME": "{home}/home",
            },
            "[pytest]\neval_agent = claude\n",
            root / "claude",
        )
        codex_home = root / "codex" / "codex-home"
        codex_home.mkdir(parents=True)
        record(
            "codex",
            "openai",
            {
                "OPENAI_API_KEY": "sk-Jt5vN8cQ3hL6",
                "CODEX_HOME": str(codex_home),
                "XDG_CACHE_HOME": str(USER_CACHE),
            },
            "[pytest]\neval_agent = codex\neval_agent_args = -c 'openai_base_url=\"{url}/v1\"'\n",
            root / "codex",
        )
        gemini_home = root / "gemini" / "gemini-home"
        (gemini_home / ".gemini").mkdir(parents=True)
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"maxAttempts": 1},
        }
        (gemini_home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        record(
            "gemini",
            "gemini",
            {
                "GOOGLE_GEMINI_BASE_URL": "{url}",
                "GEMINI_API_KEY": "Wb4yF9dS2kP7",
                "GEMINI_CLI_HOME": str(gemini_home),
                "GEMINI_CLI_TRUST_WORKSPACE": "true",
            },
            "[pytest]\neval_agent = gemini\n",
            root / "gemini",
        )


if __name__ == "__main__":
    main()
