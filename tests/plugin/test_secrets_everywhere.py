"""Secrets in every place a run's text is written or shown (docs/results.md, "Secrets"):
an agent that dumps its environment into the workspace, sends it to the model and
answers with it, in a failed run whose workspace is kept. Three shapes of secret: the
values of variables named as secrets, the password of a URL (``DATABASE_URL``), and a
variable that only ``eval_redact_env`` names (``NPM_AUTH``)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import http_agent
from tests.helpers.model_server import ModelServer, Reply, Request, model_server
from tests.helpers.results import results_files
from tests.plugin.test_pins_and_secrets import _pieces_in

SECRETS = {
    "AWS_SECRET_ACCESS_KEY": "q8Zr2LxW0vTn5KpY7bHc+Md3FsJg9AeU/Ro1QiVy",
    "GITHUB_TOKEN": "ghp_4f9Kq2Lm8Np3Rs7Tv1Wx5Yz0Ab6Cd2Ef9Gh3J",
    "ANTHROPIC_API_KEY": "sk-ant-api03-Zq7xK2pW9mR4tY6uI8oP0aS1dF3gH5jK",
}
#: A password that no credential shape covers, in a variable no name rule covers.
DB_PASSWORD = "Tr0ub4dor-and-3-horses"
DATABASE_URL = f"postgres://shop:{DB_PASSWORD}@db.internal:5432/shop"
#: A value that only ``eval_redact_env`` makes a secret.
NPM_AUTH = "npmauth0f9e8d7c6b5a4321"

#: Dumps the environment into envdump.txt (and a copy under .config/), sends it to the
#: model with the prompt, and answers with what the model said.
AGENT = r"""
import json, os, pathlib, sys, urllib.request
dump = "".join(f"{k}={v}\n" for k, v in sorted(os.environ.items()))
pathlib.Path("envdump.txt").write_text(dump)
pathlib.Path(".config").mkdir()
pathlib.Path(".config/env").write_text(dump)
names = ("GITHUB_TOKEN", "DATABASE_URL", "NPM_AUTH")
said = " ".join([sys.argv[1]] + [os.environ[k] for k in names])
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": said}]})
request = urllib.request.Request(
    os.environ["HTTP_AGENT_BASE_URL"] + "/v1/messages",
    data=body.encode(),
    headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "content-type": "application/json"},
)
with urllib.request.urlopen(request) as response:
    lines = response.read().decode().splitlines()
events = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
print("".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta"))
"""

CASE = """\
id: dumps
defends: AGENTS.md
prompt: deploy
checks:
  - {type: output_matches, pattern: "^never"}
  - {type: file_not_matches, path: envdump.txt, pattern: DATABASE_URL}
  - {type: command_succeeds, command: "cat envdump.txt; exit 1"}
"""

EVALCASES = Path(sys.executable).parent / "evalcases"


def echo(request: Request) -> Reply:
    return Reply(text="you said: " + request.body["messages"][0]["content"])


@pytest.fixture
def api(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelServer]:
    with model_server("anthropic", echo) as server:
        monkeypatch.setenv("SCRIPTED_API", server.url)
        monkeypatch.setenv("HTTP_AGENT_BASE_URL", "http://the-users-own-base-url.invalid")
        for name, value in SECRETS.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("DATABASE_URL", DATABASE_URL)
        monkeypatch.setenv("NPM_AUTH", NPM_AUTH)
        yield server


def leaked(text: str) -> set[str]:
    """The pieces (8 characters or more, however escaped) of any secret in ``text``."""
    secrets = [*SECRETS.values(), DB_PASSWORD, NPM_AUTH]
    return {piece for secret in secrets for piece in _pieces_in(text, secret)}


def tree_texts(top: Path) -> dict[str, str]:
    """Every file below ``top`` by path, a gzipped tar's members read as files too."""
    texts: dict[str, str] = {}
    for path in sorted(p for p in top.rglob("*") if p.is_file() and not p.is_symlink()):
        data = path.read_bytes()
        if path.name.endswith(".tar.gz"):
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                for member in tar:
                    extracted = tar.extractfile(member) if member.isfile() else None
                    if extracted is not None:
                        texts[f"{path}:{member.name}"] = extracted.read().decode()
            continue
        texts[str(path)] = data.decode("utf-8", "replace")
    return texts


# Under xdist the workspaces are kept and the runs recorded on the workers.
@pytest.mark.slow
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_no_secret_of_any_shape_reaches_any_output(
    pytester: pytest.Pytester, api: ModelServer, workers: tuple[str, ...]
) -> None:
    http_agent.install(pytester, AGENT)
    pytester.makeini("[pytest]\neval_redact_env = NPM_AUTH\n")
    (pytester.path / "AGENTS.md").write_text("Never print a secret.\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "dumps.yaml").write_text(CASE)

    result = pytester.runpytest_subprocess(
        *workers,
        "--eval-agent",
        "http",
        "-p",
        "no:cacheprovider",
        "-rA",
        "--junitxml=junit.xml",
        "--json-report",
        "--json-report-file=report.json",
        "--eval-html=report.html",
        timeout=120,
    )

    result.assert_outcomes(failed=1)
    (results,) = results_files(pytester.path)
    kept = results.parent / f"{results.stem}.workspaces" / "dumps"
    runs = results.parent / f"{results.stem}.runs" / "dumps"
    show = subprocess.run(
        [str(EVALCASES), "show", str(results), "dumps"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert show.returncode == 0, show.stderr
    outputs = {
        "terminal": result.stdout.str() + result.stderr.str(),
        "junitxml": (pytester.path / "junit.xml").read_text("utf-8"),
        "json-report": (pytester.path / "report.json").read_text("utf-8"),
        "results": results.read_text("utf-8"),
        "eval-html": (pytester.path / "report.html").read_text("utf-8"),
        "evalcases show": show.stdout + show.stderr,
        **{f"kept {path}": text for path, text in tree_texts(kept).items()},
        **{f"recorded {path}": text for path, text in tree_texts(runs).items()},
    }
    # Every output was written, and each file that holds the dump or the exchange is there.
    assert {f"kept {kept / 'envdump.txt'}", f"kept {kept / '.config' / 'env'}"} <= set(outputs)
    assert {
        f"recorded {runs / 'exchange.jsonl'}",
        f"recorded {runs / 'changes.tar.gz'}:envdump.txt",
    } <= set(outputs)
    assert {name: leaked(text) for name, text in outputs.items()} == {
        name: set() for name in outputs
    }
    # What the run did is still there to read, the secrets masked.
    dump = (kept / "envdump.txt").read_text()
    assert "DATABASE_URL=postgres://shop:[REDACTED]@db.internal:5432/shop\n" in dump
    assert "NPM_AUTH=[REDACTED]\n" in dump
    assert "GITHUB_TOKEN=[REDACTED]\n" in dump
    assert "workspace kept: " in outputs["terminal"]
    assert "(secrets redacted in .config/env, envdump.txt)" in outputs["terminal"]
    assert "you said: deploy [REDACTED] postgres://shop:[REDACTED]@db" in outputs["evalcases show"]
    assert json.loads(outputs["results"])["cases"][0]["outcome"] == "failed"


def test_a_name_that_is_no_variable_in_eval_redact_env_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\neval_redact_env = NPM_AUTH NPM_AUTH=abc\n")

    result = pytester.runpytest("-p", "no:cacheprovider")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: ini option eval_redact_env expects names of environment variables, "
            "got 'NPM_AUTH=abc'"
        ]
    )
