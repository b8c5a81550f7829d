"""The recording proxy: forwards a run's model traffic and writes down what crossed it
(docs/replay.md, "Recording").

One :class:`Proxy` serves a pytest process (each xdist worker has its own), on 127.0.0.1
and a free port. Each run gets a path of its own below it (``/r/<token>/``, a
:class:`Channel`), so that runs at the same time (``--eval-concurrency``) are kept apart.
A request is forwarded to the channel's API below the API's own path, and the response
streamed back chunk by chunk as it arrives. What is stored of it, and where, is
:mod:`pytest_evalcases.recording.format`'s.

A channel given a recording (a :class:`~pytest_evalcases.recording.replay.Replay`) answers
from it instead (docs/replay.md, "Replay", "Reuse"): a request that matches a recorded one
gets the recorded response and never reaches the API. One that does not ends the replay:
refused with a ``400`` the CLI does not retry (``--eval-replay``), or forwarded, with all
after it, as a live run's (``--eval-reuse``). A channel given a case's script (a
:class:`~pytest_evalcases.recording.script.Script`) answers every request from it and
forwards none (docs/config-contract.md, "The scripted model").

An upstream that refuses the run's credentials (``401``, ``403``) or cannot be reached
(connection refused, DNS, TLS) is a :class:`Failure` of the channel, which the runner
hears at once (:meth:`Channel.on_failure`) and ends the run with, instead of waiting
for the CLI's own retries or its timeout (docs/agents.md, "Failing fast").

Standard library only: :class:`http.server.ThreadingHTTPServer` to the CLI,
:mod:`http.client` to the API.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import secrets
import sys
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from pytest_evalcases import defaults
from pytest_evalcases.recording.channel import Channel, Failure, Slot, quoted, status_line
from pytest_evalcases.recording.format import Exchange, Message
from pytest_evalcases.recording.replay import Divergence, Replay
from pytest_evalcases.recording.script import Script

#: Headers of one connection, not of the exchange (RFC 9110, 7.6.1): never forwarded.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
#: A run's prefix on the proxy, ``/r/<token>``, and its token.
_PREFIX = re.compile(r"/r/([0-9a-f]+)(?=[/?]|$)")
#: Bytes read from the API before they are passed on: a streamed event is forwarded as
#: soon as it arrives, never held until the response is complete.
_CHUNK = 64 * 1024
#: Statuses by which the API refuses the credentials: the run ends at once.
REFUSED = frozenset({401, 403})


class Proxy:
    """A forwarding HTTP proxy on 127.0.0.1 and a free port, serving in threads of its
    own until :meth:`close`. Each :meth:`open` gives a run its own :class:`Channel`."""

    def __init__(self, timeout: float = defaults.TIMEOUT) -> None:
        self._channels: dict[str, Channel] = {}
        self._lock = threading.Lock()
        self.timeout = timeout
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        # serve_forever looks for shutdown() every poll interval: its default half second
        # was the wait of every session's end.
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="evalcases-proxy",
            daemon=True,
        )
        self._thread.start()

    def open(
        self,
        upstream: str,
        via: str | None = None,
        *,
        replay: Replay | None = None,
        reuse: bool = False,
        script: Script | None = None,
    ) -> Channel:
        """A new channel to ``upstream`` for one run, through the HTTP proxy ``via``;
        answering from ``replay`` while requests match, or from ``script`` always,
        when given."""
        token = secrets.token_hex(8)
        url = f"http://127.0.0.1:{self.port}/r/{token}"
        channel = Channel(token, upstream.rstrip("/"), url, via, replay, reuse, script)
        with self._lock:
            self._channels[token] = channel
        return channel

    def release(self, channel: Channel) -> None:
        """Forget ``channel``: a request on its path after the run is refused."""
        with self._lock:
            self._channels.pop(channel.token, None)

    def channel(self, token: str) -> Channel | None:
        with self._lock:
            return self._channels.get(token)

    def close(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


class _Server(ThreadingHTTPServer):
    # The port is the kernel's free one; never share it with a stale socket.
    allow_reuse_address = False

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        #: What broke off a connection outside any request's handling (a CLI killed
        #: mid-request): noted here, never printed into the session's captured stderr.
        self.dropped: list[str] = []
        self._dropped = threading.Condition()

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        with self._dropped:
            self.dropped.append(f"{type(error).__name__}: {error}")
            self._dropped.notify_all()

    def wait_dropped(self, count: int, timeout: float) -> bool:
        """Whether ``count`` connections broke off within ``timeout`` seconds."""
        with self._dropped:
            return self._dropped.wait_for(lambda: len(self.dropped) >= count, timeout)


def _handler(proxy: Proxy) -> type[BaseHTTPRequestHandler]:
    class Handler(_Relay):
        owner = proxy

    return Handler


class _Relay(BaseHTTPRequestHandler):
    """Forwards one request of a CLI to its channel's API and streams the answer back."""

    protocol_version = "HTTP/1.1"
    owner: Proxy

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._relay()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def _relay(self) -> None:
        found = _PREFIX.match(self.path)
        channel = self.owner.channel(found.group(1)) if found else None
        if found is None or channel is None:
            # The body is left unread: this connection cannot carry another request.
            self.close_connection = True
            self._refuse(404, "no run is recorded under this path (it ended, or never began)")
            return
        path = self.path[found.end() :]
        if not path.startswith("/"):
            path = "/" + path
        request = Message(tuple(self.headers.items()), self._request_body())
        with channel.request(self.command, path, request) as slot:
            self._record(channel, slot)

    def _record(self, channel: Channel, slot: Slot) -> None:
        if self.headers.get("upgrade"):
            # A WebSocket cannot be recorded as requests and responses: the CLI falls
            # back to HTTPS. 426 (Upgrade Required, for the protocol it asked to leave)
            # is the status Codex falls back on at once; any other it retries five
            # times first, about six seconds of every turn (docs/replay.md, "Recording").
            self._refuse(426, "the recording proxy does not relay protocol upgrades")
            slot.exchange = _failed(slot, 426, "protocol upgrade refused")
            return
        if channel.script is not None:
            self._scripted(channel, slot)
            return
        found = channel.answer(slot)
        if isinstance(found, Divergence):
            self._diverged(slot, found.message)
            return
        if isinstance(found, Exchange):
            self._replay(slot, found)
            return
        if channel.replay is not None or channel.reuse:
            slot.source = "live"
        try:
            self._forward(channel, slot)
        except _Unreachable as exc:
            reason = exc.__cause__ or exc
            where = channel.upstream + (
                f" through the HTTP proxy {channel.via}" if channel.via else ""
            )
            slot.exchange = _failed(slot, 502, f"the API could not be reached: {reason}")
            channel.fail(
                Failure("server", f"the model API at {where} could not be reached: {reason}")
            )
            with contextlib.suppress(OSError):
                self._refuse(502, f"the recording proxy could not reach {channel.upstream}")
        except (OSError, http.client.HTTPException) as exc:
            slot.exchange = _failed(slot, 502, f"the API failed: {exc}")
            with contextlib.suppress(OSError):
                self._refuse(502, f"the recording proxy could not reach {channel.upstream}")

    def _replay(self, slot: Slot, found: Exchange) -> None:
        """Send the recorded response at once, as the API sent it (its framing aside)."""
        headers = tuple(
            (name, value)
            for name, value in found.response.headers
            if name.lower() not in _HOP_BY_HOP and name.lower() != "content-length"
        )
        bodiless = self.command == "HEAD" or found.status in (204, 304) or found.status < 200
        self.send_response_only(found.status, found.reason or None)
        for name, value in headers:
            self.send_header(name, value)
        if not bodiless:
            self.send_header("Content-Length", str(len(found.response.body)))
        self.end_headers()
        if not bodiless:
            self.wfile.write(found.response.body)
        self.wfile.flush()
        slot.exchange = Exchange(
            slot.method,
            slot.path,
            slot.request,
            found.status,
            found.reason,
            Message(headers, found.response.body),
            source="replay",
        )

    def _scripted(self, channel: Channel, slot: Slot) -> None:
        """Answer from the case's script: the request never leaves the machine."""
        written = channel.play(slot.method, slot.path, slot.request.body)
        headers = (("content-type", written.content_type),)
        self.send_response_only(written.status)
        self.send_header("Content-Type", written.content_type)
        self.send_header("Content-Length", str(len(written.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(written.body)
        self.wfile.flush()
        slot.exchange = Exchange(
            slot.method,
            slot.path,
            slot.request,
            written.status,
            "",
            Message(headers, written.body),
            source="scripted",
        )

    def _diverged(self, slot: Slot, message: str) -> None:
        """Refuse a request the recording has no answer to, with a status the CLIs do
        not retry, and close the connection: the run is over (``--eval-replay``)."""
        self.close_connection = True
        data = json.dumps(
            {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": message},
            }
        ).encode()
        self.send_response_only(400, "Bad Request")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        slot.exchange = Exchange(
            slot.method,
            slot.path,
            slot.request,
            400,
            "Bad Request",
            Message((("content-type", "application/json"),), data),
            "replay diverged: refused",
            "replay",
        )

    def _request_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            return _read_chunked(self.rfile)
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _forward(self, channel: Channel, slot: Slot) -> None:
        request = slot.request
        target = urlsplit(channel.upstream)
        connection_type = (
            http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
        )
        if channel.via is None:
            upstream = connection_type(target.netloc, timeout=self.owner.timeout)
        else:
            # The CLI would have gone through the user's proxy: so do its requests now.
            upstream = connection_type(channel.via, timeout=self.owner.timeout)
            upstream.set_tunnel(target.netloc)
        try:
            try:
                upstream.connect()
            except (OSError, http.client.HTTPException) as exc:
                # Refused, no such host, a certificate that does not verify, a proxy
                # that will not tunnel: no retry of the CLI's reaches it either.
                raise _Unreachable() from exc
            # The API answers uncompressed: the stored bytes stay readable and redactable.
            upstream.putrequest(
                self.command, target.path + slot.path, skip_host=True, skip_accept_encoding=True
            )
            upstream.putheader("Host", target.netloc)
            for name, value in request.headers:
                lowered = name.lower()
                if lowered in _HOP_BY_HOP or lowered in ("host", "content-length"):
                    continue
                if lowered == "accept-encoding":
                    continue
                upstream.putheader(name, value)
            upstream.putheader("Accept-Encoding", "identity")
            if request.body or self.command in ("POST", "PUT", "PATCH"):
                upstream.putheader("Content-Length", str(len(request.body)))
            upstream.endheaders(request.body or None)
            response = upstream.getresponse()
            self._stream(slot, response)
        finally:
            upstream.close()
        exchange = slot.exchange
        if exchange is not None and exchange.status in REFUSED:
            words = quoted(exchange.response.body, exchange.request)
            channel.fail(
                Failure(
                    "authentication",
                    f"the model API at {channel.upstream} refused the run's credentials: "
                    f"{status_line(exchange)}: {words}".rstrip(": "),
                )
            )

    def _stream(self, slot: Slot, response: http.client.HTTPResponse) -> None:
        headers = tuple(response.getheaders())
        slot.status, slot.reason, slot.headers = response.status, response.reason, headers
        length = response.getheader("content-length")
        bodiless = self.command == "HEAD" or response.status in (204, 304) or response.status < 200
        chunked = length is None and not bodiless
        self.send_response_only(response.status, response.reason)
        for name, value in headers:
            if name.lower() not in _HOP_BY_HOP:
                self.send_header(name, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        received = slot.received
        error = ""
        try:
            while not bodiless and (chunk := response.read1(_CHUNK)):
                received.append(chunk)
                if chunked:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                else:
                    self.wfile.write(chunk)
                self.wfile.flush()
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        except (OSError, http.client.HTTPException) as exc:
            # The CLI went away (its run was stopped) or the API broke off: what
            # arrived is still recorded.
            error = f"the stream was cut: {exc}"
            self.close_connection = True
        slot.exchange = Exchange(
            method=slot.method,
            path=slot.path,
            request=slot.request,
            status=response.status,
            reason=response.reason,
            response=Message(headers, b"".join(received)),
            error=error,
            source=slot.source,
        )

    def _refuse(self, status: int, message: str) -> None:
        data = json.dumps({"error": {"type": "recording_proxy", "message": message}}).encode()
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def http_proxy(upstream: str, env: Mapping[str, str]) -> str | None:
    """The ``host:port`` of the HTTP proxy that ``env`` names for ``upstream``
    (``HTTPS_PROXY`` / ``HTTP_PROXY``, either case), unless ``NO_PROXY`` exempts its host
    or the host is this machine."""
    target = urlsplit(upstream)
    host = target.hostname or ""
    if host in ("127.0.0.1", "localhost", "::1"):
        return None
    scheme = target.scheme or "https"
    given = env.get(f"{scheme}_proxy") or env.get(f"{scheme.upper()}_PROXY")
    if not given:
        return None
    exempt = env.get("no_proxy") or env.get("NO_PROXY") or ""
    if any(_exempts(entry.strip(), host) for entry in exempt.split(",")):
        return None
    proxy = urlsplit(given if "://" in given else f"http://{given}")
    return proxy.netloc.rpartition("@")[2] or None


def _exempts(entry: str, host: str) -> bool:
    """Whether a ``NO_PROXY`` entry (``*``, ``example.com``, ``.example.com``, with or
    without a port) names ``host`` or a domain it is in."""
    name = entry.rsplit(":", 1)[0].lstrip(".").lower() if entry != "*" else "*"
    host = host.lower()
    return bool(name) and (name == "*" or host == name or host.endswith("." + name))


class _Unreachable(Exception):
    """The API could not be reached (the cause says why)."""


def _failed(slot: Slot, status: int, error: str) -> Exchange:
    return Exchange(
        slot.method, slot.path, slot.request, status, "", Message((), b""), error, slot.source
    )


def _read_chunked(stream: Any) -> bytes:
    """A request body sent with ``Transfer-Encoding: chunked``."""
    parts: list[bytes] = []
    while True:
        size = int(stream.readline().split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            # Trailers up to the empty line.
            while stream.readline().strip():
                pass
            return b"".join(parts)
        parts.append(stream.read(size))
        stream.readline()
