"""What the CLI sent its model, as the pins record it (docs/results.md, "Pins"): of a
run's stored recording, the conversation's first request, with what varies between two
runs of the same configuration replaced (the run's workspace and agent home, dates,
session ids: docs/replay.md, "What is normalised"; Claude Code's billing header, whose
``cc_version`` ends with a fingerprint of the prompt, is no part of the system prompt
read). The system prompt and the context
the CLI put before the prompt (Claude Code's ``CLAUDE.md`` reaches the model in the first
user message, not in the system prompt) are kept as sha256 only; the tools offered, the
model and the sampling parameters as sent are kept as they are.

:func:`summary` makes one variant's ``pins.sent`` entry of the runs read.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_evalcases.recording import dialects
from pytest_evalcases.recording.format import Exchange, RecordingError, exchange_file, read
from pytest_evalcases.recording.normalise import WORKSPACE, Normaliser, Places
from pytest_evalcases.recording.views import Dialect, Request
from pytest_evalcases.recording.wire import as_dict

#: The sampling parameters of each dialect, by their names as sent (Gemini's are in
#: ``generationConfig``). A helper's answer format (a JSON schema) is no sampling.
_SAMPLING: dict[Dialect, tuple[str, ...]] = {
    "anthropic": ("temperature", "top_p", "top_k", "max_tokens", "thinking"),
    "openai": ("temperature", "top_p", "max_output_tokens", "reasoning", "text"),
    "gemini": (
        "temperature",
        "topP",
        "topK",
        "seed",
        "maxOutputTokens",
        "candidateCount",
        "thinkingConfig",
    ),
}

#: Gemini CLI's listing of the workspace in its context: the fixture's files (pinned by
#: the fixture's hash) and the CLI's own temporary files, which come and go in it.
_GEMINI_TREE = re.compile(
    r"(- \*\*Directory Structure:\*\*\n).*?(?=\n\n\n|\n<loaded_context>|\n</session_context>|\Z)",
    re.S,
)

#: What varies in every run (dates, ids), a run's own paths aside.
_GENERIC = Normaliser(Places())


@dataclass(frozen=True)
class Sent:
    """What one run's first model request gave the model, normalised."""

    model: str
    system_sha256: str
    #: The texts of the conversation before the prompt (the CLI's context).
    context_sha256: str
    tools: tuple[str, ...]
    sampling: dict[str, Any] = field(default_factory=dict)


def first_request(exchanges: Iterable[Exchange]) -> tuple[Request, dict[str, Any]] | None:
    """The conversation's first model request among ``exchanges``, read and as sent: a
    known dialect, answered (a status below 400), not a CLI's side question (a quota
    check, a session title)."""
    for exchange in exchanges:
        if exchange.status >= 400 or exchange.status == 0 or exchange.request.text is None:
            continue
        body = dialects.parse_body(exchange.request.text)
        request = dialects.request(exchange.method, exchange.path, body)
        if request.dialect != "other" and not request.helper:
            return request, as_dict(body)
    return None


def sent(request: Request, body: dict[str, Any], places: Places) -> Sent:
    """The pins of one run's first request (read, and its body as sent); ``places``:
    the run's own paths."""
    paths = places.replacements()
    # Gemini CLI keeps a project's memory in a directory named after its working
    # directory's last part: the case's own workspace name.
    name = PurePosixPath(places.workspace).name if places.workspace else ""
    project = re.compile(rf"/\.gemini/tmp/{re.escape(name)}(?![\w.-])") if name else None

    def sha(text: str) -> str:
        # The run's own paths first; what varies in every run is the same work for
        # every run of a configuration, done once (_normal_sha256).
        for path, placeholder in paths:
            text = text.replace(path, placeholder)
        if project is not None:
            text = project.sub(f"/.gemini/tmp/{WORKSPACE}", text)
        return _normal_sha256(text)

    texts = [text for message in request.messages for text in message.texts]
    # The last text of the first request is the prompt; what comes before it is context.
    return Sent(
        model=request.model,
        system_sha256=sha(request.system),
        context_sha256=sha("\n\0".join(texts[:-1])),
        tools=tuple(sorted(set(request.tools))),
        sampling=sampling(request.dialect, body),
    )


@functools.lru_cache(maxsize=64)
def _normal_sha256(text: str) -> str:
    """The sha256 of ``text``, its run's paths replaced already, with what varies in
    every run replaced (dates, ids) and Gemini CLI's listing of the workspace left out."""
    normal = _GENERIC.text(text)
    normal = _GEMINI_TREE.sub(r"\1<the workspace's files>", normal)
    return hashlib.sha256(normal.encode()).hexdigest()


def sampling(dialect: Dialect, body: dict[str, Any]) -> dict[str, Any]:
    """The sampling parameters a request body of ``dialect`` sent, by their names as
    sent; none sent: ``{}``."""
    if dialect == "gemini":
        body = as_dict(body.get("generationConfig"))
    found = {k: body[k] for k in _SAMPLING.get(dialect, ()) if body.get(k) is not None}
    if dialect == "anthropic":
        effort = as_dict(body.get("output_config")).get("effort")
        if effort is not None:
            found["effort"] = effort
    if dialect == "openai" and isinstance(found.get("text"), dict):
        # Its answer format is no sampling; its verbosity is.
        found["text"] = {k: v for k, v in found["text"].items() if k == "verbosity"}
        if not found["text"]:
            del found["text"]
    return dict(sorted(found.items()))


def read_run(directory: Path) -> Sent | str:
    """The pins of the run recorded in ``directory``; why there are none when its
    traffic was not recorded, does not read, or holds no model request."""
    path = exchange_file(directory)
    if path is None:
        return f"run {directory.name} has no recording of its model traffic"
    try:
        recorded = read(path)
    except RecordingError as exc:
        return str(exc)
    first = first_request(recorded.exchanges)
    if first is None:
        return f"the recording of run {directory.name} holds no model request"
    homes = recorded.header.get("homes") or []
    places = Places(str(recorded.header.get("workspace") or ""), tuple(str(h) for h in homes))
    return sent(*first, places)


def summary(
    runs: Sequence[Sent], unread: Sequence[str] = (), scripted: bool = False
) -> dict[str, Any]:
    """One variant's ``pins.sent`` entry over the runs read. Runs that disagree (a CLI
    that puts the case's own files in its context) give a hash over the distinct values
    and say how many there were; with no run read, ``not_recorded`` says why and there
    is no hash."""
    if not runs:
        why = unread[0] if unread else "no run's model requests were recorded"
        return {"runs": 0, "not_recorded": why, "scripted": scripted}
    systems = sorted({r.system_sha256 for r in runs})
    contexts = sorted({r.context_sha256 for r in runs})
    samplings = sorted({_canonical(r.sampling) for r in runs})
    out: dict[str, Any] = {
        "runs": len(runs),
        "scripted": scripted,
        "models": sorted({r.model for r in runs if r.model}),
        "system_prompt_sha256": combined(systems),
        "context_sha256": combined(contexts),
        "tools": sorted({t for r in runs for t in r.tools}),
        "sampling": json.loads(samplings[0]) if len(samplings) == 1 else None,
    }
    if len(systems) > 1:
        out["system_prompts"] = len(systems)
    if len(contexts) > 1:
        out["contexts"] = len(contexts)
    if len(samplings) > 1:
        out["samplings"] = [json.loads(s) for s in samplings]
    return out


def combined(hashes: Sequence[str]) -> str:
    """One hash: itself, or a sha256 over several distinct ones (sorted)."""
    if len(hashes) == 1:
        return hashes[0]
    return hashlib.sha256("\n".join(sorted(hashes)).encode()).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
