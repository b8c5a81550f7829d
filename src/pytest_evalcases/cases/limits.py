"""How large a case file and each of its fields may be (docs/case-format.md, "Limits").

Every field that reports, results files and pytest's cache copy is bounded here, once:
the schema declares the bounds (so ``evalcases schema`` shows them to editors), the
loader refuses a file over them before anything stores it, and messages quote a value
cut to :data:`SHOWN` characters. A YAML anchor repeated through aliases (``*name``)
counts as many times as it appears.
"""

from __future__ import annotations

#: Bytes of a case file (or ``task.md``); a larger one is refused. A larger file below
#: an evals root is parsed only to tell whether it is data (docs/case-format.md).
FILE_BYTES = 1_000_000
#: Characters of text (keys, strings, one per other value) of a case file's data once
#: its YAML aliases are expanded. A file without aliases holds no more than its size.
DATA_CHARS = 1_000_000
#: Characters of a case's or a check's ``id``.
ID_CHARS = 100
#: Tags of one case, and characters of one tag.
TAGS = 50
TAG_CHARS = 100
#: Characters of a one-line text: ``description``, ``quarantine``, ``task``.
LINE_CHARS = 2_000
#: Characters of a path: ``defends``, ``cwd`` and a check's ``path`` or ``file``.
PATH_CHARS = 4_096
#: Characters of a check's regular expression: ``pattern``, ``tool``, ``input``.
PATTERN_CHARS = 10_000
#: Characters of ``prompt`` (and ``task.md``), ``setup`` and a check's ``command``.
TEXT_CHARS = 100_000
#: Checks of one case.
CHECKS = 100
#: Turns of one case's ``script:``.
TURNS = 100
#: Characters of a value or a field name quoted in a message.
SHOWN = 80


#: Decimal digits Python converts an integer to or from (``sys.get_int_max_str_digits``).
INT_DIGITS = 4_300


def huge_int(value: int) -> bool:
    """Whether ``value`` has too many digits for Python to write it in decimal."""
    return abs(value).bit_length() > INT_DIGITS * 3.32


def digits(value: int) -> int:
    """About how many decimal digits ``value`` has, without converting it."""
    return int(abs(value).bit_length() * 0.30103) + 1


def shown(value: object) -> str:
    """``repr(value)``, cut to about :data:`SHOWN` characters with the full length
    said: a message never echoes a megabyte of a case file back."""
    if isinstance(value, int) and huge_int(value):
        return f"an integer of about {digits(value):,} digits"
    text = repr(value)
    if len(text) <= SHOWN:
        return text
    size = f" ({len(value):,} characters)" if isinstance(value, str) else ""
    return f"{text[: SHOWN - 3]}...{size}"


def shown_path(path: object) -> str:
    """A file's path as text every report, results file and cache can write: bytes of
    its name that are not UTF-8 (which Python keeps as lone surrogates) shown as
    ``\\xff`` escapes."""
    text = str(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def shown_name(name: str) -> str:
    """A field name as a field path shows it, cut like :func:`shown`."""
    return name if len(name) <= SHOWN else f"{name[: SHOWN - 3]}..."
