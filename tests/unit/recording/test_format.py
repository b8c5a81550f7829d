"""The recording file (docs/replay.md, "Recording"): one reader, whose errors name the
file and the line at fault."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from pytest_evalcases.errors import EvalcasesError
from pytest_evalcases.recording import format as recording
from pytest_evalcases.recording.format import Exchange, Message, RecordingError
from pytest_evalcases.redact import Redactor


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (
            b'{"format": "pytest-evalcases exchange", "version": 1}\n{"seq": 0,\n',
            ":2: not a JSON object",
        ),
        (b'{"seq": 0, "request": {}}\n', ":1: not a recorded exchange (no header line)"),
        (
            b'{"format": "pytest-evalcases exchange", "version": 99}\n',
            ":1: recording format version 99",
        ),
        (b'{"format": "pytest-evalcases exchange", "version": 1}\n[1]\n', ":2: not a JSON object"),
        (
            b'{"format": "pytest-evalcases exchange", "version": 1}\n'
            b'{"seq": "x", "request": {}, "response": {}}\n',
            ": not a recording this version reads: ",
        ),
    ],
)
def test_a_corrupt_recording_names_its_file_and_line(
    tmp_path: Path, content: bytes, said: str
) -> None:
    path = tmp_path / "exchange.jsonl"
    path.write_bytes(content)

    with pytest.raises(RecordingError) as caught:
        recording.read(path)

    assert str(caught.value).startswith(f"{path}{said}")


def test_a_corrupt_compressed_recording_names_its_file(tmp_path: Path) -> None:
    path = tmp_path / "exchange.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"format": "pytest-evalcases exchange"}\n')[:-6])

    with pytest.raises(RecordingError, match="not a complete gzip file") as caught:
        recording.read(path)

    assert str(caught.value).startswith(f"{path}: ")


def test_what_is_written_reads_back_as_exchanges(tmp_path: Path) -> None:
    sent = [
        Exchange(
            "POST",
            "/v1/messages",
            Message((("x-api-key", "sk-Zq7xK2pW9mR4"), ("accept", "json")), b'{"a": 1}'),
            200,
            "OK",
            Message((), b"\x1f\x8b\x00"),
            source="live",
        ),
        Exchange("GET", "/", Message((), b"x" * 50), 404, "", Message((), b"y" * 50), "cut"),
    ]
    lines = recording.serialise(sent, {"run": "r"}, Redactor({}), max_bytes=60)
    stored = recording.write(lines, tmp_path, gzip_above=10**6)

    found = recording.read(stored.path)

    assert (found.header["run"], found.header["truncated"]) == ("r", True)
    first, second = found.exchanges
    assert (first.seq, first.method, first.path, first.status, first.source) == (
        0,
        "POST",
        "/v1/messages",
        200,
        "live",
    )
    # The credential's header is left out; a body that is not text is kept as bytes.
    assert (first.request.headers, first.request.text) == ((("accept", "json"),), '{"a": 1}')
    assert (first.response.binary, first.response.body, first.response.text) == (
        True,
        b"\x1f\x8b\x00",
        None,
    )
    # Past the size limit, the bodies are left out and only their sizes said.
    assert (second.seq, second.request.omitted, second.response.omitted) == (1, 50, 50)
    assert (second.request.text, second.error) == (None, "cut")


def test_a_recording_that_does_not_read_is_a_user_error() -> None:
    assert issubclass(RecordingError, EvalcasesError)
