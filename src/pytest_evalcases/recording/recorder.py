"""The recorder: a live run's model traffic, forwarded and written down (docs/replay.md,
"Recording").

An agent CLI that talks to its model API over HTTP is pointed at a local proxy (its
base-URL variable, or Codex's ``openai_base_url``) that forwards every request to the
real API, or to whatever base URL the run's environment named, and streams each response
back as it arrives (:mod:`pytest_evalcases.recording.proxy`). One :class:`Recorder`
serves a pytest process (each xdist worker has its own) and starts the proxy with the
first run that needs it; when a run ends, its exchange is written as
:mod:`pytest_evalcases.recording.format` says.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from pytest_evalcases import defaults
from pytest_evalcases.recording.channel import Channel
from pytest_evalcases.recording.format import RecordPlace, serialise, write
from pytest_evalcases.recording.proxy import Proxy, http_proxy
from pytest_evalcases.recording.replay import Replay
from pytest_evalcases.recording.script import Script
from pytest_evalcases.redact import Redactor


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
        script: Script | None = None,
    ) -> Iterator[Channel]:
        """A channel for one run to ``upstream``, through the HTTP proxy ``env`` names
        for it, answering from ``replay`` while it can (docs/replay.md, "Replay"), or
        from ``script`` (docs/config-contract.md); the proxy forgets the channel when
        the block ends."""
        proxy = self.proxy
        channel = proxy.open(
            upstream, http_proxy(upstream, env), replay=replay, reuse=reuse, script=script
        )
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
