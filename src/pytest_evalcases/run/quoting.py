"""How checks quote what they saw and search text: short redacted quotes, patterns
shown as the user wrote them, searches within the check's deadline."""

from __future__ import annotations

import re
from typing import Literal

from pytest_evalcases.redact import shorten
from pytest_evalcases.run.deadline import search, tick

QUOTE_LIMIT = 160


def quote(text: str, limit: int = QUOTE_LIMIT, *, keep: Literal["head", "tail"] = "head") -> str:
    """``text`` as a short repr, cut with an ellipsis (its start, or with ``tail`` its
    end): redacted before it is cut or escaped, which would leave pieces of a secret
    that redaction no longer finds (docs/results.md, "Secrets")."""
    return repr(shorten(text, limit, keep=keep))


def shown(pattern: str) -> str:
    """A regular expression as the user wrote it: quoted, backslashes not doubled."""
    return f"'{pattern}'"


def line_of(text: str, span: tuple[int, int]) -> tuple[int, str]:
    """The 1-based number and the text of the line where ``span`` starts."""
    start = text.rfind("\n", 0, span[0]) + 1
    end = text.find("\n", span[1])
    return text.count("\n", 0, span[0]) + 1, text[start : end if end != -1 else None]


def regex(pattern: str) -> re.Pattern[str]:
    """A check's pattern, compiled: ``^`` and ``$`` match at each line."""
    return re.compile(pattern, re.MULTILINE)


def first_match(pattern: str, text: str, where: str) -> tuple[int, int] | None:
    """The first match of ``pattern`` in ``text``, within the check's deadline."""
    tick(f"searching {shown(pattern)} in {where}")
    return search(regex(pattern), [text])[0]
