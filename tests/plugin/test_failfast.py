"""Failing fast through the plugin (docs/agents.md, "Failing fast"): an agent of the
conftest that talks HTTP to its model API and, like Claude Code, retries a refused key or
an unreachable API until its timeout; the scripted Messages API as the upstream."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import http_agent
from tests.helpers.model_server import ModelServer, Reply, model_server
from tests.helpers.results import only_results

KEY = "sk-ant-Zq7xK2pW9mR4"
CASES = 6

#: The agent: requests $HTTP_AGENT_BASE_URL/v1/messages until it is answered with a 200,
#: whatever the API says before (a CLI's own retries, every 5 s), noting each attempt in
#: the file ``attempts`` beside it; prints the streamed text.
AGENT = r"""
import json, os, pathlib, sys, time, urllib.error, urllib.request
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": sys.argv[1]}]})
attempts = pathlib.Path(__file__).parent / "attempts"
while True:
    with attempts.open("a") as f:
        f.write(sys.argv[1] + "\n")
    request = urllib.request.Request(
        os.environ["HTTP_AGENT_BASE_URL"] + "/v1/messages",
        data=body.encode(),
        headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request) as response:
            lines = response.read().decode().splitlines()
        break
    except (urllib.error.URLError, OSError) as exc:
        print(f"retrying after {exc}", file=sys.stderr, flush=True)
        time.sleep(5)
events = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
print("".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta"))
"""

#: Long enough that a run waiting for it would show; never reached by a run that fails fast.
TIMEOUT = "120"


@pytest.fixture
def api(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelServer]:
    with model_server("anthropic", lambda request: Reply(text="fine")) as server:
        monkeypatch.setenv("SCRIPTED_API", server.url)
        monkeypatch.setenv("HTTP_AGENT_BASE_URL", "http://the-users-own-base-url.invalid")
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        http_agent.install(pytester, AGENT)
        (pytester.path / "evals").mkdir()
        for i in range(CASES):
            (pytester.path / "evals" / f"c{i}.yaml").write_text(
                f"id: c{i}\ndefends: AGENTS.md\nprompt: case {i}\n"
                "checks: [{type: output_matches, pattern: fine}]\n"
            )
        yield server


def attempts(pytester: pytest.Pytester) -> int:
    """How many requests the agent's runs began, retries included."""
    return len((pytester.path / "attempts").read_text().splitlines())


def run(pytester: pytest.Pytester, *options: str) -> tuple[pytest.RunResult, list[dict[str, Any]]]:
    # Not contained: the agent notes its attempts beside itself, outside its workspace.
    result = pytester.runpytest(
        "--eval-agent",
        "http",
        "--eval-timeout",
        TIMEOUT,
        "--eval-sandbox",
        "none",
        "-p",
        "no:cacheprovider",
        *options,
    )
    return result, only_results(pytester.path)["cases"]


#: Serially one run fails and the others are not started; under --eval-concurrency 2 the
#: two first start together; under xdist each worker stops after its own first.
MODES = pytest.mark.parametrize(
    ("options", "most"),
    [([], 1), (["--eval-concurrency", "2"], 2), (["-n", "2"], 2)],
    ids=["serial", "concurrency", "xdist"],
)


@MODES
def test_a_refused_key_ends_the_run_at_once_and_starts_no_other(
    pytester: pytest.Pytester, api: ModelServer, options: list[str], most: int
) -> None:
    api.script = lambda request: Reply(status=401, error="invalid x-api-key")

    result, cases = run(pytester, *options)

    result.assert_outcomes(errors=CASES)
    assert {case["error_kind"] for case in cases} == {"authentication"}
    ran = [case["error"] for case in cases if "not started" not in case["error"]]
    assert 1 <= len(ran) <= most
    # Each run that started was ended after its first request, before the agent retried.
    assert attempts(pytester) == len(ran)
    for error in ran:
        assert "refused the run's credentials: 401 " in error
        assert error.endswith(": invalid x-api-key")
    stopped = [case["error"] for case in cases if "not started" in case["error"]]
    assert len(stopped) == CASES - len(ran)
    # No attempt was made: nothing to keep either.
    assert [case["attempts"] for case in cases if "not started" in case["error"]] == [0] * len(
        stopped
    )
    assert result.stdout.str().count("workspace kept:") == len(ran)
    assert all(
        error.startswith(
            "not started: an earlier run of agent 'http' with the same credentials ended in "
            "an authentication error: agent 'http': the model API at "
        )
        for error in stopped
    )
    assert KEY not in result.stdout.str()


@MODES
def test_an_unreachable_api_ends_the_run_at_once_and_starts_no_other(
    pytester: pytest.Pytester,
    api: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    options: list[str],
    most: int,
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("SCRIPTED_API", closed)

    result, cases = run(pytester, *options)

    result.assert_outcomes(errors=CASES)
    assert {case["error_kind"] for case in cases} == {"server"}
    ran = [case["error"] for case in cases if "not started" not in case["error"]]
    assert 1 <= len(ran) <= most
    assert attempts(pytester) == len(ran)
    for error in ran:
        assert error == (
            f"agent 'http': the model API at {closed} could not be reached: "
            "[Errno 111] Connection refused"
        )
    stopped = [case["error"] for case in cases if "not started" in case["error"]]
    assert len(stopped) == CASES - len(ran)
    assert all("ended in a server error" in error for error in stopped)
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_the_agents_own_authentication_error_stops_the_runs_after_it(
    pytester: pytest.Pytester, api: ModelServer
) -> None:
    # Without recording, no proxy stands between the agent and its API: the CLI's own
    # error stops the rest. The agent here gives up at once on its base URL's refusal.
    (pytester.path / "http_agent.py").write_text(
        "import sys\nprint('bad key', file=sys.stderr)\nsys.exit(1)\n"
    )

    result = pytester.runpytest(
        "--eval-agent", "http", "-p", "no:cacheprovider", "-o", "eval_record=false"
    )

    result.assert_outcomes(errors=CASES)
    errors = [case["error"] for case in only_results(pytester.path)["cases"]]
    assert errors[0] == "the agent said: bad key"
    assert all(error.startswith("not started: ") for error in errors[1:])
    assert all(error.endswith("error: the agent said: bad key") for error in errors[1:])
    # A run not started has no workspace to keep.
    assert result.stdout.str().count("workspace kept:") == 1


def test_a_timeout_quotes_the_apis_last_error(pytester: pytest.Pytester, api: ModelServer) -> None:
    api.script = lambda request: Reply(status=529, error="Overloaded")

    result = pytester.runpytest(
        "--eval-agent",
        "http",
        "--eval-timeout",
        "3",
        "--eval-sandbox",
        "none",
        "-p",
        "no:cacheprovider",
        "-k",
        "c0",
    )

    result.assert_outcomes(errors=1)
    [case] = only_results(pytester.path)["cases"]
    assert case["error_kind"] == "timeout"
    # The scripted API sends no reason phrase with a 529.
    assert case["error"].endswith("\nthe model API's last error: 529: Overloaded")


def test_an_unreachable_api_is_not_retried(
    pytester: pytest.Pytester, api: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("SCRIPTED_API", closed)

    result, cases = run(pytester, "--eval-retry-errors", "2", "-k", "c0")

    result.assert_outcomes(errors=1)
    [case] = cases
    # The run's own error, after its one attempt: a retry would not have started.
    assert case["error"].startswith(f"agent 'http': the model API at {closed} could not be")
    assert case["attempts"] == 1
    assert attempts(pytester) == 1
