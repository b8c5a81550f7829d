"""The recording proxy: a live run's model traffic, forwarded and written down
(docs/replay.md, "Recording").

An agent CLI that talks to its model API over HTTP is pointed at a local proxy (its
base-URL variable, or Codex's ``openai_base_url``) that forwards every request to the
real API, or to whatever base URL the run's environment named, and streams each response
back as it arrives, chunk by chunk. One :class:`Proxy` serves a pytest process (each
xdist worker has its own), started by the first run that needs it; each run gets a path
of its own below it (``/r/<token>/``, a :class:`Channel`), so that runs at the same time
(``--eval-concurrency``) are kept apart. When the run ends, its exchange is written to
``<results file stem>.runs/<run>/exchange.jsonl`` beside the results file, without any
credential: headers that carry one are left out, and the secrets of the environment are
redacted from everything else (:mod:`pytest_evalcases.redact`).

Plain Python, standard library only: :class:`http.server.ThreadingHTTPServer` to the
CLI, :mod:`http.client` to the API.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import http.client
import json
import os
import re
import secrets
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from pytest_evalcases import defaults
from pytest_evalcases.redact import MIN_SECRET, Redactor

#: The version of the stored format, in the first line of every ``exchange.jsonl``.
FORMAT_VERSION = 1
#: What a session's directory of recordings is called after its results file's stem.
SUFFIX = ".runs"
#: The file of a run's exchange in its directory; ``.gz`` is added when it is compressed.
EXCHANGE = "exchange.jsonl"

#: Headers never stored, whatever their value: credentials and cookies.
_CREDENTIAL_HEADERS = frozenset(
    {
        "x-api-key",
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-goog-api-key",
    }
)
#: A header whose name holds one of these words may hold a credential: never stored.
_CREDENTIAL_WORDS = ("key", "token", "secret", "auth")
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
#: Seconds a run's end waits for the proxy to write down a request still under way.
SETTLE_SECONDS = 10.0
#: Bytes read from the API before they are passed on: a streamed event is forwarded as
#: soon as it arrives, never held until the response is complete.
_CHUNK = 64 * 1024


def is_credential_header(name: str) -> bool:
    """Whether a header named ``name`` may carry a credential (never stored)."""
    lowered = name.lower()
    return lowered in _CREDENTIAL_HEADERS or any(w in lowered for w in _CREDENTIAL_WORDS)


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


@dataclass
class Channel:
    """One run's path below the proxy and what crossed it, in order."""

    token: str
    #: Where requests go: the API's base URL (``https://api.anthropic.com``).
    upstream: str
    #: The base URL the CLI is given: the proxy's address and the run's prefix.
    url: str
    exchanges: list[Exchange] = field(default_factory=list)
    _pending: int = 0
    _changed: threading.Condition = field(default_factory=threading.Condition)

    @contextlib.contextmanager
    def request(self) -> Iterator[None]:
        """Around one request: :meth:`recorded` waits until it is recorded."""
        with self._changed:
            self._pending += 1
        try:
            yield
        finally:
            with self._changed:
                self._pending -= 1
                self._changed.notify_all()

    def add(self, exchange: Exchange) -> None:
        with self._changed:
            self.exchanges.append(exchange)

    def recorded(self, wait: float = SETTLE_SECONDS) -> list[Exchange]:
        """The exchanges so far, in order, once no request is under way (the CLI may
        have read its last response before the proxy wrote it down), or after ``wait``
        seconds."""
        with self._changed:
            self._changed.wait_for(lambda: self._pending == 0, wait)
            return list(self.exchanges)


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

    def open(self, upstream: str) -> Channel:
        """A new channel to ``upstream`` for one run."""
        token = secrets.token_hex(8)
        channel = Channel(token, upstream.rstrip("/"), f"http://127.0.0.1:{self.port}/r/{token}")
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
        _, _, rest = self.path.partition("/r/")
        token, slash, tail = rest.partition("/")
        channel = self.owner.channel(token) if self.path.startswith("/r/") else None
        if channel is None:
            self._refuse(404, "no run is recorded under this path (it ended, or never began)")
            return
        path = slash + tail if slash else "/"
        if path.startswith("?"):
            path = "/" + path
        with channel.request():
            self._record(channel, path)

    def _record(self, channel: Channel, path: str) -> None:
        body = self._request_body()
        request = Message(tuple(self.headers.items()), body)
        if self.headers.get("upgrade"):
            # A WebSocket cannot be recorded as requests and responses: the CLI falls
            # back to HTTPS (Codex does).
            self._refuse(501, "the recording proxy does not relay protocol upgrades")
            channel.add(_failed(self.command, path, request, 501, "protocol upgrade refused"))
            return
        try:
            self._forward(channel, path, request)
        except (OSError, http.client.HTTPException) as exc:
            channel.add(_failed(self.command, path, request, 502, f"the API failed: {exc}"))
            with contextlib.suppress(OSError):
                self._refuse(502, f"the recording proxy could not reach {channel.upstream}")

    def _request_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            return _read_chunked(self.rfile)
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _forward(self, channel: Channel, path: str, request: Message) -> None:
        target = urlsplit(channel.upstream)
        connection_type = (
            http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
        )
        upstream = connection_type(target.netloc, timeout=self.owner.timeout)
        try:
            # The API answers uncompressed: the stored bytes stay readable and redactable.
            upstream.putrequest(
                self.command, target.path + path, skip_host=True, skip_accept_encoding=True
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
            self._stream(channel, path, request, response)
        finally:
            upstream.close()

    def _stream(
        self,
        channel: Channel,
        path: str,
        request: Message,
        response: http.client.HTTPResponse,
    ) -> None:
        headers = tuple(response.getheaders())
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
        received: list[bytes] = []
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
        channel.add(
            Exchange(
                method=self.command,
                path=path,
                request=request,
                status=response.status,
                reason=response.reason,
                response=Message(headers, b"".join(received)),
                error=error,
            )
        )

    def _refuse(self, status: int, message: str) -> None:
        data = json.dumps({"error": {"type": "recording_proxy", "message": message}}).encode()
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def _failed(method: str, path: str, request: Message, status: int, error: str) -> Exchange:
    return Exchange(method, path, request, status, "", Message((), b""), error)


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


# --- what is stored -------------------------------------------------------------------


@dataclass(frozen=True)
class Stored:
    """Where a run's exchange was written, and its size there."""

    path: Path
    bytes: int


def serialise(
    exchanges: list[Exchange],
    header: Mapping[str, Any],
    redact: Redactor,
    max_bytes: int,
) -> list[str]:
    """The lines of ``exchange.jsonl``: a header, then one line per exchange in order,
    without credentials. Past ``max_bytes`` of bodies the rest of the exchanges are
    listed without their bodies and the header says ``"truncated": true``."""
    # A credential the API echoes (a key in a URL it quotes back) goes like the header
    # or query parameter that carried it.
    withheld = Redactor(
        {f"WITHHELD_KEY_{i}": value for i, value in enumerate(_withheld(exchanges))}
    )

    def scrub(text: str) -> str:
        return withheld(redact(text))

    lines: list[str] = []
    budget = max_bytes
    truncated = False
    for seq, exchange in enumerate(exchanges):
        size = len(exchange.request.body) + len(exchange.response.body)
        keep = size <= budget
        budget -= size if keep else 0
        truncated = truncated or not keep
        entry: dict[str, Any] = {
            "seq": seq,
            "request": {
                "method": exchange.method,
                "path": _stored_path(exchange.path, scrub),
                "headers": _stored_headers(exchange.request.headers, scrub),
                **_stored_body(exchange.request.body, scrub, keep),
            },
            "response": {
                "status": exchange.status,
                "reason": exchange.reason,
                "headers": _stored_headers(exchange.response.headers, scrub),
                **_stored_body(exchange.response.body, scrub, keep),
            },
        }
        if exchange.error:
            entry["error"] = scrub(exchange.error)
        lines.append(json.dumps(entry, ensure_ascii=False))
    first = {
        "format": "pytest-evalcases exchange",
        "version": FORMAT_VERSION,
        **header,
        "exchanges": len(exchanges),
        "truncated": truncated,
    }
    return [json.dumps(withheld.data(redact.data(first)), ensure_ascii=False), *lines]


def _withheld(exchanges: list[Exchange]) -> set[str]:
    """The credentials the requests carried: values of credential headers (and the
    token of ``Bearer TOKEN``, the values of a cookie) and of credential query
    parameters."""
    values: set[str] = set()
    for exchange in exchanges:
        for message in (exchange.request, exchange.response):
            for name, value in message.headers:
                if is_credential_header(name):
                    values.add(value.strip())
                    values.update(re.split(r"[\s;=,]+", value))
        _, _, query = exchange.path.partition("?")
        values.update(v for n, v in parse_qsl(query) if is_credential_header(n))
    return {v for v in values if len(v) >= MIN_SECRET}


def _stored_headers(
    headers: tuple[tuple[str, str], ...], redact: Callable[[str], str]
) -> list[list[str]]:
    """Name and value pairs in order (a name may come twice), names in lower case,
    credentials left out."""
    return [
        [name.lower(), redact(value)] for name, value in headers if not is_credential_header(name)
    ]


def _stored_path(path: str, redact: Callable[[str], str]) -> str:
    """The path with the values of query parameters that may be credentials (Gemini's
    ``?key=``) left out, and what is left redacted."""
    route, mark, query = path.partition("?")
    if not mark:
        return redact(route)
    pairs = [
        (name, "" if is_credential_header(name) else value)
        for name, value in parse_qsl(query, keep_blank_values=True)
    ]
    return redact(route + "?" + urlencode(pairs))


def _stored_body(body: bytes, redact: Callable[[str], str], keep: bool) -> dict[str, Any]:
    """``body`` as text (redacted), as base64 when it is not UTF-8 text (compressed), or
    only its size when it is past the limit."""
    if not keep:
        return {"body_omitted": len(body)}
    try:
        return {"body": redact(body.decode("utf-8"))}
    except UnicodeDecodeError:
        return {"body_base64": base64.b64encode(body).decode("ascii")}


def write(lines: list[str], directory: Path, gzip_above: int) -> Stored:
    """Write ``lines`` as ``directory/exchange.jsonl`` (``.jsonl.gz`` when larger than
    ``gzip_above`` bytes) through a temporary file renamed into place: a reader never
    sees half a recording; the other form of an earlier run's file goes."""
    data = ("\n".join(lines) + "\n").encode("utf-8")
    name = EXCHANGE
    if len(data) > gzip_above:
        data = gzip.compress(data, mtime=0)
        name += ".gz"
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-exchange-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, directory / name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    other = directory / (EXCHANGE if name.endswith(".gz") else EXCHANGE + ".gz")
    with contextlib.suppress(FileNotFoundError):
        other.unlink()
    return Stored(directory / name, len(data))


def read(path: Path) -> list[dict[str, Any]]:
    """The lines of a stored exchange (``.jsonl`` or ``.jsonl.gz``) as JSON objects."""
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


# --- the session's recorder -----------------------------------------------------------


@dataclass(frozen=True)
class RecordPlace:
    """Where a session writes its recordings: ``root/<results-file-stem>.runs``."""

    #: The results file's directory: a run's ``recording`` is relative to it.
    root: Path
    directory: Path

    def to_dict(self) -> dict[str, str]:
        """Plain values, for xdist's workers."""
        return {"root": str(self.root), "directory": str(self.directory)}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> RecordPlace:
        return cls(root=Path(str(data["root"])), directory=Path(str(data["directory"])))


class Recorder:
    """The recording of one pytest process: its proxy, started by the first run that
    needs it (:meth:`channel`), and where the exchanges go. Thread-safe: runs started
    ahead (``--eval-concurrency``) open channels from the scheduler's threads."""

    def __init__(
        self,
        place: RecordPlace,
        redact: Redactor,
        *,
        max_bytes: int = defaults.RECORDING_MAX_BYTES,
        gzip_above: int = defaults.RECORDING_GZIP_BYTES,
    ) -> None:
        self.place = place
        self.redact = redact
        self.max_bytes = max_bytes
        self.gzip_above = gzip_above
        self._proxy: Proxy | None = None
        self._lock = threading.Lock()

    @property
    def proxy(self) -> Proxy:
        with self._lock:
            if self._proxy is None:
                self._proxy = Proxy()
            return self._proxy

    @property
    def started(self) -> bool:
        return self._proxy is not None

    @contextlib.contextmanager
    def channel(self, upstream: str) -> Iterator[Channel]:
        """A channel for one run; the proxy forgets it when the block ends."""
        proxy = self.proxy
        channel = proxy.open(upstream)
        try:
            yield channel
        finally:
            proxy.release(channel)

    def store(self, channel: Channel, name: str, header: Mapping[str, Any]) -> str:
        """Write ``channel``'s exchange as run ``name``; its path relative to the results
        file's directory, with ``/`` between the parts (the run's ``recording``)."""
        lines = serialise(
            channel.recorded(),
            {**header, "upstream": channel.upstream},
            self.redact,
            self.max_bytes,
        )
        stored = write(lines, self.place.directory / name, self.gzip_above)
        return stored.path.relative_to(self.place.root).as_posix()

    def close(self) -> None:
        """Stop the proxy, when it started."""
        with self._lock:
            proxy, self._proxy = self._proxy, None
        if proxy is not None:
            proxy.close()
