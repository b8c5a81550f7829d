"""Redaction of secrets from text before it is stored, reported or printed (docs/results.md).

Agents echo what they see, and a check message quotes the agent's answer; a results
file committed to a repository or uploaded as a CI artifact must not carry an API key.
:class:`Redactor` replaces anything shaped like a credential, and the literal values of
environment variables whose names say they are secret, with :data:`MARK`: in text, and
in every string of a results document (:meth:`Redactor.data`). It is the one way to
redact; :func:`redact` is a one-off ``Redactor(env)(text)``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

MARK = "[REDACTED]"

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
#: Shorter values ("1", "true", a region name) are not worth hiding and would blank
#: ordinary words all over the report.
_MIN_ENV_VALUE = 8


_SHAPES = re.compile("|".join(f"(?:{p.pattern})" for p in _PATTERNS))


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names say they hold a secret,
    longest first (so that a value containing another is replaced whole)."""
    env = os.environ if env is None else env
    values = {
        value
        for name, value in env.items()
        if _SECRET_NAME.search(name) and len(value.strip()) >= _MIN_ENV_VALUE
    }
    return sorted(values, key=len, reverse=True)


class Redactor:
    """Redacts with the secret values of one environment, read once.

    Reading the environment costs more than redacting a short string, and redaction
    runs on every string of every record: the session keeps one ``Redactor``.
    """

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.values = tuple(secret_values(env))

    def __call__(self, text: str) -> str:
        """``text`` with credentials and secret values replaced by ``[REDACTED]``."""
        if not text:
            return text
        for value in self.values:
            if value in text:
                text = text.replace(value, MARK)
        text = _SHAPES.sub(MARK, text)
        return _ASSIGNED.sub(lambda m: m.group(1) + MARK, text)

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
