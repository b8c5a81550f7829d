"""Reading a model API's wire format leniently: streamed events, and an API's error."""

from __future__ import annotations

import pytest

from pytest_evalcases.recording.wire import error_message, events


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            '{"type": "error", "error": {"type": "x", "message": "invalid x-api-key"}}',
            "invalid x-api-key",
        ),
        (
            '[{"error": {"code": 429, "message": "Resource exhausted", "status": "X"}}]',
            "Resource exhausted",
        ),
        ('{"error": "model not found"}', "model not found"),
        ('{"message": "Forbidden"}', "Forbidden"),
        ('{"error": {"code": 500}}', ""),
        ("<html>Bad Gateway</html>", ""),
    ],
)
def test_an_apis_error_is_its_message_in_any_dialect(body: str, said: str) -> None:
    assert error_message(body) == said


def test_events_are_the_data_of_each_event_or_the_whole_body() -> None:
    stream = (
        'event: a\ndata: {"n": 1}\n\ndata: {"n":\ndata:  2}\r\n\r\ndata: [DONE]\n\ndata: oops\n\n'
    )
    assert list(events(stream)) == [{"n": 1}, {"n": 2}]
    assert list(events('[{"n": 1}, {"n": 2}]')) == [{"n": 1}, {"n": 2}]
    assert list(events('{"n": 3}')) == [{"n": 3}]
