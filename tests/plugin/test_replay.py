"""--eval-replay and --eval-reuse through the plugin (docs/replay.md, "Replay", "Reuse"):
the HTTP agent of :mod:`tests.plugin.test_recording` (one request to its base URL), the
scripted Messages API as the upstream; the options' usage errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.model_server import ModelServer
from tests.helpers.results import results_files
from tests.plugin import test_recording

#: The HTTP agent and its scripted API, as the recording tests have them.
api = test_recording.api


def session(pytester: pytest.Pytester, *options: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    """A session of the HTTP agent; its result and its (new) results file."""
    before = set(results_files(pytester.path))
    result = pytester.runpytest("--eval-agent", "http", "-p", "no:cacheprovider", *options)
    [path] = set(results_files(pytester.path)) - before
    return result, json.loads(path.read_text())


@pytest.mark.parametrize(
    "options",
    [[], ["-n", "2"], ["--eval-concurrency", "2"]],
    ids=["serial", "xdist", "concurrency"],
)
def test_a_replay_answers_every_run_from_its_own_recording(
    pytester: pytest.Pytester, api: ModelServer, options: list[str]
) -> None:
    session(pytester, "--eval-repeat", "2", *options)[0].assert_outcomes(passed=4)
    assert len(api.requests) == 4

    result, doc = session(pytester, "--eval-replay", "--eval-repeat", "2", *options)

    result.assert_outcomes(passed=4)
    assert len(api.requests) == 4
    assert {r["replay"] for r in doc["cases"]} == {"full"}
    assert all(r["saved_tokens"] == 110 for r in doc["cases"])
    result.stdout.fnmatch_lines(
        ["replay: 4 runs replayed in full, 0 in part, 0 live · saved 440 tokens"]
    )


def test_a_changed_prompt_diverges_and_a_new_case_has_nothing_to_replay(
    pytester: pytest.Pytester, api: ModelServer
) -> None:
    session(pytester)[0].assert_outcomes(passed=2)
    evals = pytester.path / "evals"
    (evals / "alpha.yaml").write_text(
        (evals / "alpha.yaml").read_text().replace("prompt: MARK-alpha", "prompt: MARK-alpha2")
    )
    (evals / "gamma.yaml").write_text((evals / "beta.yaml").read_text().replace("beta", "gamma"))

    result, doc = session(pytester, "--eval-replay", "--eval-retry-errors", "2")

    result.assert_outcomes(passed=1, errors=2)
    runs = {r["id"]: r for r in doc["cases"]}
    assert runs["alpha"]["error_kind"] == "replay-diverged"
    assert runs["alpha"]["error"].startswith(
        "replay diverged at turn 1: message 1 differs (POST /v1/messages?beta=true)"
    )
    assert '- "content": "MARK-alpha",' in runs["alpha"]["error"]
    assert '+ "content": "MARK-alpha2",' in runs["alpha"]["error"]
    assert runs["gamma"]["error_kind"] == "replay-missing"
    assert "has no run 0 of gamma" in runs["gamma"]["error"]
    assert (runs["alpha"]["attempts"], runs["gamma"]["attempts"]) == (1, 1)
    assert runs["beta"]["replay"] == "full"
    # Nothing left the machine: the refusal reached the agent, not the API.
    assert len(api.requests) == 2

    result, doc = session(pytester, f"--eval-reuse={_first(pytester)}")

    result.assert_outcomes(passed=3)
    runs = {r["id"]: r for r in doc["cases"]}
    assert (runs["alpha"]["replay"], runs["beta"]["replay"], runs["gamma"]["replay"]) == (
        "live",
        "full",
        "live",
    )
    assert [r.body["messages"][0]["content"] for r in api.requests[2:]] == [
        "MARK-alpha2",
        "MARK-gamma",
    ]
    result.stdout.fnmatch_lines(["replay: 1 run replayed in full, 0 in part, 2 live · *"])


def _first(pytester: pytest.Pytester) -> Path:
    return results_files(pytester.path)[0]


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--eval-replay", "--eval-reuse"], "--eval-replay and --eval-reuse cannot be used"),
        (["--eval-reuse", "--eval-no-save"], "--eval-reuse records the runs that go live"),
        (["--eval-replay"], "no results file to replay from"),
        (["--eval-replay=nowhere.json"], "--eval-replay: *nowhere.json*"),
    ],
    ids=["both", "reuse-unrecorded", "no-results", "missing-file"],
)
def test_bad_uses_are_usage_errors(
    pytester: pytest.Pytester, options: list[str], said: str
) -> None:
    pytester.makeini("[pytest]\n")

    result = pytester.runpytest(*options)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{said}*"])


def test_a_malformed_results_file_is_named(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    (pytester.path / "bad.json").write_text('{"cases": [{"id": 3}]}')

    result = pytester.runpytest("--eval-replay=bad.json")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--eval-replay: *bad.json*"])


def test_replay_works_without_recording(pytester: pytest.Pytester, api: ModelServer) -> None:
    session(pytester)[0].assert_outcomes(passed=2)
    first = _first(pytester)
    pytester.makefile(".ini", tox="[pytest]\neval_record = false\n")

    result, doc = session(pytester, f"--eval-replay={first}")

    result.assert_outcomes(passed=2)
    assert len(api.requests) == 2
    assert [r["recording"] for r in doc["cases"]] == [None, None]
    assert {r["replay"] for r in doc["cases"]} == {"full"}
