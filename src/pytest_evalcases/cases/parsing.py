"""The text of a case file to plain data, within bounds: JSON with the standard
library, YAML with PyYAML's C loader when it has one, either refusing what a case file
must not hold (duplicate keys, non-finite or huge numbers, lone surrogates, data that
expands past the limits of :mod:`~pytest_evalcases.cases.limits`). Errors are
:class:`~pytest_evalcases.errors.CaseFileError`, phrased by
:mod:`~pytest_evalcases.cases.diagnostics`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from pytest_evalcases.cases import limits
from pytest_evalcases.cases.diagnostics import (
    Source,
    empty_file_error,
    json_error,
    unbuildable,
    yaml_error,
)
from pytest_evalcases.cases.limits import digits, huge_int, shown
from pytest_evalcases.errors import CaseFileError

_Base: type[yaml.SafeLoader | yaml.CSafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Loader(_Base):  # type: ignore[valid-type,misc]
    """The C loader when PyYAML has it, refusing duplicate keys: YAML keeps the last
    one silently, and a second `pattern:` must not pass unnoticed."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        # PyYAML's constructors raise plain ValueError, KeyError and the like for a
        # scalar they cannot build (`2020-02-30`, `!!bool abc`, an integer of more
        # than 4,300 digits): made a YAMLError here, with the node's line.
        try:
            return super().construct_object(node, deep=deep)
        except yaml.YAMLError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, unbuildable(node, exc), node.start_mark
            ) from None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        if not isinstance(node, yaml.MappingNode):
            return super().construct_mapping(node, deep=deep)  # its error, with the line
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag.endswith(":str"):
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {shown(key_node.value)}", key_node.start_mark
                    )
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


def parse(path: Path, text: str) -> Any:
    """The data of a case file's ``text`` (JSON by its suffix, else YAML)."""
    if not text.strip():
        raise empty_file_error(path)
    if path.suffix == ".json":
        try:
            data = json.loads(
                text,
                object_pairs_hook=_unique_keys,
                parse_constant=_no_constant,
                parse_float=_finite_float,
                parse_int=_bounded_int,
            )
            _no_lone_surrogates(data)
            return data
        except json.JSONDecodeError as exc:
            raise json_error(path, exc) from None
        except _JSONRefused as exc:
            raise CaseFileError(str(path), exc.reason, line=exc.line(text)) from None
        except RecursionError:
            raise CaseFileError(str(path), "invalid JSON: nested too deeply") from None
    try:
        data = yaml.load(text, Loader=Loader)
    except yaml.YAMLError as exc:
        raise yaml_error(path, text, exc, utf8_offsets=_Base is not yaml.SafeLoader) from None
    _no_huge_ints(Source(path, text), data)
    return data


_CONTAINERS = (dict, list, tuple, set, frozenset)


def _parts(node: Any) -> Iterator[Any]:
    """What a container holds: a mapping's keys and values, a sequence's items."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield value
    else:
        yield from node


def _scalar_size(value: Any) -> int:
    return len(value) if isinstance(value, (str, bytes)) else 1


def _expanded_sizes(data: Any) -> dict[int, int]:
    """The size of every container in ``data`` (by ``id``) as :data:`limits.DATA_CHARS`
    counts it, at most one more than the limit.

    A YAML alias makes one object appear many times: sizes are counted per appearance,
    each container's once (an alias bomb costs what its distinct nodes cost), and a
    container inside itself is over the limit. No recursion: nesting may be deep."""
    cap = limits.DATA_CHARS + 1
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, ready = stack.pop()
        if not isinstance(node, _CONTAINERS):
            continue
        if ready:
            total = 0
            for part in _parts(node):
                total += sizes[id(part)] if isinstance(part, _CONTAINERS) else _scalar_size(part)
                if total >= cap:
                    total = cap
                    break
            sizes[id(node)] = total
        elif id(node) not in sizes:
            sizes[id(node)] = cap  # until it is counted: met again inside itself, it repeats
            stack.append((node, True))
            stack.extend(
                (part, False)
                for part in _parts(node)
                if isinstance(part, _CONTAINERS) and id(part) not in sizes
            )
    return sizes


def bounded(source: Source, data: Any) -> None:
    """Refuse a file whose data, aliases expanded, holds more than
    :data:`limits.DATA_CHARS`, naming the deepest field that alone does: before it is
    validated, and never stored in the parse cache."""
    sizes = _expanded_sizes(data)

    def size(node: Any) -> int:
        return sizes[id(node)] if isinstance(node, _CONTAINERS) else _scalar_size(node)

    if size(data) <= limits.DATA_CHARS:
        return
    loc: list[str | int] = []
    node, seen = data, set()
    while isinstance(node, (dict, list, tuple)) and id(node) not in seen:
        seen.add(id(node))
        located = node.items() if isinstance(node, dict) else enumerate(node)
        found = next(
            (
                (where, child)
                for where, child in located
                if isinstance(where, (str, int)) and size(child) > limits.DATA_CHARS
            ),
            None,
        )
        if found is None:
            break
        loc.append(found[0])
        node = found[1]
    raise source.error(
        loc,
        "value",
        ("holds" if loc else "the file holds")
        + f" more than {limits.DATA_CHARS:,} characters once its YAML aliases "
        f"(*name) are expanded; a case file may hold at most {limits.DATA_CHARS:,} "
        '(docs/case-format.md, "Limits")',
    )


class _JSONRefused(ValueError):
    """JSON that parses but that a case file must not hold; ``token`` finds its line."""

    def __init__(
        self, reason: str, token: str, nth: int = 1, *, regex: bool = False, key: bool = False
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.token = token
        self.nth = nth
        self.regex = regex
        self.key = key

    def line(self, text: str) -> int | None:
        """The 1-based line of the ``nth`` occurrence of the token (a regular expression
        with ``regex``; with ``key``, an object key however it is spelt: ``"b\\u0061re"``
        is ``"bare"``), when it is found."""
        if self.key:
            count = 0
            for key in _JSON_KEY.finditer(text):
                try:
                    spelt = json.loads(key.group())
                except ValueError:
                    continue
                if spelt == self.token:
                    count += 1
                    if count == self.nth:
                        return text.count("\n", 0, key.start()) + 1
            return None
        if self.regex:
            found = re.search(self.token, text)
            return text.count("\n", 0, found.start()) + 1 if found else None
        at = -1
        for _ in range(self.nth):
            at = text.find(self.token, at + 1)
            if at < 0:
                return None
        return text.count("\n", 0, at) + 1


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing a key given twice (``json`` would keep the last one
    silently; YAML files refuse it too)."""
    seen: dict[str, int] = {}
    for key, _ in pairs:
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            raise _JSONRefused(
                f"invalid JSON: duplicate key {shown(key)} in one object", key, 2, key=True
            )
    return dict(pairs)


#: A JSON string followed by a colon: an object key.
_JSON_KEY = re.compile(r'"(?:[^"\\]|\\.)*"(?=\s*:)')


def _bounded_int(text: str) -> int:
    """A JSON integer; one too long for Python to convert (more than 4,300 digits) is
    refused rather than raising ``ValueError`` from deep inside ``json``."""
    try:
        return int(text)
    except ValueError:
        raise _JSONRefused(
            f"invalid JSON: an integer of {len(text.lstrip('-')):,} digits is too large a number",
            text,
        ) from None


def _no_huge_ints(source: Source, data: Any) -> None:
    """Refuse an integer too large to be written in decimal (``0x`` and 5,000 digits):
    no message, report or results file could show it (Python refuses to convert one of
    more than 4,300 digits)."""
    stack: list[tuple[Any, list[str | int]]] = [(data, [])]
    seen: set[int] = set()
    while stack:
        item, loc = stack.pop()
        if isinstance(item, (dict, list)):
            if id(item) in seen:
                continue  # an alias met again: its place was already looked at
            seen.add(id(item))
            located = item.items() if isinstance(item, dict) else enumerate(item)
            for where, child in located:
                stack.append((child, [*loc, where] if isinstance(where, (str, int)) else loc))
        elif isinstance(item, int) and not isinstance(item, bool) and huge_int(item):
            raise source.error(
                loc,
                "value",
                f"an integer of about {digits(item):,} digits is too large a number",
            )


def _no_constant(name: str) -> Any:
    raise _JSONRefused(f"invalid JSON: {name} is not a JSON number", name)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _JSONRefused(f"invalid JSON: {text} is too large a number", text)
    return value


_SURROGATE_ESCAPE = r"\\u[dD][89a-fA-F]"


def _no_lone_surrogates(data: Any) -> None:
    """Refuse a string holding half of a UTF-16 pair (``"\\ud800"`` alone): it is not
    text, and every report that writes it as UTF-8 would fail."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise _JSONRefused(
                    "invalid JSON: a \\u escape is half of a UTF-16 surrogate pair, "
                    "not a character",
                    _SURROGATE_ESCAPE,
                    regex=True,
                ) from None
