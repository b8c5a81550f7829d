"""Models as the variable with the real ``claude`` CLI (docs/variants.md, "Agents and
models as the variable"): two ``--eval-variant NAME=model:…`` variants of one session
against the scripted Messages API of :mod:`tests.helpers.model_server`, which answers
each model its own way; then the session replayed, each variant from its own
recordings (docs/replay.md).

The CLI's non-essential traffic is left on here, unlike the other real-CLI tests: its
helper requests (a session title) are part of "every request a variant's runs sent".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agents import test_real_clis as real_clis
from tests.agents.test_real_replay import exchanges, newest, run
from tests.helpers.model_server import ModelServer, Reply, Request

pytestmark = pytest.mark.real_cli

claude_env = real_clis.claude_env

#: The models asked for: a's by an id, b's by an alias that the CLI resolves itself (its
#: requests, and the model its result reports, name the model it resolved it to).
ASKED = {"a": "claude-scripted-a", "b": "sonnet"}
VARIANTS = [f"--eval-variant={name}=model:{model}" for name, model in ASKED.items()]

#: Turn 1 runs a command that writes the run's variant (EVALCASES_VARIANT reaches the
#: agent's tools, not the request): turn 2's tool result carries it to the model. Model
#: b then says it is not done: the case regresses in b against a.
CASE = """
id: writes
defends: CLAUDE.md
prompt: Write made.txt MARK-writes
checks:
  - {type: file_matches, path: made.txt, pattern: "^made for MARK-variant-[ab]$"}
  - {type: output_matches, pattern: "^done"}
"""


def by_model(request: Request) -> Reply:
    """The scripted model: the same command for both models, then an answer that
    names the model asked for; any model but a's gives one that fails the case."""
    model = str(request.body.get("model"))
    if not request.body.get("tools"):
        # A helper request of the CLI (a session title, a JSON-schema answer).
        return Reply(text=json.dumps({"title": f"Scripted {model}"}))
    if request.tool_results == 0:
        shell = 'echo "made for MARK-variant-$EVALCASES_VARIANT" > made.txt; cat made.txt'
        return Reply(shell=shell, input_tokens=120, output_tokens=9)
    said = "done" if model == ASKED["a"] else "not done"
    return Reply(text=f"{said}, says {model} {' '.join(request.markers)}", output_tokens=4)


def suite(pytester: pytest.Pytester) -> None:
    pytester.makefile(".ini", tox=real_clis.CLAUDE_INI)
    (pytester.path / "CLAUDE.md").write_text("Be brief.\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "writes.yaml").write_text(CASE)


@pytest.fixture
def server(claude_env: ModelServer, monkeypatch: pytest.MonkeyPatch) -> ModelServer:
    """The scripted API answering :func:`by_model`, the CLI's helper requests on."""
    monkeypatch.delenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")
    claude_env.script = by_model
    return claude_env


def live(pytester: pytest.Pytester) -> tuple[pytest.RunResult, Path]:
    """The two-variant session, live: the case regresses in b."""
    suite(pytester)
    result = run(pytester, "live", *VARIANTS)
    result.assert_outcomes(passed=1, failed=1)
    return result, newest(pytester)[0]


def runs(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """The runs of a results file by case id and variant."""
    return {(r["id"], r["variant"]): r for r in doc["cases"]}


def comparison(result: pytest.RunResult) -> None:
    """The summary's lines on the two variants and the comparison of b with a."""
    result.stdout.fnmatch_lines(
        [
            "a (claude, model claude-scripted-a): 1/1 cases passed *",
            "b (claude, model sonnet): 0/1 cases passed *",
            "b vs a (model): 1 check regressed, 0 improved; cases 1 regressed, 0 improved "
            "(McNemar exact p=1: 1 case passed only in a, 0 only in b)",
            "  regressed: writes / output_matches-1",
        ]
    )


def test_claude_model_variants_send_their_own_model_and_record_it_in_the_pins(
    pytester: pytest.Pytester, server: ModelServer
) -> None:
    result, path = live(pytester)

    doc = json.loads(path.read_text())
    found = runs(doc)
    assert {k: r["outcome"] for k, r in found.items()} == {
        ("writes", "a"): "passed",
        ("writes", "b"): "failed",
    }
    # Every request the server got is one of a run's recorded requests (each run's CLI
    # goes through a recording proxy of its own): the models each variant's asked for.
    sent = sorted(json.dumps(r.body, sort_keys=True) for r in server.requests)
    recorded, served = [], {}
    for (case, variant), record in found.items():
        bodies = [json.loads(e.request.text or "{}") for e in exchanges(path, record)]
        bodies = [b for b in bodies if b]
        assert bodies, (case, variant)
        served[variant] = {b["model"] for b in bodies}
        recorded += [json.dumps(b, sort_keys=True) for b in bodies]
    assert sorted(recorded) == sent
    # Each of b's requests asked for the model the CLI made of `sonnet`.
    assert served["a"] == {ASKED["a"]}
    [resolved] = served["b"]
    assert resolved.startswith("claude-sonnet-"), resolved
    assert (found["writes", "a"]["model"], found["writes", "b"]["model"]) == (ASKED["a"], resolved)
    # EVALCASES_VARIANT reached the agent's command, and its output the model.
    for variant in ASKED:
        told = [r for r in server.requests if f"MARK-variant-{variant}" in r.text]
        assert told
        assert {r.body["model"] for r in told} == served[variant]
    # The CLI's helper requests (a session title) ask for the variant's model too, not a
    # small model of their own.
    helpers = [r for r in server.requests if not r.body.get("tools")]
    assert {r.body["model"] for r in helpers} <= {ASKED["a"], resolved}
    pins = doc["pins"]["variants"]
    assert set(pins) == {"a", "b"}
    for variant in ASKED:
        assert pins[variant]["agent"] == "claude"
        assert pins[variant]["agent_version"] == pins["a"]["agent_version"]
        assert "Claude Code" in pins[variant]["agent_version"]
    # The model asked for, and the one the CLI's result reported using.
    assert (pins["a"]["model"], pins["a"]["models"]) == (ASKED["a"], [ASKED["a"]])
    assert (pins["b"]["model"], pins["b"]["models"]) == ("sonnet", [resolved])
    assert pins["a"]["config_fingerprint"] == pins["b"]["config_fingerprint"]
    comparison(result)


def test_claude_model_variants_replay_their_own_recordings(
    pytester: pytest.Pytester, server: ModelServer
) -> None:
    _, recorded = live(pytester)
    before = runs(json.loads(recorded.read_text()))
    resolved = before["writes", "b"]["model"]
    sent = len(server.requests)

    server.script = lambda request: Reply(status=500, error="a replay reached the API")

    result = run(pytester, "replay", "--eval-replay", *VARIANTS)

    path, doc = newest(pytester)
    after = runs(doc)
    assert {k: r["replay"] for k, r in after.items()} == dict.fromkeys(before, "full"), {
        k: r["error"] for k, r in after.items()
    }
    assert len(server.requests) == sent, "a replay sent a request to the API"
    result.assert_outcomes(passed=1, failed=1)
    for key, old in before.items():
        new = after[key]
        assert new["outcome"] == old["outcome"], key
        assert [c["passed"] for c in new["checks"]] == [c["passed"] for c in old["checks"]]
        assert new["model"] == old["model"], key
        # Each run's answers are those of its own variant's recording, in any
        # order: the CLI sends its helper request (a title) beside the first
        # turn, sometimes before it and sometimes after, and replay matches by request.
        answered = sorted(e.response.text or "" for e in exchanges(path, new))
        assert answered == sorted(e.response.text or "" for e in exchanges(recorded, old)), key
    assert doc["pins"]["variants"]["b"]["models"] == [resolved]
    comparison(result)
    result.stdout.fnmatch_lines(["replay: 2 runs replayed in full, 0 in part, 0 live · saved *"])

    # Another model under b's name finds b's recording, and differs from it at once.
    changed = run(pytester, "changed", f"--eval-replay={recorded}", "--eval-variant=b=model:other")

    changed.assert_outcomes(errors=1)
    [record] = newest(pytester)[1]["cases"]
    assert (record["variant"], record["replay"]) == ("b", "diverged")
    assert "replay diverged at turn 1: the request's 'model' differs" in record["error"]
    assert f"-{resolved}\n+other" in record["error"]
    assert len(server.requests) == sent
