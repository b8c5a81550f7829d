"""Replay's core (docs/replay.md, "What is normalised"): normalising, matching and the
description of a divergence, on real recordings of the three CLIs.

``replay_samples/<cli>-1`` and ``-2`` are two recordings of the same case by the real
``claude``, ``codex`` and ``gemini`` against the scripted model server, each in a
workspace and agent home of its own (their long, unvarying parts shortened alike)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.recording import replay
from pytest_evalcases.recording.format import Exchange, Message, RecordingError
from pytest_evalcases.recording.normalise import Normaliser, Places
from pytest_evalcases.recording.replay import (
    Divergence,
    Recording,
    Replay,
    read_recording,
    request_text,
)
from pytest_evalcases.recording.source import ReplayPlan, ReplaySource

SAMPLES = Path(__file__).parent / "replay_samples"
CLIS = ("claude", "codex", "gemini")


def sample(tmp_path: Path, name: str, cost: float | None = None) -> Recording:
    directory = tmp_path / name
    directory.mkdir()
    shutil.copy(SAMPLES / f"{name}.jsonl.gz", directory / "exchange.jsonl.gz")
    found = read_recording(directory, cost)
    assert found is not None
    return found


def replaying(recorded: Recording, live: Recording) -> Replay:
    """A replay of ``recorded`` for a run in ``live``'s workspace and home."""
    return Replay(recorded, live.places, str)


def send(player: Replay, exchange: Exchange, body: str | None = None) -> Any:
    data = (request_text(exchange) if body is None else body) or ""
    return player.answer(exchange.method, exchange.path, data.encode())


@pytest.mark.parametrize("cli", CLIS)
def test_a_second_run_of_the_same_case_replays_in_full(tmp_path: Path, cli: str) -> None:
    first, second = sample(tmp_path, f"{cli}-1"), sample(tmp_path, f"{cli}-2")
    player = replaying(first, second)

    answers = [send(player, e) for e in second.exchanges]

    assert [a.seq for a in answers] == [e.seq for e in first.exchanges]
    assert player.answered == len(first.exchanges)


@pytest.mark.parametrize("cli", CLIS)
def test_the_two_runs_differ_before_normalising(tmp_path: Path, cli: str) -> None:
    first, second = sample(tmp_path, f"{cli}-1"), sample(tmp_path, f"{cli}-2")
    raw = Normaliser(Places())
    # Without its paths and the patterns of what varies, no model request matches.
    plain = [raw.request(e.method, e.path, t).body for e in first.exchanges if (t := text(e))]
    again = [raw.request(e.method, e.path, t).body for e in second.exchanges if (t := text(e))]
    assert plain != again
    player = Replay(first, Places(), str)
    model = [e for e in second.exchanges if e.method == "POST"]
    assert isinstance(send(player, model[-1]), Divergence)


def test_requests_match_in_any_order_and_repeated_ones_in_turn(tmp_path: Path) -> None:
    first, second = sample(tmp_path, "claude-1"), sample(tmp_path, "claude-2")
    twice = first.exchanges[1]
    retried = Exchange(
        twice.method, twice.path, twice.request, 200, "OK", Message((), b"again"), seq=99
    )
    recorded = Recording(first.path, (*first.exchanges, retried), first.places)
    player = replaying(recorded, second)

    later, earlier, head = second.exchanges[2], second.exchanges[1], second.exchanges[0]
    assert send(player, later).seq == 2
    assert send(player, earlier).seq == 1
    assert send(player, earlier).response.body == b"again"
    assert send(player, head).seq == 0
    assert isinstance(send(player, earlier), Divergence)


def text(exchange: Exchange) -> str:
    """The recorded request's body as replay compares it."""
    return request_text(exchange) or ""


def edited(exchange: Exchange, change: Any) -> str:
    body = json.loads(text(exchange) or "{}")
    change(body)
    return json.dumps(body)


def claude_md(body: dict[str, Any]) -> None:
    first = body["messages"][0]["content"][0]
    first["text"] = first["text"].replace(
        "# currentDate", "# claudeMd\nAlways sign your commits.\n# currentDate"
    )


def test_a_changed_claude_md_diverges_at_turn_1_in_the_system_prompt(tmp_path: Path) -> None:
    first, second = sample(tmp_path, "claude-1"), sample(tmp_path, "claude-2")
    player = replaying(first, second)

    found = send(player, second.exchanges[1], edited(second.exchanges[1], claude_md))

    assert isinstance(found, Divergence)
    assert found.turn == 1
    assert found.what == "the system prompt (the CLI's context in message 1) differs"
    assert "+# claudeMd" in found.diff
    assert "+Always sign your commits." in found.diff
    assert found.message.startswith(
        "replay diverged at turn 1: the system prompt (the CLI's context in message 1) "
        "differs (POST /v1/messages?beta=true)\n--- recorded\n+++ now\n"
    )


@pytest.mark.parametrize(
    ("cli", "field"),
    [("claude", "system"), ("codex", "instructions"), ("gemini", "systemInstruction")],
)
def test_a_changed_system_prompt_is_named_in_each_dialect(
    tmp_path: Path, cli: str, field: str
) -> None:
    first, second = sample(tmp_path, f"{cli}-1"), sample(tmp_path, f"{cli}-2")
    model = [e for e in second.exchanges if e.method == "POST" and text(e)][-1]

    def change(body: dict[str, Any]) -> None:
        body[field] = "You are a different agent."

    found = send(replaying(first, second), model, edited(model, change))

    assert isinstance(found, Divergence)
    assert found.turn == 2
    assert found.what == "the system prompt differs"
    assert "+You are a different agent." in found.diff


@pytest.mark.parametrize("cli", CLIS)
def test_a_changed_tool_result_diverges_at_turn_2(tmp_path: Path, cli: str) -> None:
    first, second = sample(tmp_path, f"{cli}-1"), sample(tmp_path, f"{cli}-2")
    model = [e for e in second.exchanges if e.method == "POST" and text(e)][-1]
    changed = text(model).replace("(Bash completed with no output)", "MARK-changed")
    changed = changed.replace("Output: (empty)", "Output: MARK-changed")
    changed = changed.replace('\\"output\\":\\"\\"', '\\"output\\":\\"MARK-changed\\"')
    assert changed != text(model)

    found = send(replaying(first, second), model, changed)

    assert isinstance(found, Divergence)
    assert found.turn == 2
    assert found.what.startswith("the tool result in message ")
    assert any(line.startswith("+") and "MARK-changed" in line for line in found.diff)


def test_a_changed_tool_list_is_named(tmp_path: Path) -> None:
    first, second = sample(tmp_path, "claude-1"), sample(tmp_path, "claude-2")

    def change(body: dict[str, Any]) -> None:
        body["tools"] = body["tools"][:1]

    found = send(replaying(first, second), second.exchanges[1], edited(second.exchanges[1], change))

    assert isinstance(found, Divergence)
    assert (found.turn, found.what) == (1, "the tool list differs")


def test_another_model_is_named_before_the_fields_it_changes(tmp_path: Path) -> None:
    first, second = sample(tmp_path, "claude-1"), sample(tmp_path, "claude-2")
    recorded = json.loads(text(second.exchanges[1]) or "{}")["model"]

    def change(body: dict[str, Any]) -> None:
        # Claude Code asks another model for another `max_tokens`, which sorts first.
        body["model"], body["max_tokens"] = "claude-other", 1000

    found = send(replaying(first, second), second.exchanges[1], edited(second.exchanges[1], change))

    assert isinstance(found, Divergence)
    assert (found.turn, found.what) == (1, "the request's 'model' differs")
    assert found.diff == ("--- recorded", "+++ now", "@@ -1 +1 @@", f"-{recorded}", "+claude-other")


def test_a_request_the_recording_lacks_is_named(tmp_path: Path) -> None:
    first, second = sample(tmp_path, "claude-1"), sample(tmp_path, "claude-2")

    found = replaying(first, second).answer("POST", "/v1/messages/count_tokens", b"{}")

    assert isinstance(found, Divergence)
    assert found.what == "a request the recording does not have"


def test_a_divergence_diff_is_short_and_its_lines_cut(tmp_path: Path) -> None:
    first, second = sample(tmp_path, "claude-1"), sample(tmp_path, "claude-2")

    def change(body: dict[str, Any]) -> None:
        body["system"] = "\n".join(f"line {i} " + "x" * 300 for i in range(40))

    found = send(replaying(first, second), second.exchanges[1], edited(second.exchanges[1], change))

    assert isinstance(found, Divergence)
    assert len(found.diff) == 2 + replay.DIFF_LINES + 1
    assert found.diff[-1].startswith("… (")
    assert all(len(line) <= replay.DIFF_WIDTH for line in found.diff)


def test_the_cost_saved_is_the_recorded_cost_times_the_share_replayed(tmp_path: Path) -> None:
    first, second = sample(tmp_path, "claude-1", cost=0.5), sample(tmp_path, "claude-2")
    player = replaying(first, second)
    send(player, second.exchanges[0])
    send(player, second.exchanges[1])
    share = first.tokens_of[1] / first.tokens

    assert player.saved_usd == pytest.approx(0.5 * share)
    outcome = replay.outcome(player, diverged=True, reuse=True)
    assert (outcome.how, outcome.saved_tokens) == ("partial", first.tokens_of[1])
    assert replay.outcome(player, diverged=False, reuse=True).how == "full"
    assert replay.outcome(player, diverged=True, reuse=False).how == "diverged"
    assert replay.outcome(None, diverged=False, reuse=True).how == "live"


def test_a_run_of_which_only_the_check_of_the_api_replayed_went_live(tmp_path: Path) -> None:
    first, second = sample(tmp_path, "claude-1", cost=0.5), sample(tmp_path, "claude-2")
    player = replaying(first, second)
    check = second.exchanges[0]
    assert (check.method, text(check)) == ("HEAD", "")
    send(player, check)
    assert isinstance(send(player, second.exchanges[1], "{}"), Divergence)

    outcome = replay.outcome(player, diverged=True, reuse=True)

    assert (outcome.how, outcome.saved_tokens, outcome.saved_usd) == ("live", 0, 0.0)


def test_a_corrupt_recording_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "exchange.jsonl").write_text(
        '{"format": "pytest-evalcases exchange", "version": 1}\n{oops\n'
    )
    with pytest.raises(RecordingError, match=r"exchange\.jsonl:2: not a JSON object"):
        read_recording(tmp_path)
    (tmp_path / "exchange.jsonl").write_text('{"format": "something else"}\n')
    with pytest.raises(RecordingError, match="not a recorded exchange"):
        read_recording(tmp_path)
    assert read_recording(tmp_path / "nothing") is None


def test_the_source_finds_each_runs_recording_or_says_why_not(tmp_path: Path) -> None:
    runs = tmp_path / "results" / "old.runs"
    for name in ("a.r0", "a.r1"):
        (runs / name).mkdir(parents=True)
        shutil.copy(SAMPLES / "claude-1.jsonl.gz", runs / name / "exchange.jsonl.gz")
    path = tmp_path / "results" / "old.json"
    path.write_text(
        json.dumps(
            {
                "date": "2026-12-01T09:30:00Z",
                "cases": [
                    case("a", recording="old.runs/a.r0", cost_usd=0.25),
                    case("a", repetition=1, recording="old.runs/a.r1"),
                    case("b", recording=None),
                    case("c", recording="old.runs/c"),
                ],
            }
        )
    )
    source = ReplaySource(ReplayPlan("replay", path))

    found = source.find("a", "", 1)
    assert found.recording is not None
    assert found.recording.path == runs / "a.r1" / "exchange.jsonl.gz"
    assert source.find("a", "", 0).recording.cost_usd == 0.25  # type: ignore[union-attr]
    assert "has no run 2 of a" in source.find("a", "", 2).missing
    assert "has no run 0 of a[strict]" in source.find("a", "strict", 0).missing
    assert "was not recorded" in source.find("b", "", 0).missing
    assert "is gone" in source.find("c", "", 0).missing
    (runs / "a.r0" / "exchange.jsonl.gz").write_bytes(gzip.compress(b"{oops\n"))
    assert "exchange.jsonl.gz:1: not a JSON object" in source.find("a", "", 0).missing


def case(case_id: str, repetition: int = 0, **extra: object) -> dict[str, object]:
    return {
        "id": case_id,
        "file": f"evals/{case_id}.yaml",
        "line": 1,
        "defends": "CLAUDE.md",
        "severity": "normal",
        "variant": "",
        "repetition": repetition,
        "outcome": "passed",
        **extra,
    }


def test_a_missing_results_file_is_named(tmp_path: Path) -> None:
    source = ReplaySource(ReplayPlan("reuse", tmp_path / "gone.json"))
    assert "gone.json" in source.find("a", "", 0).missing
