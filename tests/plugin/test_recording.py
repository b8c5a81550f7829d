"""Recording of live runs through the plugin (docs/replay.md, "Recording"): an agent of
the conftest whose driver says it talks HTTP to a model API, a Python script that sends
one request to its base URL, and the scripted Messages API as the upstream."""

from __future__ import annotations

import gzip
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.recording import format as recording
from tests.helpers import http_agent
from tests.helpers.model_server import ModelServer, Reply, Request, model_server
from tests.helpers.results import results_files

KEY = "sk-ant-Zq7xK2pW9mR4"

#: The agent: one streamed request to $HTTP_AGENT_BASE_URL/v1/messages with the key and
#: the prompt; it prints the text the model streamed back.
AGENT = r"""
import json, os, sys, urllib.request
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": sys.argv[1]}]})
request = urllib.request.Request(
    os.environ["HTTP_AGENT_BASE_URL"] + "/v1/messages?beta=true",
    data=body.encode(),
    headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "content-type": "application/json"},
)
try:
    with urllib.request.urlopen(request) as response:
        lines = response.read().decode().splitlines()
    events = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
except urllib.error.HTTPError as exc:
    print(exc.read().decode(), file=sys.stderr)
    sys.exit(3)
print("".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta"))
"""


def answers(request: Request) -> Reply:
    """The prompt back, so that each run's recording shows it got its own answer."""
    return Reply(text="answer to " + request.body["messages"][0]["content"])


@pytest.fixture
def api(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelServer]:
    with model_server("anthropic", answers) as server:
        monkeypatch.setenv("SCRIPTED_API", server.url)
        monkeypatch.setenv("HTTP_AGENT_BASE_URL", "http://the-users-own-base-url.invalid")
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        http_agent.install(pytester, AGENT)
        (pytester.path / "evals").mkdir()
        for name in ("alpha", "beta"):
            (pytester.path / "evals" / f"{name}.yaml").write_text(
                f"id: {name}\ndefends: AGENTS.md\nprompt: MARK-{name}\n"
                f"checks: [{{type: output_matches, pattern: 'answer to MARK-{name}'}}]\n"
            )
        yield server


def stored(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


def only_document(root: Path) -> tuple[Path, dict[str, Any]]:
    [results] = results_files(root)
    doc: dict[str, Any] = json.loads(results.read_text())
    return results, doc


@pytest.mark.parametrize(
    "options",
    [[], ["-n", "2"], ["--eval-concurrency", "2"]],
    ids=["serial", "xdist", "concurrency"],
)
def test_each_run_is_recorded_beside_the_results_file_on_its_own(
    pytester: pytest.Pytester, api: ModelServer, options: list[str]
) -> None:
    result = pytester.runpytest(
        "--eval-agent", "http", "--eval-repeat", "2", "-p", "no:cacheprovider", *options
    )

    result.assert_outcomes(passed=4)
    results, doc = only_document(pytester.path)
    runs = results.parent / f"{results.stem}.runs"
    recorded = {(r["id"], r["repetition"]): r["recording"] for r in doc["cases"]}
    assert recorded == {
        (case, rep): f"{results.stem}.runs/{case}.r{rep}"
        for case in ("alpha", "beta")
        for rep in (0, 1)
    }
    for (case, _), relative in recorded.items():
        found = recording.read(results.parent / relative / recording.EXCHANGE)
        header, (exchange,) = found.header, found.exchanges
        assert (header["agent"], header["case"], header["exchanges"]) == ("http", case, 1)
        assert header["upstream"] == api.url
        assert exchange.path == "/v1/messages?beta=true"
        assert f"MARK-{case}" in (exchange.request.text or "")
        assert f"answer to MARK-{case}" in (exchange.response.text or "")
    assert all(KEY not in stored(p) for p in runs.rglob("*") if p.is_file())
    # Every request reached the API through the proxy, with the key.
    assert len(api.requests) == 4
    keys = [v for r in api.requests for k, v in r.headers.items() if k.lower() == "x-api-key"]
    assert keys == [KEY] * 4


def test_a_run_that_errors_is_recorded_too(pytester: pytest.Pytester, api: ModelServer) -> None:
    api.script = lambda request: Reply(status=401, error="scripted bad key")

    result = pytester.runpytest("--eval-agent", "http", "-p", "no:cacheprovider", "-k", "alpha")

    result.assert_outcomes(errors=1)
    results, doc = only_document(pytester.path)
    [record] = doc["cases"]
    assert record["error_kind"] == "authentication"
    (exchange,) = recording.read(_exchange(results, record)).exchanges
    assert exchange.status == 401
    assert "scripted bad key" in (exchange.response.text or "")


@pytest.mark.parametrize(
    ("options", "ini"),
    [
        (["--eval-agent", "http"], "[pytest]\neval_record = false\n"),
        (["--eval-agent", "http", "--eval-no-save"], ""),
    ],
    ids=["eval_record-false", "no-results-file"],
)
def test_nothing_is_recorded_when_recording_is_off(
    pytester: pytest.Pytester, api: ModelServer, options: list[str], ini: str
) -> None:
    # Not proxied: the agent's own base URL (unreachable) is used, and the run errors.
    if ini:
        pytester.makefile(".ini", tox=ini)

    result = pytester.runpytest(*options, "-p", "no:cacheprovider", "-k", "alpha")

    result.assert_outcomes(errors=1)
    assert api.requests == []
    for results in results_files(pytester.path):
        assert json.loads(results.read_text())["cases"][0]["recording"] is None
    assert not list(pytester.path.rglob("*.runs"))


def test_an_exchange_that_cannot_be_written_is_said_and_costs_no_verdict(
    pytester: pytest.Pytester, api: ModelServer
) -> None:
    # Where the recordings would go is a file: nothing can be written below it.
    (pytester.path / "results.runs").write_text("in the way")

    result = pytester.runpytest(
        "--eval-agent",
        "http",
        "-p",
        "no:cacheprovider",
        "-k",
        "alpha",
        "--eval-save",
        "results.json",
    )

    result.assert_outcomes(passed=1, warnings=2)
    # Both what the run left (run.json) and its exchange with the model API are said.
    result.stdout.fnmatch_lines(
        ["*RecordingWarning: run alpha: its recording could not be written*"] * 2
    )
    doc = json.loads((pytester.path / "results.json").read_text())
    assert doc["cases"][0]["recording"] is None


def test_the_command_agent_has_no_exchange_only_its_answer_and_changes(
    pytester: pytest.Pytester, api: ModelServer
) -> None:
    command = "python3 -c 'print(\"answer to MARK-alpha\")'"
    pytester.makefile(".ini", tox=f"[pytest]\neval_agent_command = {command}\n")

    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "alpha")

    result.assert_outcomes(passed=1)
    results, doc = only_document(pytester.path)
    directory = results.parent / doc["cases"][0]["recording"]
    assert sorted(p.name for p in directory.iterdir()) == ["run.json", "trajectory.json"]
    assert api.requests == []


#: Writes, as each eval item ends, whether this process's proxy is running and its port.
PROXY_PROBE = """

from pytest_evalcases.plugin.stash import session_of


def pytest_runtest_teardown(item):
    recorder = session_of(item.config).recorder
    started = recorder is not None and recorder.started
    port = recorder.proxy.port if started else None
    Path(item.config.rootpath, "proxy.txt").write_text(f"{started} {port}")
"""


@pytest.mark.parametrize("agent", ["http", "command"])
def test_the_proxy_starts_with_the_first_recorded_run_and_stops_with_the_session(
    pytester: pytest.Pytester, api: ModelServer, agent: str
) -> None:
    pytester.makeconftest(http_agent.CONFTEST + PROXY_PROBE)
    command = "python3 -c 'print(\"answer to MARK-alpha\")'"
    pytester.makefile(".ini", tox=f"[pytest]\neval_agent_command = {command}\n")

    result = pytester.runpytest("--eval-agent", agent, "-p", "no:cacheprovider", "-k", "alpha")

    result.assert_outcomes(passed=1)
    started, port = (pytester.path / "proxy.txt").read_text().split()
    if agent == "command":
        assert (started, port) == ("False", "None")
        return
    assert started == "True"
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", int(port))) != 0


def _exchange(results: Path, record: dict[str, Any]) -> Path:
    """The stored exchange of a run's entry in ``results``."""
    found = recording.exchange_file(results.parent / record["recording"])
    assert found is not None, record["recording"]
    return found
