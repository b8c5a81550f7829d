"""The proxy answering from a recording (docs/replay.md, "Replay", "Reuse"): real sockets,
the scripted Messages API of :mod:`tests.helpers.model_server` as the upstream."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from pytest_evalcases.recording import format as recording
from pytest_evalcases.recording.channel import Channel
from pytest_evalcases.recording.format import Exchange, Message
from pytest_evalcases.recording.normalise import Places
from pytest_evalcases.recording.proxy import Proxy
from pytest_evalcases.recording.replay import Recording, Replay
from pytest_evalcases.redact import Redactor
from tests.helpers.model_server import ModelServer, Reply, Request, model_server


def answers(request: Request) -> Reply:
    return Reply(text="live answer to " + request.body["messages"][-1]["content"])


@pytest.fixture
def api() -> Iterator[ModelServer]:
    with model_server("anthropic", answers) as server:
        yield server


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    proxy = Proxy()
    yield proxy
    proxy.close()


def body(prompt: str, workspace: str = "/tmp/then") -> str:
    return json.dumps(
        {
            "model": "m",
            "system": f"CWD: {workspace}",
            "metadata": {"user_id": f"session of {workspace}"},
            "messages": [{"role": "user", "content": prompt}],
        }
    )


def recorded(*prompts: str) -> Recording:
    """A recording of one request per prompt, each answered ``recorded answer N``."""
    exchanges = tuple(
        Exchange(
            "POST",
            "/v1/messages",
            Message((), body(prompt).encode()),
            200,
            "OK",
            Message(
                (("content-type", "text/event-stream"), ("transfer-encoding", "chunked")),
                f"data: recorded answer {seq}\n\n".encode(),
            ),
            seq=seq,
        )
        for seq, prompt in enumerate(prompts)
    )
    return Recording(Path("exchange.jsonl"), exchanges, Places("/tmp/then"))


def post(channel: Channel, prompt: str) -> tuple[int, bytes]:
    target = urlsplit(channel.url)
    conn = http.client.HTTPConnection(target.netloc, timeout=20)
    data = body(prompt, "/tmp/now").encode()
    conn.request("POST", target.path + "/v1/messages", body=data, headers={"x-api-key": "k"})
    response = conn.getresponse()
    return response.status, response.read()


def open_channel(proxy: Proxy, api: ModelServer, *prompts: str, reuse: bool = False) -> Channel:
    replay = Replay(recorded(*prompts), Places("/tmp/now"), str)
    return proxy.open(api.url, replay=replay, reuse=reuse)


def sources(channel: Channel) -> list[str]:
    lines = recording.serialise(channel.recorded(), {}, Redactor({}), 10**6)
    return [json.loads(line)["source"] for line in lines[1:]]


def test_matching_requests_are_answered_from_the_recording_alone(
    api: ModelServer, proxy: Proxy
) -> None:
    channel = open_channel(proxy, api, "one", "two")

    assert post(channel, "two") == (200, b"data: recorded answer 1\n\n")
    assert post(channel, "one") == (200, b"data: recorded answer 0\n\n")

    assert api.requests == []
    assert channel.diverged is None
    assert sources(channel) == ["replay", "replay"]


def test_under_replay_the_first_difference_is_refused_and_so_is_all_after_it(
    api: ModelServer, proxy: Proxy
) -> None:
    channel = open_channel(proxy, api, "one", "two")

    status, data = post(channel, "other")
    assert status == 400
    error = json.loads(data)["error"]
    assert error["type"] == "invalid_request_error"
    assert error["message"].startswith("replay diverged at turn 1: message 1 differs")
    assert '- "content": "one",' in error["message"]
    assert '+ "content": "other",' in error["message"]
    assert channel.diverged is not None
    assert post(channel, "one")[0] == 400

    assert api.requests == []
    assert sources(channel) == ["replay", "replay"]


def test_under_reuse_the_first_difference_and_all_after_it_go_live(
    api: ModelServer, proxy: Proxy
) -> None:
    channel = open_channel(proxy, api, "one", "two", reuse=True)

    assert post(channel, "one") == (200, b"data: recorded answer 0\n\n")
    status, live = post(channel, "other")
    assert status == 200
    assert b"live answer to other" in live
    # After the divergence even a request the recording has goes to the API.
    assert b"live answer to two" in post(channel, "two")[1]

    assert [r.body["messages"][0]["content"] for r in api.requests] == ["other", "two"]
    assert api.requests[0].headers.get("x-api-key") == "k"
    assert channel.diverged is not None
    assert channel.diverged.turn == 1
    assert sources(channel) == ["replay", "live", "live"]


def test_a_channel_that_only_records_marks_no_source(api: ModelServer, proxy: Proxy) -> None:
    channel = proxy.open(api.url)
    post(channel, "one")
    lines = recording.serialise(channel.recorded(), {}, Redactor({}), 10**6)
    assert "source" not in json.loads(lines[1])


def test_in_a_conversation_a_divergence_names_the_turn_and_its_request(
    api: ModelServer, proxy: Proxy
) -> None:
    channel = open_channel(proxy, api, "one", "two", "three")
    channel.begin_turn(1)
    assert post(channel, "one")[0] == 200
    channel.begin_turn(2)
    assert post(channel, "two")[0] == 200

    status, data = post(channel, "other")

    assert status == 400
    said = json.loads(data)["error"]["message"]
    assert said.startswith("replay diverged at turn 2 of the conversation, request 2: ")
    assert [e.turn for e in channel.recorded()] == [1, 2, 2]
