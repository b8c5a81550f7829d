"""What the CLI sent its model, in the pins (docs/results.md, "Pins"), and the baseline
gate naming what changed with the configuration as information and what changed
without it as a warning: an agent of the conftest whose driver talks HTTP to a model API
(its workspace's ``CLAUDE.md`` as the system prompt, its model and temperature from the
environment), the scripted Messages API as the upstream, the runs recorded."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import http_agent
from tests.helpers.model_server import ModelServer, Reply, model_server

#: One request: the workspace's CLAUDE.md (its path quoted, as a CLI's context does) as
#: the system prompt, a Read and a Bash tool, $AGENT_MODEL at $AGENT_TEMPERATURE.
AGENT = r"""
import json, os, sys, urllib.request
rules = open("CLAUDE.md").read() if os.path.exists("CLAUDE.md") else ""
system = "Instructions of " + os.getcwd() + "/CLAUDE.md:\n" + rules
tools = [{"name": "Read", "description": "Reads."}, {"name": "Bash", "description": "Runs."}]
body = {
    "model": os.environ.get("AGENT_MODEL", "m-1"),
    "temperature": float(os.environ.get("AGENT_TEMPERATURE", "0.2")),
    "max_tokens": 1000,
    "system": system,
    "tools": tools,
    "messages": [{"role": "user", "content": [{"type": "text", "text": sys.argv[1]}]}],
}
request = urllib.request.Request(
    os.environ["HTTP_AGENT_BASE_URL"] + "/v1/messages",
    data=json.dumps(body).encode(),
    headers={"x-api-key": "sk-ant-Zq7xK2pW9mR4", "content-type": "application/json"},
)
with urllib.request.urlopen(request) as response:
    response.read()
print("ok")
"""

CASE = """id: {id}
defends: CLAUDE.md
prompt: say ok ({id})
checks:
  - {{type: output_matches, pattern: ok}}
"""


@pytest.fixture
def api(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelServer]:
    with model_server("anthropic", lambda request: Reply(text="ok")) as server:
        monkeypatch.setenv("SCRIPTED_API", server.url)
        monkeypatch.setenv("HTTP_AGENT_BASE_URL", "http://the-users-own-base-url.invalid")
        http_agent.install(pytester, AGENT)
        pytester.makeini("[pytest]\neval_agent = http\n")
        for case in ("alpha", "beta"):
            (pytester.path / "evals").mkdir(exist_ok=True)
            (pytester.path / "evals" / f"{case}.yaml").write_text(CASE.format(id=case))
        (pytester.path / "cfg").mkdir()
        (pytester.path / "cfg" / "CLAUDE.md").write_text("Never push to main.\n")
        (pytester.path / "uv.lock").write_text("version = 1\n")
        yield server


def run(pytester: pytest.Pytester, save: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-config", "main=cfg", "--eval-save", save, *args
    )


def pins(pytester: pytest.Pytester, save: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((pytester.path / save).read_text("utf-8"))
    return doc["pins"]


def test_the_results_file_pins_what_the_cli_sent_and_the_lock_files(
    pytester: pytest.Pytester, api: ModelServer
) -> None:
    result = run(pytester, "a.json")

    result.assert_outcomes(passed=2)
    found = pins(pytester, "a.json")
    rules = "Instructions of <workspace>/CLAUDE.md:\nNever push to main.\n"
    # Each run's workspace is its own: normalised, both runs sent the same system prompt.
    assert found["sent"] == {
        "main": {
            "runs": 2,
            "scripted": False,
            "models": ["m-1"],
            "system_prompt_sha256": hashlib.sha256(rules.encode()).hexdigest(),
            "context_sha256": hashlib.sha256(b"").hexdigest(),
            "tools": ["Bash", "Read"],
            "sampling": {"max_tokens": 1000, "temperature": 0.2},
        }
    }
    assert found["lock_files"] == {"uv.lock": hashlib.sha256(b"version = 1\n").hexdigest()}


def test_a_changed_configuration_is_information_and_a_model_or_lock_change_a_warning(
    pytester: pytest.Pytester, api: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(pytester, "base.json").assert_outcomes(passed=2)
    same = run(pytester, "same.json", "--eval-baseline", "base.json")
    (pytester.path / "cfg" / "CLAUDE.md").write_text("Never push to main. Use rg.\n")
    configured = run(pytester, "configured.json", "--eval-baseline", "base.json")
    (pytester.path / "cfg" / "CLAUDE.md").write_text("Never push to main.\n")
    monkeypatch.setenv("AGENT_MODEL", "m-2")
    monkeypatch.setenv("AGENT_TEMPERATURE", "0.7")
    (pytester.path / "uv.lock").write_text("version = 2\n")
    drifted = run(pytester, "drifted.json", "--eval-baseline", "base.json")

    assert pins(pytester, "same.json")["sent"] == pins(pytester, "base.json")["sent"]
    assert "pins differ" not in same.stdout.str()
    assert "pins changed" not in same.stdout.str()
    configured.stdout.fnmatch_lines(
        [
            "pins changed as expected with the configuration: configuration fingerprint "
            "* -> * (main:CLAUDE.md); sent (variant main): system prompt * -> *"
        ]
    )
    assert "WARNING: pins differ" not in configured.stdout.str()
    assert configured.ret == 0
    drifted.stdout.fnmatch_lines(
        [
            "WARNING: pins differ from the baseline, results may not be comparable: "
            "sent (variant main): models sent m-1 -> m-2; "
            'sent (variant main): sampling {"max_tokens":1000,"temperature":0.2} -> '
            '{"max_tokens":1000,"temperature":0.7}; lock files changed: uv.lock'
        ]
    )
    assert "as expected" not in drifted.stdout.str()
    baseline = json.loads((pytester.path / "drifted.json").read_text("utf-8"))["baseline"]
    assert baseline["pin_expected"] == []
    assert len(baseline["pin_differences"]) == 3


def test_compare_and_merge_read_the_sent_pins(
    pytester: pytest.Pytester, api: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(pytester, "a.json", "-k", "alpha").assert_outcomes(passed=1)
    run(pytester, "b.json", "-k", "beta").assert_outcomes(passed=1)
    monkeypatch.setenv("AGENT_MODEL", "m-2")
    run(pytester, "c.json").assert_outcomes(passed=2)

    compared = pytester.run("evalcases", "compare", "a.json", "c.json")
    merged = pytester.run("evalcases", "merge", "a.json", "b.json", "-o", "ab.json")

    compared.stdout.fnmatch_lines(
        ["pins differ (results may not be comparable):", "  sent (variant main): models sent*"]
    )
    assert merged.ret == 0, merged.stdout.str() + merged.stderr.str()
    sent = pins(pytester, "ab.json")["sent"]["main"]
    assert sent["runs"] == 2
    assert (
        sent["system_prompt_sha256"]
        == pins(pytester, "a.json")["sent"]["main"]["system_prompt_sha256"]
    )
    assert "pins differ between the files" not in merged.stdout.str() + merged.stderr.str()
