"""Replay's core (docs/replay.md, "What is normalised"): normalising, matching and the
description of a divergence, on real recordings of the three CLIs.

``replay_samples/<cli>-1`` and ``-2`` are two recordings of the same case by the real
``claude``, ``codex`` and ``gemini`` against the scripted model server, each in a
workspace and agent home of its own (their long, unvarying parts shortened alike)."""

from __future__ import annotations

import copy
import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.run import replay
from pytest_evalcases.run.replay import (
    Divergence,
    Normaliser,
    Places,
    RecordedExchange,
    Recording,
    RecordingError,
    Replay,
    ReplayPlan,
    ReplaySource,
    read_recording,
)

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


def send(player: Replay, exchange: RecordedExchange, body: str | None = None) -> Any:
    data = (exchange.body if body is None else body) or ""
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
    plain = [raw.request(e.method, e.path, e.body).body for e in first.exchanges if e.body]
    again = [raw.request(e.method, e.path, e.body).body for e in second.exchanges if e.body]
    assert plain != again
    player = Replay(first, Places(), str)
    model = [e for e in second.exchanges if e.method == "POST"]
    assert isinstance(send(player, model[-1]), Divergence)


def test_requests_match_in_any_order_and_repeated_ones_in_turn(tmp_path: Path) -> None:
    first, second = sample(tmp_path, "claude-1"), sample(tmp_path, "claude-2")
    twice = first.exchanges[1]
    retried = RecordedExchange(99, twice.method, twice.path, twice.body, 200, "OK", (), b"again")
    recorded = Recording(first.path, (*first.exchanges, retried), first.places)
    player = replaying(recorded, second)

    later, earlier, head = second.exchanges[2], second.exchanges[1], second.exchanges[0]
    assert send(player, later).seq == 2
    assert send(player, earlier).seq == 1
    assert send(player, earlier).response == b"again"
    assert send(player, head).seq == 0
    assert isinstance(send(player, earlier), Divergence)


def edited(exchange: RecordedExchange, change: Any) -> str:
    body = json.loads(exchange.body or "{}")
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
    model = [e for e in second.exchanges if e.method == "POST" and e.body][-1]

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
    model = [e for e in second.exchanges if e.method == "POST" and e.body][-1]
    text = (model.body or "").replace("(Bash completed with no output)", "MARK-changed")
    text = text.replace("Output: (empty)", "Output: MARK-changed")
    text = text.replace('\\"output\\":\\"\\"', '\\"output\\":\\"MARK-changed\\"')
    assert text != model.body

    found = send(replaying(first, second), model, text)

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
    recorded = json.loads(second.exchanges[1].body or "{}")["model"]

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


def test_what_always_varies_is_normalised() -> None:
    normal = Normaliser(Places("/tmp/w/case0", ("/home/u/.cache/h-1",)))
    text = (
        "CWD: /tmp/w/case0\nDate: 2026-12-02 at 2026-12-02T09:30:00.123Z, 09:30:00 "
        "on Wednesday, December 2, 2026; id 69652f8f-a1d6-44b7-bb99-9dc6ab2f6eac, "
        "toolu_01AbCdEf23, call_Xy12ab34, run_shell_command_1796217588074_0, "
        "/home/u/.cache/h-1/skills, /x/.cache/pytest-evalcases/agent-homes/home-ab_12/y, "
        'Process Group PGID: 6732, {"chunk_id":"57b127","wall_time_seconds":0.00004}, '
        "Script completed\nWall time 0.2 seconds\n"
        "drwxr-xr-x 8 root root 4096 Dec  3 15:58 .git\n-rw-r--r-- 1 u u 9 Jan  1  2001 a\n"
        "-rw-r--r-- 1 u u 9 Dec 13 09:01 b"
    )
    assert normal.text(text) == (
        "CWD: <workspace>\nDate: <date> at <date>, <time> on <date>; id <uuid>, "
        "toolu_<id>, call_<id>, run_shell_command_<time>_0, <home>/skills, <home>/y, "
        'Process Group PGID: <pid>, {"chunk_id":"<id>","wall_time_seconds":<seconds>}, '
        "Script completed\nWall time <seconds> seconds\n"
        "drwxr-xr-x 8 root root 4096 <date> .git\n-rw-r--r-- 1 u u 9 <date> a\n"
        "-rw-r--r-- 1 u u 9 <date> b"
    )


def test_claude_codes_project_name_of_the_workspace_is_the_workspace() -> None:
    # Claude Code without --bare names its memory directory after the workspace.
    memory = "{}/claude_config_dir/projects/{}/memory/"
    normal = Normaliser(Places("/tmp/pytest-of-u/pytest-7/case0", ("/h/1",)))
    assert normal.text(memory.format("/h/1", "-tmp-pytest-of-u-pytest-7-case0")) == (
        memory.format("<home>", "<workspace>")
    )
    # Only this run's: another workspace's project stays as it is.
    assert "-tmp-pytest-of-u-pytest-8-case0" in normal.text("-tmp-pytest-of-u-pytest-8-case0")


def test_a_long_workspace_path_is_named_as_claude_code_names_it() -> None:
    # Found by running claude 2.1.197 in this directory: its project directory's name.
    path = "/tmp/" + "/".join(["abcdefghij_klmnopq.rstu"] * 10)
    name = replay.claude_project(path)
    assert name == "-tmp-" + "-".join(["abcdefghij-klmnopq-rstu"] * 10)[:195] + "-t3c4cq"
    assert Normaliser(Places(path)).text(f"projects/{name}/memory") == "projects/<workspace>/memory"


def test_the_clis_metadata_and_credential_parameters_are_left_out() -> None:
    normal = Normaliser(Places())
    one = {
        "metadata": {"user_id": "device-1"},
        "client_metadata": {"session_id": "a"},
        "prompt_cache_key": "a",
        "input": [{"internal_chat_message_metadata_passthrough": {"create_time": 1}}],
    }
    two = copy.deepcopy(one)
    two["metadata"]["user_id"] = "device-2"
    two["client_metadata"]["session_id"] = "b"
    two["prompt_cache_key"] = "b"
    two["input"][0]["internal_chat_message_metadata_passthrough"]["create_time"] = 2
    assert (
        normal.request("POST", "/m?key=Zq7xK2pW9mR4&alt=sse", json.dumps(one)).key
        == normal.request("POST", "/m?key=&alt=sse", json.dumps(two)).key
    )


def test_turns_count_the_models_answers_in_each_dialect() -> None:
    anthropic = {"messages": [{"role": "user"}, {"role": "assistant"}, {"role": "user"}]}
    responses = {
        "input": [
            {"role": "developer"},
            {"role": "user"},
            {"type": "reasoning"},
            {"type": "function_call"},
            {"type": "function_call_output"},
            {"type": "message", "role": "assistant"},
            {"role": "user"},
        ]
    }
    gemini = {"contents": [{"role": "user"}, {"role": "model"}, {"role": "user"}]}
    assert [replay.turn(replay.conversation(b)) for b in (anthropic, responses, gemini)] == [
        2,
        3,
        2,
    ]
    assert replay.turn(replay.conversation({"messages": [{"role": "user"}]})) == 1


def test_tokens_are_read_from_each_dialects_usage() -> None:
    anthropic = (
        'event: message_start\ndata: {"type": "message_start", "message": {"usage": '
        '{"input_tokens": 100, "cache_read_input_tokens": 20, "output_tokens": 1}}}\n\n'
        'event: message_delta\ndata: {"type": "message_delta", "usage": {"output_tokens": 9}}\n\n'
    )
    responses = (
        'data: {"type": "response.completed", "response": {"usage": '
        '{"input_tokens": 50, "output_tokens": 5}}}\n\n'
    )
    gemini = (
        'data: {"usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 1}}\r\n\r\n'
        'data: {"usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 3}}\r\n\r\n'
    )
    plain = '{"usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2}}'
    # Anthropic's cache reads are not input tokens, as the CLI does not count them so.
    assert [replay.response_tokens(t.encode()) for t in (anthropic, responses, gemini, plain)] == [
        109,
        55,
        10,
        6,
    ]
    assert replay.response_tokens(b"not json") == 0


def test_the_cost_saved_is_the_recorded_cost_times_the_share_replayed(tmp_path: Path) -> None:
    first, second = sample(tmp_path, "claude-1", cost=0.5), sample(tmp_path, "claude-2")
    player = replaying(first, second)
    send(player, second.exchanges[0])
    send(player, second.exchanges[1])
    share = first.exchanges[1].tokens / first.tokens

    assert player.saved_usd == pytest.approx(0.5 * share)
    outcome = replay.outcome(player, diverged=True, reuse=True)
    assert (outcome.how, outcome.saved_tokens) == ("partial", first.exchanges[1].tokens)
    assert replay.outcome(player, diverged=False, reuse=True).how == "full"
    assert replay.outcome(player, diverged=True, reuse=False).how == "diverged"
    assert replay.outcome(None, diverged=False, reuse=True).how == "live"


def test_a_run_of_which_only_the_check_of_the_api_replayed_went_live(tmp_path: Path) -> None:
    first, second = sample(tmp_path, "claude-1", cost=0.5), sample(tmp_path, "claude-2")
    player = replaying(first, second)
    check = second.exchanges[0]
    assert (check.method, check.body) == ("HEAD", "")
    send(player, check)
    assert isinstance(send(player, second.exchanges[1], "{}"), Divergence)

    outcome = replay.outcome(player, diverged=True, reuse=True)

    assert (outcome.how, outcome.saved_tokens, outcome.saved_usd) == ("live", 0, 0.0)


def test_a_corrupt_recording_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "exchange.jsonl").write_text('{"format": "pytest-evalcases exchange"}\n{oops\n')
    with pytest.raises(RecordingError, match=r"exchange\.jsonl: not a readable recording"):
        read_recording(tmp_path)
    (tmp_path / "exchange.jsonl").write_text('{"format": "something else"}\n')
    with pytest.raises(RecordingError, match="not a pytest-evalcases exchange"):
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
    assert "not a readable recording" in source.find("a", "", 0).missing


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


@pytest.mark.parametrize(
    ("name", "repetition"),
    [("a", 0), ("a.r0", 0), ("a.r3", 3), ("a.strict.r1", 1), ("a.r1x", 0)],
)
def test_a_runs_repetition_from_its_name(name: str, repetition: int) -> None:
    variant = "strict" if "strict" in name else ""
    assert replay.repetition_of(name, "a", variant) == repetition
