"""Failing fast (docs/agents.md, "Failing fast"): the recording proxy's view of upstream
failures, on real sockets against a scripted API on 127.0.0.1, and the runs that are not
started after one."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from pytest_evalcases.agents.base import AgentSettings
from pytest_evalcases.agents.claude import ClaudeAgent
from pytest_evalcases.agents.command import CommandAgent
from pytest_evalcases.errors import RunError
from pytest_evalcases.recording.channel import Failure
from pytest_evalcases.recording.proxy import Proxy
from pytest_evalcases.run.failfast import Stops, Unreachable, identity
from tests.helpers.model_server import Reply, model_server
from tests.unit.recording.test_proxy import BOUND, post

KEY = "sk-ant-Zq7xK2pW9mR4"


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    proxy = Proxy()
    yield proxy
    proxy.close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_credential_fails_the_channel_in_the_apis_words(
    proxy: Proxy, status: int
) -> None:
    heard: list[Failure] = []
    # The API echoes the key, as a careless gateway might: it is never quoted.
    said = f"invalid x-api-key {KEY}"
    with model_server("anthropic", lambda r: Reply(status=status, error=said)) as api:
        channel = proxy.open(api.url)
        channel.on_failure(heard.append)

        response, body = post(channel.url, "/v1/messages", b"{}", {"x-api-key": KEY})
        # Once the proxy is done with the request.
        channel.recorded()

    # The CLI still gets the API's answer; the run is ended by the runner.
    assert response.status == status
    assert b"invalid x-api-key" in body
    assert heard == [channel.failure]
    assert channel.failure is not None
    assert channel.failure.kind == "authentication"
    reason = "Unauthorized" if status == 401 else "Forbidden"
    assert f"refused the run's credentials: {status} {reason}: " in channel.failure.message
    assert channel.failure.message.endswith(": invalid x-api-key [credential]")
    assert KEY not in channel.failure.message


def test_an_unreachable_api_fails_the_channel_quoting_the_refusal(proxy: Proxy) -> None:
    port = closed_port()
    channel = proxy.open(f"http://127.0.0.1:{port}")

    response, _ = post(channel.url, "/v1/messages", b"{}")
    channel.recorded()

    assert response.status == 502
    assert channel.failure == Failure(
        "server",
        f"the model API at http://127.0.0.1:{port} could not be reached: "
        "[Errno 111] Connection refused",
    )
    # A listener that comes late hears the failure at once.
    heard: list[Failure] = []
    channel.on_failure(heard.append)
    assert heard == [channel.failure]


def test_an_unknown_host_is_unreachable(proxy: Proxy) -> None:
    channel = proxy.open("http://no-such-host.invalid")

    post(channel.url, "/v1/messages", b"{}")
    channel.recorded()

    assert channel.failure is not None
    assert channel.failure.kind == "server"
    assert "no-such-host.invalid could not be reached" in channel.failure.message


def test_an_apis_own_errors_do_not_fail_the_channel_and_are_its_last_error(
    proxy: Proxy,
) -> None:
    replies = iter([Reply(status=500, error="first"), Reply(status=529, error="Overloaded")])
    with model_server("anthropic", lambda r: next(replies)) as api:
        channel = proxy.open(api.url)
        assert channel.last_error() == ""

        post(channel.url, "/v1/messages", b"{}")
        post(channel.url, "/v1/messages", b"{}")
        channel.recorded()

    assert channel.failure is None
    assert channel.last_error().endswith(": Overloaded")
    assert channel.last_error() == "529: Overloaded"


def test_a_connection_that_breaks_off_leaves_no_traceback_in_stderr(
    proxy: Proxy, capfd: pytest.CaptureFixture[str]
) -> None:
    channel = proxy.open(f"http://127.0.0.1:{closed_port()}")
    path = channel.url.split("/", 3)[3]
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=BOUND) as s:
        s.sendall(f"POST /{path}/v1/messages HTTP/1.1\r\nContent-Length: 100\r\n\r\n{{".encode())
        # Closed with a reset, as a killed CLI's connection may be, mid-body.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    assert proxy._server.wait_dropped(1, BOUND)
    assert "ConnectionResetError" in proxy._server.dropped[0]
    assert "Traceback" not in capfd.readouterr().err


def test_a_stop_is_kept_for_its_identity_only() -> None:
    stops = Stops()
    stops.record("a", RunError("the API said no\nmore", kind="authentication"))
    stops.record("b", RunError("slow", kind="timeout"))
    stops.record("b", RunError("HTTP 500", kind="server"))
    stops.record("c", Unreachable("connection refused"))

    with pytest.raises(RunError) as stopped:
        stops.check("a", "claude")
    assert stopped.value.kind == "authentication"
    assert str(stopped.value) == (
        "not started: an earlier run of agent 'claude' with the same credentials ended in "
        "an authentication error: the API said no"
    )
    stops.check("b", "claude")
    with pytest.raises(RunError, match="ended in a server error: connection refused") as down:
        stops.check("c", "claude")
    assert down.value.kind == "server"


def test_the_stops_are_shared_by_threads() -> None:
    stops = Stops()
    threads = [
        threading.Thread(target=stops.record, args=("k", RunError(str(i), kind="authentication")))
        for i in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    with pytest.raises(RunError, match=r"error: \d$"):
        stops.check("k", "claude")


def test_the_identity_tells_credentials_apart_and_holds_no_key() -> None:
    agent = ClaudeAgent(AgentSettings("claude"))
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "http://gateway.example"}

    key = identity(agent, env)

    assert KEY not in key
    assert key.startswith("claude http://gateway.example ")
    assert identity(agent, dict(env)) == key
    assert identity(agent, {**env, "ANTHROPIC_API_KEY": KEY + "x"}) != key
    assert identity(agent, {**env, "ANTHROPIC_AUTH_TOKEN": "tok"}) != key
    assert identity(agent, {**env, "ANTHROPIC_BASE_URL": "http://other"}) != key


def test_a_command_of_the_users_own_has_no_identity() -> None:
    # Its credentials are unknown: one run's authentication error stops no other.
    agent = CommandAgent(AgentSettings("command", command="my-agent {prompt}"))

    assert identity(agent, {"ANTHROPIC_API_KEY": KEY}) is None
