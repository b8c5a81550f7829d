"""The built-in checks of what the CLI sent its model (``request_matches``,
``request_not_matches``): its requests as the proxy saw them, in order, each searched as
one text of its parts (docs/case-format.md, "What a request check reads"). Where the
requests are not known, or none was seen, there is no verdict: a ``RunError``, never a
pass because nothing was there to match.
"""

from __future__ import annotations

from pytest_evalcases.agents.base import ModelRequest, RequestPart
from pytest_evalcases.cases import schema
from pytest_evalcases.cases.registry import CheckContext, Outcome
from pytest_evalcases.errors import RunError
from pytest_evalcases.run.deadline import search, tick
from pytest_evalcases.run.quoting import line_of, quote, regex, shown
from pytest_evalcases.text import plural

#: Where a request check's error sends the reader.
_DOC = 'docs/case-format.md, "What a request check reads"'

Check = schema.RequestMatches | schema.RequestNotMatches


def _requests(check: Check, ctx: CheckContext) -> list[tuple[int, ModelRequest]] | Outcome:
    """The requests ``check`` reads, numbered from 1; a failed outcome when it names a
    request the run did not send, an error when the requests are not known."""
    agent = ctx.agent or "(unknown)"
    if ctx.requests is None:
        why = ctx.requests_unknown or (
            f"the {agent} agent does not talk to its model API through the plugin's proxy"
        )
        raise RunError(
            f"{check.type} needs the requests the CLI sent its model, and {why}, so the "
            f"check reached no verdict ({_DOC})",
            kind="no-transcript",
        )
    if not ctx.requests:
        raise RunError(
            f"{check.type}: the proxy saw no request of the {agent} agent to its model, so "
            f"the check reached no verdict ({_DOC})",
            kind="no-transcript",
        )
    numbered = list(enumerate(ctx.requests, 1))
    if check.request is not None:
        if check.request > len(numbered):
            return Outcome(
                False,
                f"request {check.request}: the CLI sent its model only "
                f"{plural(len(numbered), 'request')}",
            )
        numbered = [numbered[check.request - 1]]
    for number, request in numbered:
        if request.unreadable:
            raise RunError(
                f"{check.type}: request {number} cannot be read: {request.unreadable}, so "
                f"the check reached no verdict ({_DOC})",
                kind="no-transcript",
            )
    return numbered


def _where(check: Check) -> str:
    if check.request is not None:
        return f"request {check.request}"
    return "what the CLI sent its model"


def _found(request: ModelRequest, span: tuple[int, int]) -> tuple[RequestPart, int, str]:
    """The part of ``request`` where ``span`` starts, the line's number in it and the
    line."""
    start = 0
    for part in request.parts:
        end = start + len(part.text)
        if span[0] <= end:
            line, text = line_of(part.text, (span[0] - start, span[1] - start))
            return part, line, text
        start = end + 1
    # Only an empty match of a request with no text at all gets here.
    return RequestPart("no text", ""), 1, ""


def _matches(check: Check, ctx: CheckContext) -> tuple[Outcome | None, list[str]]:
    """Where ``check``'s pattern matched, one phrase per request that it matched (in
    order), or the outcome that ends the check before it searches."""
    numbered = _requests(check, ctx)
    if isinstance(numbered, Outcome):
        return numbered, []
    tick(f"searching {shown(check.pattern)} in the model requests")
    first = check.type == "request_matches"
    spans = search(regex(check.pattern), [r.text for _, r in numbered], first=first)
    hits = []
    for (number, request), span in zip(numbered, spans, strict=False):
        if span is not None:
            part, line, text = _found(request, span)
            hits.append(f"request {number}, {part.name}, line {line}: {quote(text)}")
    return None, hits


def _seen(check: Check, ctx: CheckContext) -> str:
    """What the requests searched held, in a few words."""
    requests = ctx.requests or ()
    if check.request is not None:
        said, parts = f"of {plural(len(requests), 'request')}; it held", requests[check.request - 1]
    else:
        said, parts = f"{plural(len(requests), 'request')}; the last held", requests[-1]
    messages = sum(part.name.startswith("message ") for part in parts.parts)
    held = [part.name for part in parts.parts if not part.name.startswith("message ")]
    held += [plural(messages, "message")] if messages else []
    return f"{said}: {', '.join(held) or 'nothing'}"


def request_matches(check: schema.RequestMatches, ctx: CheckContext) -> Outcome:
    ended, hits = _matches(check, ctx)
    if ended is not None:
        return ended
    if hits:
        return Outcome(True, f"pattern {shown(check.pattern)} found in {hits[0]}")
    return Outcome(
        False,
        f"pattern {shown(check.pattern)} not found in {_where(check)} ({_seen(check, ctx)})",
    )


def request_not_matches(check: schema.RequestNotMatches, ctx: CheckContext) -> Outcome:
    ended, hits = _matches(check, ctx)
    if ended is not None:
        return ended
    if not hits:
        return Outcome(
            True,
            f"pattern {shown(check.pattern)} absent from {_where(check)} ({_seen(check, ctx)})",
        )
    more = f" (and {plural(len(hits) - 1, 'more request')})" if len(hits) > 1 else ""
    return Outcome(
        False,
        f"pattern {shown(check.pattern)} must not match {_where(check)}; it matched "
        f"{hits[0]}{more}",
    )
