"""The real Claude Code, told by the scripted model to dump its environment into the
workspace and to link a file outside it (docs/agents.md, "Kept workspaces";
docs/case-format.md, "Paths, globs and symlinks"): the link fails the check that meets
it, the other checks are graded, and the kept workspace holds no secret."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.agents.test_real_clis import claude_env  # noqa: F401  (a fixture)
from tests.helpers.model_server import ModelServer, Reply, Request
from tests.helpers.results import only_results, results_files
from tests.plugin.test_pins_and_secrets import _pieces_in

pytestmark = pytest.mark.real_cli

GITHUB_TOKEN = "ghp_4f9Kq2Lm8Np3Rs7Tv1Wx5Yz0Ab6Cd2Ef9Gh3J"
DB_PASSWORD = "Tr0ub4dor-and-3-horses"
NPM_AUTH = "npmauth0f9e8d7c6b5a4321"

CASE = """
id: dumps
defends: AGENTS.md
prompt: Deploy
checks:
  - {id: report, type: file_matches, path: report.txt, pattern: deployed}
  - {id: dumped, type: file_exists, path: envdump.txt}
  - {id: answered, type: output_matches, pattern: "^done"}
"""


def test_claude_dumping_its_environment_and_linking_out_is_graded_and_kept_redacted(
    pytester: pytest.Pytester,
    claude_env: ModelServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outside = pytester.path / "outside.txt"
    outside.write_text("deployed\n")

    def script(request: Request) -> Reply:
        if request.tool_results == 0:
            return Reply(shell=f"env > envdump.txt; ln -s {outside} report.txt")
        return Reply(text="done")

    claude_env.script = script
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB_TOKEN)
    monkeypatch.setenv("DATABASE_URL", f"postgres://shop:{DB_PASSWORD}@db.internal/shop")
    monkeypatch.setenv("NPM_AUTH", NPM_AUTH)
    pytester.makefile(".ini", tox="[pytest]\neval_agent = claude\neval_redact_env = NPM_AUTH\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "dumps.yaml").write_text(CASE)

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=300)

    result.assert_outcomes(failed=1)
    (record,) = only_results(pytester.path)["cases"]
    assert [(c["id"], c["passed"], c["message"]) for c in record["checks"]] == [
        (
            "report",
            False,
            f"report.txt is a symlink leaving the workspace (to {outside}): not read",
        ),
        ("dumped", True, "envdump.txt: 1 file(s) found"),
        ("answered", True, "pattern '^done' found: 'done'"),
    ]
    (results,) = results_files(pytester.path)
    dump = (results.parent / f"{results.stem}.workspaces" / "dumps" / "envdump.txt").read_text()
    for secret in (GITHUB_TOKEN, DB_PASSWORD, NPM_AUTH, os.environ["ANTHROPIC_API_KEY"]):
        assert _pieces_in(dump, secret) == set()
    # Claude Code's Bash tool runs with the whole environment, its own API key included.
    for line in (
        "ANTHROPIC_API_KEY=[REDACTED]",
        "GITHUB_TOKEN=[REDACTED]",
        "DATABASE_URL=postgres://shop:[REDACTED]@db.internal/shop",
        "NPM_AUTH=[REDACTED]",
    ):
        assert line in dump.splitlines()
    assert Path(record["workspace"]).is_dir()
