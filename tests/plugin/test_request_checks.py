"""``request_matches`` / ``request_not_matches`` through the plugin (docs/case-format.md,
"What a request check reads"): an agent of the conftest whose driver talks HTTP to a
model API (a Python script sending one request per ``|``-separated part of its prompt,
with the workspace's ``CLAUDE.md`` as its system prompt and one tool), the scripted
Messages API as the upstream. Its runs go through the proxy because a check reads what
they sent, also with recording off; a regrade reads the stored recording."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.helpers import http_agent
from tests.helpers.model_server import ModelServer, Reply, model_server
from tests.helpers.results import only_results, results_files

#: The agent: for each part of its prompt split at ``|``, one request carrying the
#: conversation so far (the part as the user's message, each answer as the model's),
#: ``CLAUDE.md`` of the workspace as the system prompt and a ``Read`` tool; it prints the
#: last answer. A prompt of ``-`` sends nothing.
AGENT = r"""
import json, os, sys, urllib.request
system = open("CLAUDE.md").read() if os.path.exists("CLAUDE.md") else ""
tools = [{"name": "Read", "description": "Reads a file.\nPaths are relative."}]
messages, said = [], ""
for part in [p for p in sys.argv[1].split("|") if p != "-"]:
    messages.append({"role": "user", "content": [{"type": "text", "text": part}]})
    body = {"model": "m", "system": system, "tools": tools, "messages": messages}
    request = urllib.request.Request(
        os.environ["HTTP_AGENT_BASE_URL"] + "/v1/messages?beta=true",
        data=json.dumps(body).encode(),
        headers={"x-api-key": "sk-ant-Zq7xK2pW9mR4", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        lines = response.read().decode().splitlines()
    events = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
    said = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    messages.append({"role": "assistant", "content": [{"type": "text", "text": said}]})
print(said or "nothing sent")
"""

RULES = "# Rules\nNever push to main.\nUse rg, not grep -r.\n"


@pytest.fixture
def api(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelServer]:
    with model_server("anthropic", lambda request: Reply(text="ok")) as server:
        monkeypatch.setenv("SCRIPTED_API", server.url)
        monkeypatch.setenv("HTTP_AGENT_BASE_URL", "http://the-users-own-base-url.invalid")
        http_agent.install(pytester, AGENT)
        (pytester.path / "evals" / "fixture").mkdir(parents=True)
        (pytester.path / "evals" / "fixture" / "CLAUDE.md").write_text(RULES)
        yield server


def case(prompt: str, *checks: str) -> str:
    listed = "".join(f"  - {check}\n" for check in checks)
    return f"id: reach\ndefends: CLAUDE.md\ncwd: fixture\nprompt: '{prompt}'\nchecks:\n{listed}"


def write(pytester: pytest.Pytester, text: str) -> None:
    (pytester.path / "evals" / "reach.yaml").write_text(text)


def checks_of(pytester: pytest.Pytester) -> dict[str, tuple[bool, str]]:
    record = only_results(pytester.path)["cases"][0]
    return {c["id"]: (c["passed"], c["message"]) for c in record["checks"]}


@pytest.mark.parametrize("options", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_rule_that_reached_the_model_is_found_and_one_that_did_not_is_absent_with_recording_off(
    pytester: pytest.Pytester, api: ModelServer, options: list[str]
) -> None:
    write(
        pytester,
        case(
            "tidy up|and commit",
            "{type: request_matches, id: rule, pattern: '^Never push to main\\.$'}",
            "{type: request_matches, id: tool, pattern: '^Read: Reads a file'}",
            "{type: request_matches, id: second, request: 2, pattern: '^and commit$'}",
            "{type: request_not_matches, id: first, request: 1, pattern: 'and commit'}",
            "{type: request_not_matches, id: retired, pattern: 'Always rebase'}",
        ),
    )
    pytester.makefile(".ini", tox="[pytest]\neval_record = false\n")

    result = pytester.runpytest("--eval-agent", "http", "-p", "no:cacheprovider", *options)

    result.assert_outcomes(passed=1)
    checks = checks_of(pytester)
    assert all(passed for passed, _ in checks.values()), checks
    assert "request 1, system prompt, line 2: 'Never push to main.'" in checks["rule"][1]
    assert "request 1, tools, line 1" in checks["tool"][1]
    assert "request 2, message 3 (user), line 1: 'and commit'" in checks["second"][1]
    # Through the proxy, not recorded: the model API got both requests, nothing stored.
    assert len(api.requests) == 2
    assert only_results(pytester.path)["cases"][0]["recording"] is None
    assert not list(pytester.path.rglob("exchange.jsonl*"))


def test_a_rule_that_reached_the_model_fails_request_not_matches_saying_where(
    pytester: pytest.Pytester, api: ModelServer
) -> None:
    write(
        pytester,
        case(
            "tidy up|and commit",
            "{type: request_not_matches, id: leaked, pattern: '(?i)never push'}",
            "{type: request_matches, id: beyond, request: 3, pattern: 'x'}",
            "{type: request_matches, id: absent, pattern: 'Always rebase'}",
        ),
    )

    result = pytester.runpytest("--eval-agent", "http", "-p", "no:cacheprovider", "--eval-no-save")

    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert (
        "pattern '(?i)never push' must not match what the CLI sent its model; it matched "
        "request 1, system prompt, line 2: 'Never push to main.' (and 1 more request)"
    ) in out
    assert "request 3: the CLI sent its model only 2 requests" in out
    assert "pattern 'Always rebase' not found in what the CLI sent its model (2 requests; " in out
    assert "the last held: system prompt, tools, 3 messages" in out


def test_a_run_that_sent_no_request_is_an_error_never_a_pass(
    pytester: pytest.Pytester, api: ModelServer
) -> None:
    write(pytester, case("-", "{type: request_not_matches, pattern: 'anything'}"))

    result = pytester.runpytest("--eval-agent", "http", "-p", "no:cacheprovider", "--eval-no-save")

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*request_not_matches: the proxy saw no request of the http agent to its model*"]
    )


def test_an_agent_that_does_not_talk_through_the_proxy_makes_the_check_an_error(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "agent.py").write_text("print('done')\n")
    pytester.makefile(
        ".ini",
        tox="[pytest]\neval_agent = command\neval_agent_command = {python} {rootdir}/agent.py\n",
    )
    (pytester.path / "evals").mkdir()
    write(
        pytester,
        "id: reach\ndefends: CLAUDE.md\nprompt: go\n"
        "checks: [{type: request_not_matches, pattern: 'Never push'}]\n",
    )

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["error_kind"] == "no-transcript"
    assert (
        "request_not_matches needs the requests the CLI sent its model, and the command agent "
        "does not talk to its model API through the plugin's proxy"
    ) in record["error"]


def test_a_regrade_reads_the_requests_from_the_stored_recording(
    pytester: pytest.Pytester, api: ModelServer
) -> None:
    write(pytester, case("tidy up", "{type: output_matches, pattern: ok}"))
    pytester.runpytest("--eval-agent", "http", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    write(
        pytester,
        case(
            "tidy up",
            "{type: request_matches, id: rule, pattern: 'Use rg, not grep -r'}",
            "{type: request_not_matches, id: leaked, pattern: 'Never push'}",
        ),
    )
    sent = len(api.requests)

    result = pytester.runpytest("--eval-agent", "http", "-p", "no:cacheprovider", "--eval-regrade")

    result.assert_outcomes(failed=1)
    assert len(api.requests) == sent
    results = sorted(results_files(pytester.path))
    checks = {c["id"]: c for c in json.loads(results[-1].read_text())["cases"][0]["checks"]}
    assert checks["rule"]["passed"]
    assert "request 1, system prompt, line 3" in checks["rule"]["message"]
    assert not checks["leaked"]["passed"]


def test_a_replayed_run_is_graded_on_the_requests_its_cli_sent_again(
    pytester: pytest.Pytester, api: ModelServer
) -> None:
    write(pytester, case("tidy up", "{type: request_matches, pattern: 'Use rg, not grep -r'}"))
    pytester.runpytest("--eval-agent", "http", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    sent = len(api.requests)

    result = pytester.runpytest(
        "--eval-agent", "http", "-p", "no:cacheprovider", "--eval-replay", "--eval-no-save"
    )

    result.assert_outcomes(passed=1)
    # Answered from the recording: the API heard nothing more.
    assert len(api.requests) == sent
