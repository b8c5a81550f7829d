"""The recording proxy: forwards a run's model traffic and writes down what crossed it
(docs/replay.md, "Recording").

One :class:`Proxy` serves a pytest process (each xdist worker has its own), on 127.0.0.1
and a free port. Each run gets a path of its own below it (``/r/<token>/``, a
:class:`Channel`), so that runs at the same time (``--eval-concurrency``) are kept apart.
A request is forwarded to the channel's API below the API's own path, and the response
streamed back chunk by chunk as it arrives. What is stored of it, and where, is
:mod:`pytest_evalcases.run.recording`'s.

A channel given a recording (a :class:`~pytest_evalcases.run.replay.Replay`) answers
from it instead (docs/replay.md, "Replay", "Reuse"): a request that matches a recorded one
gets the recorded response and never reaches the API. One that does not ends the replay:
refused with a ``400`` the CLI does not retry (``--eval-replay``), or forwarded, with all
after it, as a live run's (``--eval-reuse``).

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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pytest_evalcases import defaults
from pytest_evalcases.run.recording import is_credential_header
from pytest_evalcases.run.replay import Divergence, RecordedExchange

if TYPE_CHECKING:
    from pytest_evalcases.run.replay import Replay

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
#: Seconds a run's end waits for the proxy to write down a request still under way.
SETTLE_SECONDS = 2.0
#: Bytes read from the API before they are passed on: a streamed event is forwarded as
#: soon as it arrives, never held until the response is complete.
_CHUNK = 64 * 1024
#: Statuses by which the API refuses the credentials: the run ends at once.
REFUSED = frozenset({401, 403})
#: Characters of the API's words quoted in an error.
_QUOTED = 300


@dataclass(frozen=True)
class Failure:
    """What ends a run at once: the API refused its credentials (``authentication``) or
    could not be reached (``server``), in the upstream's own words."""

    kind: str
    message: str


@dataclass(frozen=True)
class Message:
    """One request or response as it crossed the proxy, credentials and all (they are
    left out when it is written)."""

    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass(frozen=True)
class Exchange:
    """One request the CLI sent and what the API answered."""

    method: str
    #: The request's path and query below the run's prefix (``/v1/messages?beta=true``).
    path: str
    request: Message
    status: int
    reason: str
    response: Message
    #: Why the API could not be reached or the response was cut; empty when it was not.
    error: str = ""
    #: On a replaying channel, where the response came from: ``replay`` (the
    #: recording) or ``live`` (the API); empty on a channel that only records.
    source: str = ""


@dataclass
class _Slot:
    """One request under way, in the place its start gave it: what arrived of the
    response so far, and the whole exchange once it is over."""

    method: str
    path: str
    request: Message
    status: int = 0
    reason: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    received: list[bytes] = field(default_factory=list)
    exchange: Exchange | None = None
    source: str = ""

    def snapshot(self) -> Exchange:
        if self.exchange is not None:
            return self.exchange
        body = b"".join(list(self.received))
        return Exchange(
            self.method,
            self.path,
            self.request,
            self.status,
            self.reason,
            Message(self.headers, body),
            "the run ended before the response did",
            self.source,
        )


@dataclass
class Channel:
    """One run's path below the proxy and what crossed it, in the order the requests
    were sent."""

    token: str
    #: Where requests go: the API's base URL (``https://api.anthropic.com``).
    upstream: str
    #: The base URL the CLI is given: the proxy's address and the run's prefix.
    url: str
    #: The HTTP proxy (``host:port``) that requests to the upstream go through, as the
    #: run's environment names one (``HTTPS_PROXY``); ``None``: straight there.
    via: str | None = None
    #: The recording that answers the run's requests; ``None``: all go to the API.
    replay: Replay | None = None
    #: With a recording: forward what does not match (``--eval-reuse``) rather than
    #: refuse it (``--eval-replay``).
    reuse: bool = False
    #: The first request the recording had no answer to (it and all after it went to
    #: the API under reuse, were refused under replay); ``None`` while all matched.
    diverged: Divergence | None = None
    #: The first upstream failure that ends the run; ``None`` while there is none.
    failure: Failure | None = None
    _slots: list[_Slot] = field(default_factory=list)
    _pending: int = 0
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _on_failure: Callable[[Failure], None] | None = None

    def on_failure(self, callback: Callable[[Failure], None] | None) -> None:
        """Call ``callback`` (from the proxy's thread) on the channel's first failure,
        at once if it failed already; ``None``: call nothing any more."""
        with self._changed:
            self._on_failure = callback
            failed = self.failure
        if callback is not None and failed is not None:
            callback(failed)

    def fail(self, failure: Failure) -> None:
        """Note ``failure`` (the first is kept) and tell whoever listens."""
        with self._changed:
            if self.failure is not None:
                return
            self.failure = failure
            callback = self._on_failure
        if callback is not None:
            callback(failure)

    def last_error(self) -> str:
        """The API's last error in the run, quoted (an exchange that failed, or a
        status of 400 or more); ``""`` when there was none."""
        with self._changed:
            done = [slot.exchange for slot in self._slots if slot.exchange is not None]
        for exchange in reversed(done):
            if exchange.error:
                return exchange.error
            if exchange.status >= 400:
                words = quoted(exchange.response.body, exchange.request)
                return f"{_status(exchange)}: {words}".rstrip(": ")
        return ""

    @contextlib.contextmanager
    def request(self, method: str, path: str, message: Message) -> Iterator[_Slot]:
        """One request, given its place now; :meth:`recorded` waits for its end."""
        slot = _Slot(method, path, message)
        with self._changed:
            self._slots.append(slot)
            self._pending += 1
        try:
            yield slot
        finally:
            with self._changed:
                self._pending -= 1
                self._changed.notify_all()

    def answer(self, slot: _Slot) -> RecordedExchange | Divergence | None:
        """The recorded answer to ``slot``'s request; a divergence when there is none
        (the first of the run is kept); ``None`` when the request goes to the API: the
        channel replays nothing, or went live at an earlier divergence."""
        with self._changed:
            replay, diverged = self.replay, self.diverged
        if replay is None or (diverged is not None and self.reuse):
            return None
        if diverged is not None:
            return diverged
        found = replay.answer(slot.method, slot.path, slot.request.body)
        if isinstance(found, Divergence):
            with self._changed:
                if self.diverged is None:
                    self.diverged = found
            return None if self.reuse else found
        return found

    def recorded(self, wait: float = SETTLE_SECONDS) -> list[Exchange]:
        """The exchanges so far, in order. Waits up to ``wait`` seconds for requests
        still under way: the CLI may read its last response before the proxy has
        written it down. A response still streaming after that (the run was stopped)
        is recorded as far as it came."""
        with self._changed:
            self._changed.wait_for(lambda: self._pending == 0, wait)
            return [slot.snapshot() for slot in self._slots]


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
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="evalcases-proxy", daemon=True
        )
        self._thread.start()

    def open(
        self,
        upstream: str,
        via: str | None = None,
        *,
        replay: Replay | None = None,
        reuse: bool = False,
    ) -> Channel:
        """A new channel to ``upstream`` for one run, through the HTTP proxy ``via``;
        answering from ``replay`` while requests match, when given."""
        token = secrets.token_hex(8)
        url = f"http://127.0.0.1:{self.port}/r/{token}"
        channel = Channel(token, upstream.rstrip("/"), url, via, replay, reuse)
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

    def _record(self, channel: Channel, slot: _Slot) -> None:
        if self.headers.get("upgrade"):
            # A WebSocket cannot be recorded as requests and responses: the CLI falls
            # back to HTTPS (Codex does).
            self._refuse(501, "the recording proxy does not relay protocol upgrades")
            slot.exchange = _failed(slot, 501, "protocol upgrade refused")
            return
        found = channel.answer(slot)
        if isinstance(found, Divergence):
            self._diverged(slot, found.message)
            return
        if isinstance(found, RecordedExchange):
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

    def _replay(self, slot: _Slot, found: RecordedExchange) -> None:
        """Send the recorded response at once, as the API sent it (its framing aside)."""
        headers = tuple(
            (name, value)
            for name, value in found.headers
            if name.lower() not in _HOP_BY_HOP and name.lower() != "content-length"
        )
        bodiless = self.command == "HEAD" or found.status in (204, 304) or found.status < 200
        self.send_response_only(found.status, found.reason or None)
        for name, value in headers:
            self.send_header(name, value)
        if not bodiless:
            self.send_header("Content-Length", str(len(found.response)))
        self.end_headers()
        if not bodiless:
            self.wfile.write(found.response)
        self.wfile.flush()
        slot.exchange = Exchange(
            slot.method,
            slot.path,
            slot.request,
            found.status,
            found.reason,
            Message(headers, found.response),
            source="replay",
        )

    def _diverged(self, slot: _Slot, message: str) -> None:
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

    def _forward(self, channel: Channel, slot: _Slot) -> None:
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
                    f"{_status(exchange)}: {words}".rstrip(": "),
                )
            )

    def _stream(self, slot: _Slot, response: http.client.HTTPResponse) -> None:
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


def _status(exchange: Exchange) -> str:
    """``401 Unauthorized``, or the status alone when the API gave no reason."""
    return f"{exchange.status} {exchange.reason}".strip()


def quoted(body: bytes, request: Message) -> str:
    """The API's words in an error ``body``: the ``message`` of its JSON error (the
    Anthropic, OpenAI and Gemini APIs' shape), else the text, shortened; the request's
    credentials, should the API echo one, left out."""
    text = body.decode("utf-8", "replace")
    with contextlib.suppress(ValueError):
        text = _error_message(json.loads(text)) or text
    words = " ".join(text.split())
    for name, value in request.headers:
        if is_credential_header(name):
            for secret in {value.strip(), *value.split()}:
                if len(secret) >= 8:
                    words = words.replace(secret, "[credential]")
    return words if len(words) <= _QUOTED else words[: _QUOTED - 1] + "…"


def _error_message(doc: Any) -> str:
    if isinstance(doc, list) and doc:
        return _error_message(doc[0])
    if not isinstance(doc, dict):
        return ""
    error = doc.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    message = doc.get("message")
    return message if isinstance(message, str) else ""


def _failed(slot: _Slot, status: int, error: str) -> Exchange:
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
