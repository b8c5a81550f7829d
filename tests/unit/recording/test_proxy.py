"""The recording proxy (docs/replay.md, "Recording"): real sockets, a scripted upstream on
127.0.0.1, real files."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.recording import format as recording
from pytest_evalcases.recording.format import RecordPlace
from pytest_evalcases.recording.proxy import Proxy, http_proxy
from pytest_evalcases.recording.recorder import Recorder
from pytest_evalcases.redact import Redactor

#: Seconds any read of these tests waits at most: a proxy that held a stream back fails
#: the test with a timeout instead of hanging it.
BOUND = 20


@dataclass
class Upstream:
    """A scripted API: records what it was sent; ``/stream`` sends one SSE event, waits
    until ``go`` is set, then sends the rest."""

    url: str = ""
    seen: list[tuple[str, str, dict[str, str], bytes]] = field(default_factory=list)
    go: threading.Event = field(default_factory=threading.Event)


@contextmanager
def upstream_api() -> Iterator[Upstream]:
    api = Upstream()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            self.do_POST()

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            api.seen.append((self.command, self.path, dict(self.headers), body))
            if self.path.endswith("/stream"):
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                self._chunk(b'event: first\ndata: {"n": 1}\n\n')
                api.go.wait(BOUND)
                self._chunk(b'event: second\ndata: {"n": 2}\n\n')
                self._chunk(b"")
                return
            data = json.dumps({"echo": body.decode(), "path": self.path}).encode()
            self.send_response(201)
            self.send_header("content-type", "application/json")
            self.send_header("set-cookie", "session=Yh3kQ8wL5nB2")
            self.send_header("x-request-id", "req_1")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    api.url = f"http://127.0.0.1:{server.server_address[1]}/base"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield api
    finally:
        api.go.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def api() -> Iterator[Upstream]:
    with upstream_api() as api:
        yield api


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    proxy = Proxy()
    yield proxy
    proxy.close()


def post(
    url: str, path: str, body: bytes, headers: dict[str, str] | None = None, method: str = "POST"
) -> tuple[http.client.HTTPResponse, bytes]:
    """Send one request to ``url`` + ``path``; the response and its whole body."""
    target = http.client.urlsplit(url)  # type: ignore[attr-defined]
    conn = http.client.HTTPConnection(target.netloc, timeout=BOUND)
    conn.request(method, target.path + path, body=body, headers=headers or {})
    response = conn.getresponse()
    return response, response.read()


def test_a_request_is_forwarded_below_the_upstreams_path_and_answered(
    api: Upstream, proxy: Proxy
) -> None:
    channel = proxy.open(api.url)

    response, body = post(
        channel.url, "/v1/messages?beta=true", b'{"q": 1}', {"content-type": "application/json"}
    )

    assert response.status == 201
    assert json.loads(body) == {"echo": '{"q": 1}', "path": "/base/v1/messages?beta=true"}
    assert response.getheader("x-request-id") == "req_1"
    method, path, headers, sent = api.seen[0]
    assert (method, path, sent) == ("POST", "/base/v1/messages?beta=true", b'{"q": 1}')
    assert headers["Host"] == api.url.split("/")[2]
    # The API answers uncompressed, so that the recording stays readable.
    assert headers["Accept-Encoding"] == "identity"
    [exchange] = channel.recorded()
    assert (exchange.method, exchange.path, exchange.status) == (
        "POST",
        "/v1/messages?beta=true",
        201,
    )
    assert exchange.response.body == body


def test_a_streamed_response_reaches_the_cli_event_by_event(api: Upstream, proxy: Proxy) -> None:
    channel = proxy.open(api.url)
    target = http.client.urlsplit(channel.url)  # type: ignore[attr-defined]
    conn = http.client.HTTPConnection(target.netloc, timeout=BOUND)
    conn.request("POST", target.path + "/stream", body=b"{}")
    response = conn.getresponse()

    # The upstream holds the rest back until the first event reached the client: a
    # proxy that waited for the whole response would time out here.
    first = response.read1(1024)
    assert b"event: first" in first
    assert b"second" not in first
    api.go.set()
    rest = response.read()

    assert b"event: second" in rest
    [exchange] = channel.recorded()
    assert exchange.response.body == first + rest
    assert exchange.error == ""


def test_credentials_are_never_stored_and_secrets_are_redacted(
    api: Upstream, proxy: Proxy, tmp_path: Path
) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-Zq7xK2pW9mR4", "MY_SERVICE_TOKEN": "Vd8nR3tK6yQ1"}
    recorder = Recorder(RecordPlace(tmp_path, tmp_path / "s.runs"), Redactor(env))
    with recorder.channel(api.url, {}) as channel:
        response, _ = post(
            channel.url,
            "/v1/models/x:generate?key=Pw2mX9cV4bN7&alt=sse",
            json.dumps({"text": "the env says Vd8nR3tK6yQ1 and sk-ant-Zq7xK2pW9mR4"}).encode(),
            {
                "x-api-key": "sk-ant-Zq7xK2pW9mR4",
                "Authorization": "Bearer Lm5tG8hJ2kR9",
                "Cookie": "session=Yh3kQ8wL5nB2",
                "x-goog-api-key": "Pw2mX9cV4bN7",
                "x-custom-auth-thing": "Qe7rT2yU5iO8",
                "anthropic-version": "2023-06-01",
            },
        )
        assert response.status == 201
        # The API saw the credentials: only the recording goes without.
        assert api.seen[0][2]["x-api-key"] == "sk-ant-Zq7xK2pW9mR4"
        relative = recorder.store(channel, "case.v.r0", {"case": "case"})
    recorder.close()

    assert relative == "s.runs/case.v.r0"
    stored = (tmp_path / relative / recording.EXCHANGE).read_text()
    for secret in (
        "Zq7xK2pW9mR4",
        "Lm5tG8hJ2kR9",
        "Yh3kQ8wL5nB2",
        "Pw2mX9cV4bN7",
        "Qe7rT2yU5iO8",
        "Vd8nR3tK6yQ1",
    ):
        assert secret not in stored
    found = recording.read(tmp_path / relative / recording.EXCHANGE)
    header, (entry,) = found.header, found.exchanges
    assert header["version"] == recording.FORMAT_VERSION
    assert header["exchanges"] == 1
    names = [name for name, _ in entry.request.headers]
    assert "anthropic-version" in names
    assert not {"x-api-key", "authorization", "cookie", "x-goog-api-key"} & set(names)
    assert "set-cookie" not in [name for name, _ in entry.response.headers]
    assert entry.path == "/v1/models/x:generate?key=&alt=sse"
    assert "[REDACTED]" in (entry.request.text or "")
    assert entry.status == 201


def test_two_runs_at_once_are_kept_apart(api: Upstream, proxy: Proxy) -> None:
    channels = [proxy.open(api.url), proxy.open(api.url)]
    streams = []
    for n, channel in enumerate(channels):
        target = http.client.urlsplit(channel.url)  # type: ignore[attr-defined]
        conn = http.client.HTTPConnection(target.netloc, timeout=BOUND)
        conn.request("POST", target.path + "/stream", body=f'{{"run": {n}}}'.encode())
        streams.append(conn.getresponse())
    # Both streams are open at once, each waiting for the rest.
    assert all(b"first" in s.read1(1024) for s in streams)
    for n, channel in enumerate(channels):
        post(channel.url, f"/only-{n}", b"")
    api.go.set()
    for stream in streams:
        stream.read()

    for n, channel in enumerate(channels):
        recorded = sorted(e.path for e in channel.recorded())
        assert recorded == [f"/only-{n}", "/stream"]
        assert [e.request.body for e in channel.recorded() if e.path == "/stream"] == [
            f'{{"run": {n}}}'.encode()
        ]


def test_a_path_of_no_open_run_is_refused(api: Upstream, proxy: Proxy) -> None:
    channel = proxy.open(api.url)
    proxy.release(channel)

    response, body = post(channel.url, "/v1/messages", b"{}")

    assert response.status == 404
    assert b"no run is recorded" in body
    assert api.seen == []


def test_an_unreachable_api_is_a_502_and_is_recorded(proxy: Proxy) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    channel = proxy.open(f"http://127.0.0.1:{port}")

    response, body = post(channel.url, "/v1/messages", b"{}")

    assert response.status == 502
    assert b"could not reach" in body
    [exchange] = channel.recorded()
    assert exchange.status == 502
    assert "the API could not be reached: [Errno 111] Connection refused" in exchange.error


def test_the_proxy_stops_and_frees_its_port() -> None:
    proxy = Proxy()
    port = proxy.port
    with socket.create_connection(("127.0.0.1", port), timeout=BOUND):
        pass

    proxy.close()

    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    # No socket of this process listens on the port any more. (Binding it again would say
    # the same, but under xdist another worker's connection may take the freed port; the
    # connection above may still be closing in a handler thread.)
    assert own_listeners_on(port) == []


#: The state of a listening socket in /proc/net/tcp.
LISTEN = "0A"


def own_listeners_on(port: int) -> list[str]:
    """The TCP sockets of this process listening on ``port``, as lines of
    /proc/net/tcp."""
    inodes = set()
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            inodes.add(os.readlink(fd))
    found = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local_port = int(fields[1].rsplit(":", 1)[1], 16)
        ours = f"socket:[{fields[9]}]" in inodes
        if local_port == port and fields[3] == LISTEN and ours:
            found.append(line.strip())
    return found


def test_the_recorder_starts_its_proxy_at_the_first_run_only(api: Upstream, tmp_path: Path) -> None:
    recorder = Recorder(RecordPlace(tmp_path, tmp_path / "s.runs"), Redactor({}))
    assert not recorder.started
    with recorder.channel(api.url, {}) as channel:
        assert recorder.started
        post(channel.url, "/x", b"")
    recorder.close()
    assert not recorder.started


def test_a_large_recording_is_compressed_and_a_huge_one_bounded(
    api: Upstream, proxy: Proxy, tmp_path: Path
) -> None:
    place = RecordPlace(tmp_path, tmp_path / "s.runs")
    recorder = Recorder(place, Redactor({}), max_bytes=30_000, gzip_above=1_000)
    with recorder.channel(api.url, {}) as channel:
        for n in range(3):
            post(channel.url, f"/turn-{n}", b"x" * 6_000)
        relative = recorder.store(channel, "big", {})
    recorder.close()

    assert relative == "s.runs/big"
    exchange = recording.exchange_file(tmp_path / relative)
    assert exchange is not None
    assert exchange.name == "exchange.jsonl.gz"
    found = recording.read(exchange)
    assert found.header["truncated"] is True
    # Each exchange is about 12 kB of bodies: two fit within the limit.
    assert [e.request.omitted for e in found.exchanges] == [None, None, 6_000]
    assert not (place.directory / "big" / "exchange.jsonl").exists()


def test_a_run_that_ends_mid_stream_keeps_what_arrived(api: Upstream, proxy: Proxy) -> None:
    channel = proxy.open(api.url)
    target = http.client.urlsplit(channel.url)  # type: ignore[attr-defined]
    conn = http.client.HTTPConnection(target.netloc, timeout=BOUND)
    conn.request("POST", target.path + "/stream", body=b"{}")
    response = conn.getresponse()
    assert b"event: first" in response.read1(1024)

    # The run ends (its CLI was stopped) while the API still streams.
    [cut] = channel.recorded(wait=0)

    assert cut.status == 200
    assert cut.response.body.startswith(b"event: first")
    assert cut.error == "the run ended before the response did"
    api.go.set()
    response.read()
    [whole] = channel.recorded()
    assert b"event: second" in whole.response.body
    assert whole.error == ""


def test_exchanges_are_in_the_order_the_requests_were_sent(api: Upstream, proxy: Proxy) -> None:
    channel = proxy.open(api.url)
    target = http.client.urlsplit(channel.url)  # type: ignore[attr-defined]
    conn = http.client.HTTPConnection(target.netloc, timeout=BOUND)
    conn.request("POST", target.path + "/stream", body=b"{}")
    streaming = conn.getresponse()
    streaming.read1(1024)
    # A second request sent while the first streams is answered first.
    post(channel.url, "/quick", b"")
    api.go.set()
    streaming.read()

    assert [e.path for e in channel.recorded()] == ["/stream", "/quick"]


def test_a_recording_gets_the_permissions_the_umask_allows(api: Upstream, tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        recorder = Recorder(RecordPlace(tmp_path, tmp_path / "s.runs"), Redactor({}))
    finally:
        os.umask(old)
    with recorder.channel(api.url, {}) as channel:
        post(channel.url, "/x", b"")
        relative = recorder.store(channel, "run", {})
    recorder.close()

    assert stat.S_IMODE((tmp_path / relative / recording.EXCHANGE).stat().st_mode) == 0o644


@contextmanager
def connect_proxy() -> Iterator[tuple[str, list[str]]]:
    """An HTTP proxy that only tunnels (``CONNECT``): its ``host:port``, and the targets
    it was asked for."""
    asked: list[str] = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = server.accept()
                head = b""
                while b"\r\n\r\n" not in head:
                    head += client.recv(1)
                target = head.split()[1].decode()
                asked.append(target)
                host, port = target.rsplit(":", 1)
                far = socket.create_connection((host, int(port)), timeout=BOUND)
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                threading.Thread(target=pipe, args=(client, far), daemon=True).start()
                threading.Thread(target=pipe, args=(far, client), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}", asked
    finally:
        server.close()


def test_requests_go_through_the_http_proxy_the_environment_names(
    api: Upstream, proxy: Proxy
) -> None:
    with connect_proxy() as (via, asked):
        channel = proxy.open(api.url, via)

        response, body = post(channel.url, "/v1/messages", b'{"q": 2}')

    assert response.status == 201
    assert json.loads(body)["path"] == "/base/v1/messages"
    assert asked == [api.url.split("/")[2]]


@pytest.mark.parametrize(
    ("upstream", "env", "via"),
    [
        ("https://api.anthropic.com", {}, None),
        ("https://api.anthropic.com", {"HTTPS_PROXY": "http://proxy.corp:3128"}, "proxy.corp:3128"),
        (
            "https://api.anthropic.com",
            {"https_proxy": "http://u:p@proxy.corp:3128"},
            "proxy.corp:3128",
        ),
        ("https://api.anthropic.com", {"HTTPS_PROXY": "proxy.corp:3128"}, "proxy.corp:3128"),
        ("http://gateway.corp/v1", {"HTTP_PROXY": "http://proxy.corp:80"}, "proxy.corp:80"),
        ("https://api.anthropic.com", {"HTTPS_PROXY": "p:1", "NO_PROXY": ".anthropic.com"}, None),
        ("https://api.anthropic.com", {"HTTPS_PROXY": "p:1", "no_proxy": "x.org,*"}, None),
        ("http://127.0.0.1:8080", {"HTTP_PROXY": "http://proxy.corp:80"}, None),
    ],
)
def test_the_http_proxy_of_the_environment(
    upstream: str, env: dict[str, str], via: str | None
) -> None:
    assert http_proxy(upstream, env) == via


@pytest.mark.parametrize(
    ("below", "upstream_path"),
    [("", "/base/"), ("?alt=sse", "/base/?alt=sse"), ("/v1?x=1", "/base/v1?x=1")],
)
def test_the_path_below_the_prefix_is_the_upstreams(
    api: Upstream, proxy: Proxy, below: str, upstream_path: str
) -> None:
    channel = proxy.open(api.url)

    response, body = post(channel.url, below, b"")

    assert response.status == 201
    assert json.loads(body)["path"] == upstream_path


def test_a_path_outside_any_run_is_refused(api: Upstream, proxy: Proxy) -> None:
    channel = proxy.open(api.url)
    root = channel.url.rsplit("/r/", 1)[0]

    for path in ("/v1/messages", f"/r/{channel.token}x/v1", "/r/"):
        response, _ = post(root, path, b"{}")
        assert response.status == 404, path
    assert api.seen == []
