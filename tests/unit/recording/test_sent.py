"""What a run's CLI sent its model, as the request checks read it (docs/case-format.md,
"What a request check reads"): the model requests of a channel's or a stored recording's
exchanges, the CLIs' side questions, refused requests and other traffic left out; read
from the real recordings of the three CLIs (``tests/recordings``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_evalcases.recording import format
from pytest_evalcases.recording.format import Exchange, Message
from pytest_evalcases.recording.sent import model_requests, stored_requests

SAMPLES = Path(__file__).parents[2] / "recordings"


@pytest.mark.parametrize(
    ("sample", "shell"),
    [
        ("claude.exchange.jsonl", r"^tool call Bash \{\"command\": \"wc -l made\.txt\""),
        (
            "codex.exchange.jsonl.gz",
            r"^tool call exec .*exec_command\(\{cmd: \"wc -l made\.txt\"\}",
        ),
        (
            "gemini.exchange.jsonl",
            r"^tool call run_shell_command \{\"command\": \"wc -l made\.txt\"\}",
        ),
    ],
)
def test_the_conversation_requests_of_each_real_cli_are_read_in_order(
    sample: str, shell: str
) -> None:
    requests = model_requests(format.read(SAMPLES / sample).exchanges)

    # Claude Code's HEAD and session title, Codex's refused WebSocket upgrades and Gemini
    # CLI's routing question are not counted: request 1 is the conversation's first.
    assert len(requests) == 3
    first, last = requests[0], requests[-1]
    assert [part.name for part in first.parts][:2] == ["system prompt", "tools"]
    assert re.search(r"^Write made\.txt, then count the lines of made\.txt$", first.text, re.M)
    assert not re.search(shell, first.text, re.M)
    assert re.search(shell, last.text, re.M)
    assert "1 made.txt" in last.text


def exchange(status: int, body: object, path: str = "/v1/messages") -> Exchange:
    request = Message((), json.dumps(body).encode())
    return Exchange("POST", path, request, status, "", Message((), b""))


BODY = {"system": "rules", "messages": [{"role": "user", "content": "hi"}]}


def test_a_refused_or_unanswered_request_is_not_counted_and_an_omitted_body_says_why() -> None:
    found = model_requests(
        [
            exchange(429, BODY),
            exchange(0, BODY),
            exchange(200, {**BODY, "max_tokens": 1}),
            exchange(200, BODY, path="/v1/messages/count_tokens"),
            exchange(200, BODY),
            Exchange(
                "POST", "/v1/messages", Message((), b"", omitted=123456), 200, "", Message((), b"")
            ),
        ]
    )

    assert [r.text for r in found] == ["rules\nhi", ""]
    assert found[1].unreadable == (
        "its body was left out of the recording (123,456 bytes past the recording's size limit)"
    )


def test_a_run_stored_without_its_traffic_says_so(tmp_path: Path) -> None:
    assert stored_requests(tmp_path) == f"{tmp_path} holds no recording of the run's model traffic"
    (tmp_path / format.EXCHANGE).write_text("not json\n")
    assert "not a JSON object" in str(stored_requests(tmp_path))
