"""The recording file: a run's model traffic as stored beside the results file
(docs/replay.md, "What is stored, and where").

A run's exchange is written to ``<results file stem>.runs/<run>/exchange.jsonl`` (its
``.gz`` past a size): a header line, then one line per request and its response, in the
order the requests were sent, without any credential: headers that carry one are left
out, and the secrets of the environment are redacted from everything else
(:mod:`pytest_evalcases.redact`). :func:`write` is the one writer, :func:`read` the one
reader; a file that does not read is a :class:`RecordingError` naming its file and line.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gzip
import json
import os
import re
import tempfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from pytest_evalcases.errors import EvalcasesError
from pytest_evalcases.redact import MIN_SECRET, Redactor

#: The version of the stored format, in the first line of every ``exchange.jsonl``.
FORMAT_VERSION = 1
#: What the header line says the file is.
FORMAT = "pytest-evalcases exchange"
#: What a session's directory of recordings is called after its results file's stem.
SUFFIX = ".runs"
#: The file of a run's exchange in its directory; ``.gz`` is added when it is compressed.
EXCHANGE = "exchange.jsonl"


class RecordingError(EvalcasesError):
    """A stored exchange that cannot be read: names the file, and the line when one is
    at fault."""


@dataclass(frozen=True)
class Message:
    """One request or response: its headers and body. As it crosses the proxy it holds
    the credentials too (they are left out when it is written); read back, a body that
    was not stored says why."""

    headers: tuple[tuple[str, str], ...]
    body: bytes
    #: Stored as base64: the body is not UTF-8 text (compressed).
    binary: bool = False
    #: The size of a body left out past the recording's size limit; ``None``: kept.
    omitted: int | None = None

    @property
    def text(self) -> str | None:
        """The body as text; ``None`` when it was not stored as text."""
        if self.binary or self.omitted is not None:
            return None
        return self.body.decode("utf-8", "replace")


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
    #: Its place in the recording, as stored (read back); 0 while it is live.
    seq: int = 0
    #: The turn of the run's conversation it was sent in (docs/conversations.md).
    turn: int = 1


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


def stored_path(path: str, redact: Callable[[str], str] = str) -> str:
    """The path as stored: the values of query parameters that may be credentials
    (Gemini's ``?key=``) left out, and what is left redacted."""
    route, mark, query = path.partition("?")
    if not mark:
        return redact(route)
    pairs = [
        (name, "" if is_credential_header(name) else value)
        for name, value in parse_qsl(query, keep_blank_values=True)
    ]
    return redact(route + "?" + urlencode(pairs))


# --- writing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Stored:
    """Where a run's exchange was written, and its size there."""

    path: Path
    bytes: int


def serialise(
    exchanges: Sequence[Exchange],
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
                "path": stored_path(exchange.path, scrub),
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
        if exchange.turn != 1:
            entry["turn"] = exchange.turn
        lines.append(json.dumps(entry, ensure_ascii=False))
    first = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        **header,
        "exchanges": len(exchanges),
        "truncated": truncated,
    }
    return [json.dumps(withheld.data(redact.data(first)), ensure_ascii=False), *lines]


def _withheld(exchanges: Sequence[Exchange]) -> set[str]:
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


@dataclass(frozen=True)
class RecordPlace:
    """Where a session writes its recordings: ``root/<results-file-stem>.runs``."""

    #: The results file's directory: a run's ``recording`` is relative to it.
    root: Path
    directory: Path


# --- reading ----------------------------------------------------------------------------


def exchange_file(directory: Path) -> Path | None:
    """The stored exchange in a run's directory (``exchange.jsonl`` or its ``.gz``);
    ``None`` when the run's traffic was not recorded."""
    for name in (EXCHANGE, EXCHANGE + ".gz"):
        if (directory / name).is_file():
            return directory / name
    return None


@dataclass(frozen=True)
class Recorded:
    """A stored exchange read back: its header and its exchanges, in order."""

    path: Path
    #: The header line: the run, its case, agent, workspace and homes, the upstream,
    #: the number of exchanges and whether the bodies were truncated.
    header: dict[str, Any]
    exchanges: tuple[Exchange, ...]


def read(path: Path) -> Recorded:
    """The exchange stored at ``path`` (``exchange.jsonl`` or its ``.gz``); a
    :class:`RecordingError` names the file, and the line, that do not read."""
    header, entries = _lines(path)
    try:
        exchanges = tuple(_exchange(entry) for entry in entries)
    except (TypeError, ValueError, AttributeError, binascii.Error) as exc:
        # A line that is JSON but not of the stored format (a field of the wrong type).
        raise RecordingError(f"{path}: not a recording this version reads: {exc}") from None
    return Recorded(path, header, exchanges)


def _lines(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            data = gzip.decompress(data)
        text = data.decode("utf-8")
    except OSError as exc:
        raise RecordingError(f"{path}: cannot read the recording: {exc.strerror or exc}") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise RecordingError(f"{path}: not a complete gzip file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise RecordingError(f"{path}: not UTF-8 text ({exc.reason})") from None
    objects: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise RecordingError(f"{path}:{number}: not a JSON object: {exc}") from None
        if not isinstance(value, dict):
            raise RecordingError(f"{path}:{number}: not a JSON object")
        if objects and not isinstance(value.get("request"), dict):
            raise RecordingError(f"{path}:{number}: an exchange without its request")
        objects.append(value)
    if not objects or objects[0].get("format") != FORMAT:
        raise RecordingError(f"{path}:1: not a recorded exchange (no header line)")
    version = objects[0].get("version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise RecordingError(
            f"{path}:1: recording format version {version!r} is not one this version reads "
            f"(up to {FORMAT_VERSION})"
        )
    return objects[0], objects[1:]


def _exchange(entry: dict[str, Any]) -> Exchange:
    request = entry["request"]
    response = entry.get("response") or {}
    return Exchange(
        method=str(request.get("method", "")),
        path=str(request.get("path", "")),
        request=_message(request),
        status=int(response.get("status") or 0),
        reason=str(response.get("reason") or ""),
        response=_message(response),
        error=str(entry.get("error") or ""),
        source=str(entry.get("source") or ""),
        seq=int(entry.get("seq", 0)),
        turn=int(entry.get("turn", 1)),
    )


def _message(stored: Mapping[str, Any]) -> Message:
    headers = tuple((str(name), str(value)) for name, value in stored.get("headers") or [])
    if "body_omitted" in stored:
        return Message(headers, b"", omitted=int(stored["body_omitted"]))
    if "body_base64" in stored:
        return Message(headers, base64.b64decode(str(stored["body_base64"])), binary=True)
    return Message(headers, str(stored.get("body", "")).encode("utf-8", "surrogatepass"))
