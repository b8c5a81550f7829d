"""Redaction of secrets from text before it is stored, reported or printed (docs/results.md).

Agents echo what they see, and a check message quotes the agent's answer; a results
file committed to a repository or uploaded as a CI artifact must not carry an API key.
:class:`Redactor` replaces anything shaped like a credential (a URL's password
included), and the values of environment variables whose names say they are secret or
that ``eval_redact_env`` names, with :data:`MARK`: in text, and
in every string of a results document (:meth:`Redactor.data`). It is the one way to
redact; :func:`redact` is a one-off ``Redactor(env)(text)``, and :func:`shorten` the
one way to cut text for a message, after redacting it.

A value is found as it is and as quoting and escaping leave it (Python's ``repr``,
JSON, XML and HTML, one of them or two in a row), and so is any piece of it
:data:`MIN_SECRET` characters long: a message that cuts the text it quotes, or a
process whose output was capped, leaves pieces of a secret, not the whole.
"""

from __future__ import annotations

import functools
import html
import itertools
import json
import os
import re
import sys
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal

MARK = "[REDACTED]"
#: The shortest secret value worth hiding, and the shortest piece of one hidden on its
#: own. Shorter values ("1", "true", a region name) would blank ordinary words all over
#: the report; eight characters of a random key take 48 bits off a search for it.
MIN_SECRET = 8
#: Characters read past a cut before redacting, so that a secret the cut would halve is
#: seen whole (credential shapes have no fixed length; the longest are some hundreds).
CUT_MARGIN = 2048

#: Shapes of well-known credentials. Prefixes stay readable so that a reader can tell
#: *which* secret leaked; the secret part goes.
_PATTERNS = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bxox[abpors]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"),
)
#: ``api_key=…``, ``token: …``, ``Authorization: Bearer …``: keep the name, drop a
#: value long enough to be a credential rather than a word.
_ASSIGNED = re.compile(
    r"(?i)(\b(?:[a-z_]*(?:key|token|secret|password|passwd))\b[\"']?\s*[=:]\s*[\"']?"
    r"|\bBearer\s+)"
    r"([A-Za-z0-9+/_.~\-]{16,}={0,2})"
)
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
#: The password of a URL: ``postgres://app:PASSWORD@db/x``; the scheme and user stay.
_URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:]*:)([^\s/?#@]+)(?=@)")

_SHAPES = re.compile("|".join(f"(?:{p.pattern})" for p in _PATTERNS))
# Each shape and assignment holds one of these words: text without any (most text)
# skips the two expressions above, which cost ten times as much as this search.
_SHAPE_HINT = re.compile(r"sk-|AIza|gh[pousr]_|github_pat_|xox|AKIA|ASIA|glpat-")
_ASSIGNED_HINT = re.compile(r"key|token|secret|passw|bearer")  # of the text in lower case
#: The two hints in UTF-8, for :meth:`Redactor.may_change`.
_SHAPE_HINT_BYTES = re.compile(_SHAPE_HINT.pattern.encode())
_ASSIGNED_HINT_BYTES = re.compile(_ASSIGNED_HINT.pattern.encode())

#: How a piece of a secret is first looked for: ``_PROBE`` characters at every
#: ``_STRIDE``-th position of the text. A piece of ``MIN_SECRET`` characters starts
#: ``_PROBE``-character windows at ``_STRIDE`` consecutive positions: one is read.
_STRIDE = 4
_PROBE = MIN_SECRET - _STRIDE + 1


def secret_values(env: Mapping[str, str] | None = None, names: Iterable[str] = ()) -> list[str]:
    """Values of environment variables whose names say they hold a secret, or that
    ``names`` names (``eval_redact_env``), and the passwords of the URLs in any
    variable (``DATABASE_URL``, as written and percent-decoded): longest first, so
    that a value containing another is replaced whole."""
    env = os.environ if env is None else env
    named = set(names)
    values = {value for name, value in env.items() if name in named or _SECRET_NAME.search(name)}
    for value in env.values():
        for match in _URL_PASSWORD.finditer(value):
            values |= {match.group(2), urllib.parse.unquote(match.group(2))}
    return sorted((v for v in values if len(v.strip()) >= MIN_SECRET), key=len, reverse=True)


def _repr_escaped(text: str) -> str:
    """``text`` as ``repr`` writes it inside single quotes (``'`` escaped), as it is
    when the quoted string holds both kinds of quote."""
    return repr(text + "'\"")[1:-4]


def _xml_attribute(text: str) -> str:
    """``text`` as ElementTree writes an attribute value (JUnit XML's ``message``)."""
    escaped = html.escape(text, quote=False).replace('"', "&quot;")
    return escaped.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#09;")


#: The escapes a secret may have been through before redaction sees it; each changes
#: characters one at a time.
_ESCAPES: tuple[Callable[[str], str], ...] = (
    lambda s: repr(s)[1:-1],
    _repr_escaped,
    lambda s: json.dumps(s)[1:-1],
    lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    lambda s: html.escape(s, quote=False),
    html.escape,
    lambda s: html.escape(s, quote=False).replace('"', "&quot;").replace("'", "&apos;"),
    _xml_attribute,
)


def _forms(value: str) -> set[str]:
    """``value`` as it is and as one escape, or two in a row, leave it."""
    once = {escape(value) for escape in _ESCAPES}
    twice = {escape(form) for form in once for escape in _ESCAPES}
    return {value} | once | twice


class _Pieces:
    """Finds every piece ``MIN_SECRET`` characters long of the forms of secret values.

    A set lookup every ``_STRIDE`` characters tells whether a text may hold a piece at
    all (most text holds none); only then is it read position by position.
    """

    def __init__(self, values: Iterable[str]) -> None:
        self.grams: set[str] = set()
        self.probes: set[str] = set()
        #: The four-byte runs of the forms' UTF-8, as native integers: UTF-8 that holds a
        #: piece (eight bytes or more) holds one of them at a multiple of four.
        self.quads: set[int] = set()
        for form in itertools.chain.from_iterable(_forms(v) for v in values):
            self.grams.update(_windows(form, MIN_SECRET))
            self.probes.update(_windows(form, _PROBE))
            encoded = form.encode("utf-8", "surrogateescape")
            self.quads.update(
                int.from_bytes(encoded[i : i + 4], sys.byteorder) for i in range(len(encoded) - 3)
            )

    def may_hold(self, data: bytes) -> bool:
        """Whether ``data`` may hold a piece: ``False`` is certain, at C speed."""
        if not self.quads:
            return False
        whole = memoryview(data)[: len(data) // 4 * 4].cast("I")
        return not self.quads.isdisjoint(whole)

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """The stretches of ``text`` covered by pieces, merged, in order."""
        probes = self.probes
        if not probes or not any(
            text[i : i + _PROBE] in probes for i in range(0, len(text) - _PROBE + 1, _STRIDE)
        ):
            return
        span: tuple[int, int] | None = None
        for i in range(len(text) - MIN_SECRET + 1):
            if text[i : i + MIN_SECRET] not in self.grams:
                continue
            if span is not None and i <= span[1]:
                span = (span[0], i + MIN_SECRET)
                continue
            if span is not None:
                yield span
            span = (i, i + MIN_SECRET)
        if span is not None:
            yield span


def _windows(text: str, size: int) -> Iterator[str]:
    return (text[i : i + size] for i in range(len(text) - size + 1))


def _is_path(value: str) -> bool:
    """A value that names an existing file is a pointer to a secret, not one
    (``GOOGLE_APPLICATION_CREDENTIALS``): hidden whole, never piece by piece, which
    would blank every path that shares a directory with it."""
    return os.path.isabs(value) and os.path.exists(value)


@functools.lru_cache(maxsize=8)
def _compiled(values: tuple[str, ...]) -> tuple[_Pieces, tuple[str, ...]]:
    """The piece finder of the values and the forms of the path values, longest first:
    made once per set of values, for every ``Redactor`` of the same environment."""
    paths = [v for v in values if _is_path(v)]
    whole = sorted({f for v in paths for f in _forms(v)}, key=len, reverse=True)
    return _Pieces(v for v in values if v not in paths), tuple(whole)


class Redactor:
    """Redacts with the secret values of one environment, read once.

    Reading the environment costs more than redacting a short string, and redaction
    runs on every string of every record: the session keeps one ``Redactor``.
    """

    def __init__(self, env: Mapping[str, str] | None = None, names: Iterable[str] = ()) -> None:
        self.values = tuple(secret_values(env, names))
        self._pieces, self._whole = _compiled(self.values)

    def __call__(self, text: str) -> str:
        """``text`` with credentials and secret values (and pieces of them) replaced
        by ``[REDACTED]``."""
        if not text:
            return text
        for form in self._whole:
            if form in text:
                text = text.replace(form, MARK)
        parts: list[str] = []
        end = 0
        for start, stop in self._pieces.spans(text):
            parts += (text[end:start], MARK)
            end = stop
        if parts:
            text = "".join(parts) + text[end:]
        if _SHAPE_HINT.search(text):
            text = _SHAPES.sub(MARK, text)
        if _ASSIGNED_HINT.search(text.lower()):
            text = _ASSIGNED.sub(lambda m: m.group(1) + MARK, text)
        if "://" in text:
            text = _URL_PASSWORD.sub(lambda m: m.group(1) + MARK, text)
        return text

    def may_change(self, data: bytes) -> bool:
        """Whether redacting ``data`` (UTF-8, or bytes that ``surrogateescape`` keeps) may
        change it: ``False`` is certain, and costs a fraction of redacting (some 70 ms
        a megabyte of code), so that a kept workspace's files are redacted only where
        they may hold something."""
        if any(form.encode("utf-8", "surrogateescape") in data for form in self._whole):
            return True
        return (
            b"://" in data
            or bool(_SHAPE_HINT_BYTES.search(data))
            or bool(_ASSIGNED_HINT_BYTES.search(data.lower()))
            or self._pieces.may_hold(data)
        )

    def data(self, data: Any) -> Any:
        """Every string inside JSON-like ``data`` (dicts, lists, scalars) redacted."""
        if isinstance(data, str):
            return self(data)
        if isinstance(data, dict):
            return {key: self.data(value) for key, value in data.items()}
        if isinstance(data, (list, tuple)):
            return [self.data(value) for value in data]
        return data


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with credentials and secret environment values replaced by ``[REDACTED]``
    (reads the environment on every call: keep a :class:`Redactor` for many strings)."""
    return Redactor(env)(text)


#: The process environment's redactor, and the environment it was made from.
_ENVIRONMENT: tuple[dict[object, object], Redactor] | None = None


def environment_redactor() -> Redactor:
    """A :class:`Redactor` of the process environment as it is now: made again only when
    the environment changed. Every check quotes what it found through one, and reading
    the environment's secrets cost a millisecond a quote, more than the check."""
    global _ENVIRONMENT
    key = _environment_key()
    cached = _ENVIRONMENT
    if cached is not None and cached[0] == key:
        return cached[1]
    redactor = Redactor()
    _ENVIRONMENT = (key, redactor)
    return redactor


def _environment_key() -> dict[object, object]:
    """The process environment, as cheaply as it can be read, to tell whether it changed.

    ``os.environ`` keeps the variables encoded in a dictionary of its own, which is
    copied and compared in C; reading them through ``os.environ`` decodes each one, a
    tenth of a millisecond a quote. pytest names the running test in
    ``PYTEST_CURRENT_TEST``, a new value every phase of every test: it counts only
    where it could hold a URL's password."""
    environ = os.environ
    raw = getattr(environ, "_data", None)
    key: dict[object, object] = {}
    key.update(raw if isinstance(raw, dict) else environ)
    name = environ.encodekey("PYTEST_CURRENT_TEST") if raw is not None else "PYTEST_CURRENT_TEST"
    value = key.get(name)
    if value is not None:
        text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
        if "://" not in text:
            del key[name]
    return key


def shorten(
    text: str,
    limit: int,
    *,
    keep: Literal["head", "tail"] = "head",
    redactor: Callable[[str], str] | None = None,
) -> str:
    """``text`` redacted, then cut to its first (``head``) or last (``tail``) ``limit``
    characters with an ellipsis where it was cut.

    Redacting first is what hides a secret that the cut would halve, or whose quoting
    would escape it; a ``[REDACTED]`` that the cut would halve is kept whole. Only
    :data:`CUT_MARGIN` characters past the cut are read, so that a long answer costs no
    more than a short one. ``redactor`` defaults to the environment's.
    """
    redactor = redactor or environment_redactor()
    window = limit + CUT_MARGIN
    if keep == "head":
        text = redactor(text[:window]) + ("…" if len(text) > window else "")
        if len(text) <= limit:
            return text
        mark = text.find(MARK, max(0, limit - len(MARK) + 1), limit + len(MARK) - 1)
        return text[: mark + len(MARK) if mark != -1 else limit] + "…"
    text = ("…" if len(text) > window else "") + redactor(text[-window:])
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    mark = text.rfind(MARK, max(0, cut - len(MARK) + 1), cut + len(MARK) - 1)
    return "…" + text[mark if mark != -1 else cut :]
