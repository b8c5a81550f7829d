"""What a run's CLI sent its model, as the request checks read it (docs/case-format.md,
"What a request check reads"): the requests of a channel's exchanges while the run is
live or replayed, or of its stored recording when it is regraded, read the same way.

A request counts when it is a model request of a known dialect that the API answered
(a status below 400): a request the API refused and the CLI retried is not counted
twice, and neither is a CLI's side question (a quota check, a session title, a routing
question: :attr:`~pytest_evalcases.recording.views.Request.helper`), so that
``request: 1`` is the conversation's first request.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pytest_evalcases.agents.base import ModelRequest
from pytest_evalcases.recording import dialects
from pytest_evalcases.recording.format import Exchange, RecordingError, exchange_file, read


def model_requests(exchanges: Iterable[Exchange]) -> tuple[ModelRequest, ...]:
    """The model requests among ``exchanges``, in the order they were sent."""
    found = []
    for exchange in exchanges:
        if dialects.dialect_of(exchange.method, exchange.path) == "other":
            continue
        if exchange.status >= 400 or exchange.status == 0:
            continue
        text = exchange.request.text
        if text is None:
            left = "its body was left out of the recording" + (
                f" ({exchange.request.omitted:,} bytes past the recording's size limit)"
                if exchange.request.omitted is not None
                else " (not text)"
            )
            found.append(ModelRequest(unreadable=left, turn=exchange.turn))
            continue
        request = dialects.request(exchange.method, exchange.path, dialects.parse_body(text))
        if request.dialect != "other" and not request.helper:
            found.append(ModelRequest(request.parts(), turn=exchange.turn))
    return tuple(found)


def stored_requests(directory: Path) -> tuple[ModelRequest, ...] | str:
    """The model requests of the run stored in ``directory``; why there are none to
    read when its traffic was not recorded or its recording does not read."""
    path = exchange_file(directory)
    if path is None:
        return f"{directory} holds no recording of the run's model traffic"
    try:
        return model_requests(read(path).exchanges)
    except RecordingError as exc:
        return str(exc)
