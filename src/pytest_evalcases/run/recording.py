"""Recording: a live run's model traffic, forwarded and written down
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

The proxy itself is :mod:`pytest_evalcases.run.proxy`; this module says what of its
traffic is stored, and where.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode

from pytest_evalcases import defaults
from pytest_evalcases.redact import MIN_SECRET, Redactor

if TYPE_CHECKING:
    # The proxy (http.server, http.client) loads with the first recorded run.
    from pytest_evalcases.run.proxy import Channel, Exchange, Proxy
    from pytest_evalcases.run.replay import Replay

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


def is_credential_header(name: str) -> bool:
    """Whether a header named ``name`` may carry a credential (never stored)."""
    lowered = name.lower()
    return lowered in _CREDENTIAL_HEADERS or any(w in lowered for w in _CREDENTIAL_WORDS)


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
        if exchange.source:
            entry["source"] = exchange.source
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


def write(lines: list[str], directory: Path, gzip_above: int, mode: int = 0o600) -> Stored:
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
        # As the results file beside it: what the umask allows (mkstemp's is private).
        os.chmod(tmp, mode)
        os.replace(tmp, directory / name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    other = directory / (EXCHANGE if name.endswith(".gz") else EXCHANGE + ".gz")
    with contextlib.suppress(FileNotFoundError):
        other.unlink()
    return Stored(directory / name, len(data))


def exchange_file(directory: Path) -> Path | None:
    """The stored exchange in a run's directory (``exchange.jsonl`` or its ``.gz``);
    ``None`` when the run's traffic was not recorded."""
    for name in (EXCHANGE, EXCHANGE + ".gz"):
        if (directory / name).is_file():
            return directory / name
    return None


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


class Recorder:
    """The recording of one pytest process: its proxy, started by the first run that
    needs it (:meth:`channel`), and where the exchanges go (nowhere: ``place`` is
    ``None`` when a session replays without recording). Thread-safe: runs started
    ahead (``--eval-concurrency``) open channels from the scheduler's threads."""

    def __init__(
        self,
        place: RecordPlace | None,
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
        # Read here, in the main thread: setting the umask to read it would race with
        # the files that other threads create.
        umask = os.umask(0)
        os.umask(umask)
        self.mode = 0o666 & ~umask

    @property
    def proxy(self) -> Proxy:
        from pytest_evalcases.run.proxy import Proxy

        with self._lock:
            if self._proxy is None:
                self._proxy = Proxy()
            return self._proxy

    @property
    def started(self) -> bool:
        return self._proxy is not None

    @contextlib.contextmanager
    def channel(
        self,
        upstream: str,
        env: Mapping[str, str],
        *,
        replay: Replay | None = None,
        reuse: bool = False,
    ) -> Iterator[Channel]:
        """A channel for one run to ``upstream``, through the HTTP proxy ``env`` names
        for it, answering from ``replay`` while it can (docs/replay.md, "Replay"); the
        proxy forgets the channel when the block ends."""
        from pytest_evalcases.run.proxy import http_proxy

        proxy = self.proxy
        channel = proxy.open(upstream, http_proxy(upstream, env), replay=replay, reuse=reuse)
        try:
            yield channel
        finally:
            proxy.release(channel)

    def store(self, channel: Channel, name: str, header: Mapping[str, Any]) -> str | None:
        """Write ``channel``'s exchange as run ``name``; the run's directory relative to
        the results file's directory, with ``/`` between the parts (the run's
        ``recording``); ``None`` when the session records nothing."""
        if self.place is None:
            return None
        lines = serialise(
            channel.recorded(),
            {**header, "upstream": channel.upstream},
            self.redact,
            self.max_bytes,
        )
        directory = self.place.directory / name
        write(lines, directory, self.gzip_above, self.mode)
        return directory.relative_to(self.place.root).as_posix()

    def close(self) -> None:
        """Stop the proxy, when it started."""
        with self._lock:
            proxy, self._proxy = self._proxy, None
        if proxy is not None:
            proxy.close()
