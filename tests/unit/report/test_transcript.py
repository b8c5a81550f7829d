"""A run's recorded exchange read back as a conversation and printed (docs/replay.md,
"Reading a run"), on real recordings of the three agent CLIs: each ran one case through
the plugin against the scripted model server (two shell commands, then the answer;
``tests/recordings/record.py`` records them again)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.report import conversation, transcript
from pytest_evalcases.results.record import RunRecord

SAMPLES = Path(__file__).parents[2] / "recordings"
PROMPT = "Write made.txt, then count the lines of made.txt"
ANSWER = "done: made.txt has 1 line"


def sample(agent: str) -> Path:
    [path] = SAMPLES.glob(f"{agent}.exchange.jsonl*")
    return path


def record(agent: str) -> RunRecord:
    return RunRecord.from_dict(json.loads((SAMPLES / f"{agent}.record.json").read_text()))


def entries(agent: str) -> list[dict[str, Any]]:
    data = sample(agent).read_bytes()
    if sample(agent).suffix == ".gz":
        data = gzip.decompress(data)
    return [json.loads(line) for line in data.decode().splitlines()]


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


#: What each CLI's two tool calls were, as its model said them, and what the tool gave
#: back (found in the next request).
CALLS = {
    "claude": [
        ("Bash", {"command": "echo made-by-the-agent > made.txt", "description": "run"}),
        ("Bash", {"command": "wc -l made.txt", "description": "run"}),
    ],
    "codex": [
        ("exec", 'text(await tools.exec_command({cmd: "echo made-by-the-agent > made.txt"}));'),
        ("exec", 'text(await tools.exec_command({cmd: "wc -l made.txt"}));'),
    ],
    "gemini": [
        ("run_shell_command", {"command": "echo made-by-the-agent > made.txt"}),
        ("run_shell_command", {"command": "wc -l made.txt"}),
    ],
}
RESULTS = {
    "claude": ["(Bash completed with no output)", "1 made.txt"],
    "codex": ['"exit_code":0,"original_token_count":0,"output":""', '"output":"1 made.txt\\n"'],
    "gemini": ["Output: (empty)", "Output: 1 made.txt"],
}


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_the_conversation_of_each_cli(agent: str) -> None:
    read = conversation.read(sample(agent))

    assert read.header["agent"] == agent
    assert read.prompt == PROMPT
    assert [(c.name, c.input) for t in read.turns for c in t.calls] == CALLS[agent]
    results = [c.result or "" for t in read.turns for c in t.calls]
    assert [want in got for want, got in zip(RESULTS[agent], results, strict=True)] == [True, True]
    assert not any(c.failed for t in read.turns for c in t.calls)
    assert [t.text for t in read.turns] == ["", "", ANSWER]
    assert read.answer == ANSWER
    # The scripted model said 120 + 150 + 180 tokens in and 9 + 7 + 6 out.
    assert [(t.usage.input, t.usage.output) for t in read.turns] == [(120, 9), (150, 7), (180, 6)]
    assert (read.usage.input, read.usage.output) == (450, 22)
    assert all(not t.errors for t in read.turns)


def test_the_cli_helpers_are_apart_from_the_conversation() -> None:
    claude, codex, gemini = (conversation.read(sample(a)) for a in ("claude", "codex", "gemini"))

    # Claude Code checks the API with a HEAD and asks for a session title (a JSON answer).
    assert [(o.method, o.kind) for o in claude.others] == [
        ("HEAD", ""),
        ("POST", "structured answer: title"),
    ]
    assert PROMPT in claude.others[1].asked
    assert claude.tools == ("Bash", "Edit", "Read")
    # Codex tries a WebSocket seven times before HTTPS.
    assert [(o.method, o.status, o.error) for o in codex.others] == [
        ("GET", 501, "protocol upgrade refused")
    ] * 7
    # Gemini CLI asks a small model how complex the task is, with a JSON schema.
    [helper] = gemini.others
    assert helper.kind == "structured answer: complexity_reasoning, complexity_score"
    assert helper.model == "gemini-3.5-flash-lite"
    assert (helper.usage.input, helper.usage.output) == (100, 10)
    assert "run_shell_command" in gemini.tools


def test_the_printed_transcript_of_a_claude_run() -> None:
    read = conversation.read(sample("claude"))

    text = transcript.text(read, record("claude"))

    assert text.startswith("sample · agent claude · passed\n")
    assert (
        "\nprompt\n  Write made.txt, then count the lines of made.txt\n\n"
        "turn 1 · request #2 · claude-opus-4-8 · 120 in, 9 out · stop: tool_use\n"
        "  tool call Bash (toolu_0)\n"
        "    command: echo made-by-the-agent > made.txt\n"
        "    description: run\n"
        "  result\n"
        "    (Bash completed with no output)\n"
    ) in text
    assert "  result\n    1 made.txt\n" in text
    assert "\nanswer\n  done: made.txt has 1 line\n" in text
    assert "  #0 HEAD / → 501 Unsupported method ('HEAD')\n" in text
    assert "  conversation: 450 in, 22 out over 3 turns\n" in text
    assert "  other requests: 120 in, 9 out\n" in text
    assert (
        "  as the agent reported: 450 in, 22 out · cost $0.0036 · model claude-opus-4-8[1m]"
        " · 3 turns\n"
    ) in text
    assert text.endswith("verdict: passed · 2 of 2 checks passed\n")


def test_the_system_prompt_shows_its_size_and_first_lines_unless_full() -> None:
    read = conversation.read(sample("codex"))
    last = read.system.splitlines()[-1]
    lines = len(read.system.splitlines())

    cut = transcript.text(read)
    full = transcript.text(read, full=True)

    assert (
        f"system prompt · {len(read.system):,} characters, {lines} lines · 12 tools: exec," in cut
    )
    assert f"  … ({lines - transcript.HEAD_LINES} more lines; --full shows all)\n" in cut
    assert last not in cut
    assert last in full
    assert len(full) > len(read.system) > len(cut)
    # Seven refused upgrades are one line.
    assert "  #0–#6 GET /responses → 501 (7×): protocol upgrade refused\n" in cut


def test_a_long_tool_result_is_cut_unless_full(tmp_path: Path) -> None:
    lines = entries("claude")
    long = "\n".join(f"line {i}" for i in range(100))
    body = json.loads(lines[5]["request"]["body"])
    body["messages"][-1]["content"][-1]["content"] = long
    lines[5]["request"]["body"] = json.dumps(body)
    read = conversation.read(write(tmp_path / "exchange.jsonl", lines))

    cut = transcript.text(read)
    full = transcript.text(read, full=True)

    assert "    line 19\n    … (80 more lines; --full shows all)\n" in cut
    assert "line 20" not in cut
    assert "    line 99\n" in full


def anthropic_error(status: int, message: str) -> dict[str, Any]:
    return {
        "status": status,
        "reason": "Too Many Requests",
        "headers": [["content-type", "application/json"]],
        "body": json.dumps(
            {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
        ),
    }


def test_errors_are_shown_where_they_happened(tmp_path: Path) -> None:
    lines = entries("claude")
    # The second turn was refused (429), the third's stream was cut.
    lines[4]["response"] = anthropic_error(429, "slow down")
    cut = lines[5]["response"]["body"].split("event: message_delta")[0]
    lines[5]["response"]["body"] = cut
    lines[5]["error"] = "the stream was cut: connection reset"

    read = conversation.read(write(tmp_path / "exchange.jsonl", lines))
    text = transcript.text(read)

    assert read.turns[1].errors == ("HTTP 429 Too Many Requests: slow down",)
    assert read.turns[2].errors == (
        "the stream ended before message_stop",
        "the stream was cut: connection reset",
    )
    assert (
        "turn 2 · request #3 · claude-opus-4-8 · tokens not said\n"
        "  ! HTTP 429 Too Many Requests: slow down\n"
    ) in text
    assert "  ! the stream was cut: connection reset\n  done: made.txt has 1 line\n" in text
    # The first turn's results are in the refused request: still found.
    assert read.turns[0].calls[0].result == "(Bash completed with no output)"


def test_a_truncated_recording_says_so(tmp_path: Path) -> None:
    lines = entries("claude")
    lines[0]["truncated"] = True
    size = len(lines[5]["response"].pop("body"))
    lines[5]["response"]["body_omitted"] = size

    text = transcript.text(conversation.read(write(tmp_path / "exchange.jsonl", lines)))

    assert "note: the recording is truncated: it reached its size limit" in text
    assert f"  ! response body not stored ({size:,} bytes)\n" in text


def test_a_recording_of_no_known_api_is_listed_as_stored(tmp_path: Path) -> None:
    header = {**entries("claude")[0], "agent": "mine", "exchanges": 1}
    exchange = {
        "seq": 0,
        "request": {
            "method": "POST",
            "path": "/v1/chat/completions",
            "headers": [],
            "body": '{"messages": [{"role": "user", "content": "hello"}]}',
        },
        "response": {
            "status": 200,
            "reason": "OK",
            "headers": [],
            "body": '{"choices": [{"message": {"content": "hi there"}}]}',
        },
    }

    read = conversation.read(write(tmp_path / "exchange.jsonl", [header, exchange]))
    text = transcript.text(read)

    assert read.dialect == "other"
    assert "#0 POST /v1/chat/completions → 200 OK\n  request\n" in text
    assert '        "content": "hello"\n' in text
    assert '  response\n    {"choices": [{"message": {"content": "hi there"}}]}\n' in text


def test_a_side_question_on_the_whole_conversation_is_not_a_turn(tmp_path: Path) -> None:
    # Gemini CLI asks whether it should speak next with the conversation so far and a
    # JSON schema; Claude Code checks its quota with a one-token request.
    lines = entries("gemini")
    side = json.loads(json.dumps(lines[3]))
    body = json.loads(side["request"]["body"])
    body["generationConfig"]["responseJsonSchema"] = {"properties": {"next_speaker": {}}}
    side["request"]["body"] = json.dumps(body)
    quota = json.loads(json.dumps(entries("claude")[3]))
    quota["request"]["body"] = json.dumps(
        {
            "model": "claude-haiku",
            "max_tokens": 1,
            "messages": [{"role": "user", "content": "quota"}],
        }
    )
    lines = [*lines[:4], side, *lines[4:]]
    for seq, line in enumerate(lines[1:]):
        line["seq"] = seq

    read = conversation.read(write(tmp_path / "exchange.jsonl", lines))
    claude_lines = entries("claude")
    claude_lines.insert(2, quota)
    for seq, line in enumerate(claude_lines[1:]):
        line["seq"] = seq
    claude = conversation.read(write(tmp_path / "claude.jsonl", claude_lines))

    assert len(read.turns) == 3
    assert [o.kind for o in read.others] == [
        "structured answer: complexity_reasoning, complexity_score",
        "structured answer: next_speaker",
    ]
    assert read.turns[1].calls[0].result is not None
    assert len(claude.turns) == 3
    assert [o.kind for o in claude.others] == ["", "quota check", "structured answer: title"]


def test_a_conversations_follow_up_shows_where_its_turn_begins(tmp_path: Path) -> None:
    lines = entries("claude")
    main = [i for i, line in enumerate(lines[1:], 1) if "tools" in line["request"].get("body", "")]
    # The last request of the conversation is turn 2's first, after a follow-up prompt.
    last = lines[main[-1]]
    body = json.loads(last["request"]["body"])
    body["messages"].append({"role": "user", "content": "The test is right. MARK-follow-up"})
    last["request"]["body"] = json.dumps(body)
    last["turn"] = 2

    read = conversation.read(write(tmp_path / "exchange.jsonl", lines))
    printed = transcript.lines(read)

    assert [t.prompt_turn for t in read.turns] == [1] * (len(read.turns) - 1) + [2]
    begins = printed.index("follow-up (turn 2)")
    assert printed[begins + 1].strip() == "The test is right. MARK-follow-up"
    assert printed[begins + 3].startswith(f"turn {len(read.turns)} · ")
