"""One run's channel through the recording proxy (docs/replay.md, "Recording"):
its own path below the proxy (``/r/<token>/``), the exchanges that crossed it in the
order the requests were sent (what the request checks read, also of a run that is not
recorded), the recording or the script that answers it, and the first upstream
failure that ends the run at once (docs/agents.md, "Failing fast").
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from pytest_evalcases.agents.base import ModelRequest
from pytest_evalcases.recording.format import Exchange, Message, is_credential_header
from pytest_evalcases.recording.replay import Divergence, Replay
from pytest_evalcases.recording.script import Playing, Script, Written
from pytest_evalcases.recording.sent import model_requests
from pytest_evalcases.recording.wire import error_message

#: Seconds a run's end waits for the proxy to write down a request still under way.
SETTLE_SECONDS = 2.0
#: Characters of the API's words quoted in an error.
_QUOTED = 300


@dataclass(frozen=True)
class Failure:
    """What ends a run at once: the API refused its credentials (``authentication``) or
    could not be reached (``server``), in the upstream's own words."""

    kind: str
    message: str


@dataclass
class Slot:
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
    #: The turn of the run's conversation the request was sent in (1 = its prompt's).
    turn: int = 1

    def snapshot(self) -> Exchange:
        if self.exchange is not None:
            return replace(self.exchange, turn=self.turn)
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
            turn=self.turn,
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
    #: The case's script, which answers every request itself (docs/config-contract.md,
    #: "The scripted model"): nothing goes to the API; ``None``: the API or a recording.
    script: Script | None = None
    #: The first request the recording had no answer to (it and all after it went to
    #: the API under reuse, were refused under replay); ``None`` while all matched.
    diverged: Divergence | None = None
    #: The first upstream failure that ends the run; ``None`` while there is none.
    failure: Failure | None = None
    #: The turn of the run's conversation under way (docs/conversations.md).
    turn: int = 1
    #: The run is a conversation: its turns are told (:meth:`begin_turn`).
    _conversation: bool = False
    _playing: Playing = field(default_factory=Playing)
    _slots: list[Slot] = field(default_factory=list)
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
                return f"{status_line(exchange)}: {words}".rstrip(": ")
        return ""

    def begin_turn(self, turn: int) -> None:
        """Turn ``turn`` of the run's conversation begins: its requests are tagged with
        it, and a script goes on where the last turn left it."""
        with self._changed:
            self.turn = turn
            self._conversation = True
        if turn > 1:
            self._playing.next_prompt()

    def play(self, method: str, path: str, body: bytes) -> Written:
        """The script's answer to a request (the channel has one)."""
        assert self.script is not None
        return self.script.respond(method, path, body, self._playing.index)

    @contextlib.contextmanager
    def request(self, method: str, path: str, message: Message) -> Iterator[Slot]:
        """One request, given its place now; :meth:`recorded` waits for its end."""
        with self._changed:
            slot = Slot(method, path, message, turn=self.turn)
            self._slots.append(slot)
            self._pending += 1
        try:
            yield slot
        finally:
            with self._changed:
                self._pending -= 1
                self._changed.notify_all()

    def answer(self, slot: Slot) -> Exchange | Divergence | None:
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
                if self._conversation:
                    # Which turn, and which of its requests: what a user can find.
                    sent = [s for s in self._slots if s.turn == slot.turn and s.method == "POST"]
                    number = next((i for i, s in enumerate(sent, 1) if s is slot), len(sent))
                    found = replace(found, within=(slot.turn, number))
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

    def requests(self) -> tuple[ModelRequest, ...]:
        """The model requests the run sent so far, as the request checks read them
        (:mod:`pytest_evalcases.recording.sent`)."""
        return model_requests(self.recorded())


def status_line(exchange: Exchange) -> str:
    """``401 Unauthorized``, or the status alone when the API gave no reason."""
    return f"{exchange.status} {exchange.reason}".strip()


def quoted(body: bytes, request: Message) -> str:
    """The API's words in an error ``body``: the ``message`` of its JSON error (the
    Anthropic, OpenAI and Gemini APIs' shape), else the text, shortened; the request's
    credentials, should the API echo one, left out."""
    text = body.decode("utf-8", "replace")
    words = " ".join((error_message(text) or text).split())
    for name, value in request.headers:
        if is_credential_header(name):
            for secret in {value.strip(), *value.split()}:
                if len(secret) >= 8:
                    words = words.replace(secret, "[credential]")
    return words if len(words) <= _QUOTED else words[: _QUOTED - 1] + "…"
