"""Turning what is wrong with a case file into "file:line: field: message" errors.

The loader parses and validates; when the bytes are not UTF-8, the text is not valid
YAML or JSON, or pydantic rejects the data, this module phrases the problem for the
user and finds the line it is on. Lines come from the YAML node tree, composed only
when an error needs one (JSON is valid YAML, so the same tree serves both formats).
"""

from __future__ import annotations

import difflib
import errno
import json
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pytest_evalcases.cases import fields, limits, schema
from pytest_evalcases.cases.limits import shown, shown_name, shown_path
from pytest_evalcases.errors import CaseFileError

# Composing a node tree constructs no values, so the plain C loader gives the same
# lines as the loader's duplicate-key-refusing subclass.
_Composer: type[yaml.SafeLoader | yaml.CSafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: How many problems of one file the error message lists.
MAX_PROBLEMS = 5


def read_text(path: Path) -> str:
    """The file's text; an unreadable, non-UTF-8, too large or not regular file (a
    FIFO, a device, a dangling symlink) is a :class:`CaseFileError`.

    Only a regular file is opened: opening a FIFO would wait for a writer, and a
    device has no end. The check is made again on the open file, which is opened
    without waiting, in case the path changed in between."""
    name = shown_path(path)
    if name != str(path):
        # Not opened either: no cache, report or results file could write its name.
        raise CaseFileError(
            name,
            "the file name is not UTF-8 (its other bytes are shown as \\x escapes); "
            "rename the file",
        )
    try:
        info = os.stat(path)
    except OSError as exc:
        raise CaseFileError(str(path), _unreachable(path, exc)) from None
    _regular(path, info)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as file:
            _regular(path, os.fstat(file.fileno()))
            raw = file.read(limits.FILE_BYTES + 1)
    except OSError as exc:
        raise CaseFileError(str(path), f"cannot read the file: {exc.strerror}") from None
    if len(raw) > limits.FILE_BYTES:
        raise _too_large(path, len(raw))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise CaseFileError(
            str(path),
            f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start}; "
            "save the file as UTF-8",
            line=line,
        ) from None


def _unreachable(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link that loops: it never reaches a file"
    if exc.errno == errno.ENOENT and os.path.islink(path):
        return f"a symbolic link to {shown(os.readlink(path))}, which does not exist"
    return f"cannot read the file: {exc.strerror}"


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _regular(path: Path, info: os.stat_result) -> None:
    """Refuse what is not a regular file, or one over :data:`limits.FILE_BYTES`."""
    if stat.S_ISREG(info.st_mode):
        if info.st_size > limits.FILE_BYTES:
            raise _too_large(path, info.st_size)
        return
    what = next((name for test, name in _KINDS if test(info.st_mode)), "a special file")
    link = (
        f" (through the symbolic link to {shown(os.readlink(path))})" if path.is_symlink() else ""
    )
    raise CaseFileError(
        str(path),
        f"not a regular file but {what}{link}; a case file must be a regular file "
        "(this one was not opened)",
    )


def _too_large(path: Path, size: int) -> CaseFileError:
    return CaseFileError(
        str(path),
        f"the file is {size:,} bytes; a case file may be at most {limits.FILE_BYTES:,} "
        'bytes (docs/case-format.md, "Limits")',
        line=1,
    )


def empty_file_error(path: Path) -> CaseFileError:
    """The error for a file with nothing but whitespace in it."""
    return CaseFileError(
        str(path), "the file is empty; expected a case (id, defends, prompt, checks)", line=1
    )


def json_error(path: Path, exc: json.JSONDecodeError) -> CaseFileError:
    """The error for a ``.json`` case file that is not JSON."""
    return CaseFileError(
        str(path), f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno
    )


def yaml_error(
    path: Path, text: str, exc: yaml.YAMLError, *, utf8_offsets: bool = False
) -> CaseFileError:
    """The error for a file that is not YAML: PyYAML's words, its line and column, and
    a hint when the culprit is a tab. ``utf8_offsets``: a reader error's position
    counts bytes of the UTF-8 text (PyYAML's C parser), not characters."""
    if isinstance(exc, yaml.reader.ReaderError):
        return _reader_error(path, text, exc, utf8_offsets)
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    opened = _unclosed_quote(text, exc)
    if opened is not None and mark is not None:
        # Where the parser gave up is where the text ran out, or lines later: the
        # mistake is the quote, so its line leads and the parser's stays in the text.
        start, ran_out = opened
        where = f"line {mark.line + 1}, column {mark.column + 1}"
        if ran_out:
            what = f"is never closed ({problem} at {where})"
        else:
            what = (
                f"runs on over the lines after it until a quote on line {mark.line + 1} "
                f"closes it ({problem} at {where}): is its closing quote missing?"
            )
        return CaseFileError(
            str(path),
            f"invalid YAML: the quoted string opened at column {start.column + 1} {what}",
            line=start.line + 1,
        )
    detail = f"{context}, {problem}" if context else problem
    line = mark.line + 1 if mark is not None else None
    column = f" (column {mark.column + 1})" if mark is not None else ""
    hint = ""
    if mark is not None and _char_at(text, mark.line, mark.column) == "\t":
        hint = "; it is a tab: YAML indents with spaces only"
    elif mark is not None and "unknown escape character" in problem:
        hint = _escape_hint(text, mark)
    field = ""
    if isinstance(exc, yaml.constructor.ConstructorError) and mark is not None:
        field = field_path(_loc_at(text, mark.line, mark.column))
    return CaseFileError(str(path), f"invalid YAML: {detail}{column}{hint}", line=line, field=field)


#: A line that reads as a mapping key (`checks:`, `  pattern: x`) or a list item: inside a
#: quoted string it says the string swallowed the lines after its own.
_SWALLOWED = re.compile(r"^\s*(?:[A-Za-z_][\w-]*:(?:\s|$)|- )", re.MULTILINE)


def _unclosed_quote(text: str, exc: yaml.YAMLError) -> tuple[yaml.Mark, bool] | None:
    """Where the quoted string opens that caused ``exc``, when one was left open, and
    whether the text ran out inside it: either the scanner reached the end of the text
    (or a document marker) inside the string, or the string ran on over lines that read
    as keys or list items until a later quote closed it, and the parser failed right
    after that quote. ``None`` otherwise."""
    context = getattr(exc, "context", None) or ""
    problem = getattr(exc, "problem", None) or ""
    if isinstance(exc, yaml.scanner.ScannerError) and "quoted scalar" in context:
        opened = getattr(exc, "context_mark", None)
        ran_out = "end of stream" in problem or "document" in problem
        return (opened, True) if ran_out and opened is not None else None
    mark = getattr(exc, "problem_mark", None)
    if not isinstance(exc, yaml.parser.ParserError) or mark is None:
        return None
    last: yaml.Token | None = None
    try:
        for token in yaml.scan(text, Loader=_Composer):
            if (token.end_mark.line, token.end_mark.column) > (mark.line, mark.column):
                break
            last = token
    except yaml.YAMLError:
        pass
    if not (
        isinstance(last, yaml.ScalarToken)
        and last.style in ('"', "'")
        and last.start_mark.line < last.end_mark.line == mark.line
    ):
        return None
    swallowed = text.splitlines()[last.start_mark.line + 1 : last.end_mark.line + 1]
    return (last.start_mark, False) if _SWALLOWED.search("\n".join(swallowed)) else None


def _loc_at(text: str, line: int, column: int) -> list[str | int]:
    """The field path of the value that starts at ``line`` and ``column`` (0-based),
    for a value the YAML could be read into nodes but not built from; ``[]`` when no
    value starts there."""
    try:
        root = yaml.compose(text, Loader=_Composer)
    except yaml.YAMLError:
        return []
    stack: list[tuple[yaml.Node, list[str | int]]] = [(root, [])] if root is not None else []
    seen: set[int] = set()
    while stack:
        node, loc = stack.pop()
        if id(node) in seen:
            continue  # an alias met again
        seen.add(id(node))
        mark = node.start_mark
        if loc and (mark.line, mark.column) == (line, column):
            return loc
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    stack.append((value, [*loc, key.value]))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, [*loc, index]) for index, item in enumerate(node.value))
    return []


def _reader_error(
    path: Path, text: str, exc: yaml.reader.ReaderError, utf8_offsets: bool
) -> CaseFileError:
    """A character YAML does not accept (a control character, a NUL, U+FFFE): PyYAML
    gives its position in the text only, from which its line and column follow."""
    before = (
        text.encode("utf-8", "surrogatepass")[: exc.position].decode("utf-8", "replace")
        if utf8_offsets
        else text[: exc.position]
    )
    line = before.count("\n") + 1
    column = len(before) - (before.rfind("\n") + 1) + 1
    character = exc.character
    if isinstance(character, int):
        what = f"unacceptable character U+{character:04X}"
        hint = (
            "; remove it, or write it as an escape in a double-quoted string "
            f'("\\u{character:04X}")'
        )
    else:
        what, hint = f"unacceptable byte {character!r}", ""
    return CaseFileError(
        str(path), f"invalid YAML: {what}: {exc.reason} (column {column}){hint}", line=line
    )


def unbuildable(node: yaml.Node, exc: Exception) -> str:
    """Why PyYAML could not build the value of ``node`` (a date that does not exist,
    ``!!bool abc``, an integer of more than 4,300 digits), for a YAML error."""
    tag = str(node.tag).rsplit(":", 1)[-1]
    value = node.value if isinstance(node, yaml.ScalarNode) else None
    what = f"{shown(value)} is not a valid {tag}" if value is not None else f"not a valid {tag}"
    if isinstance(exc, ValueError) and "digits" in str(exc):
        return f"{what}: an integer of more than {limits.INT_DIGITS:,} digits is too large"
    if isinstance(exc, ValueError) and str(exc):
        return f"{what} ({exc})"
    return what


def _escape_hint(text: str, mark: yaml.Mark) -> str:
    """What to write instead of a backslash that starts no YAML escape in a
    double-quoted string (``"\\s"`` in a regular expression). PyYAML points at the
    backslash (its C parser) or at the character after it."""
    line, column = mark.line, mark.column
    if _char_at(text, line, column) != "\\":
        column -= 1
    after = _char_at(text, line, column + 1)
    escape = "\\" + after if _char_at(text, line, column) == "\\" and after else "\\"
    return (
        f"; {escape} is no escape in a double-quoted YAML string: write the backslash "
        f"twice (\"\\{escape}\") or use single quotes ('{escape}')"
    )


def _char_at(text: str, line: int, column: int) -> str:
    lines = text.splitlines()
    if 0 <= line < len(lines) and 0 <= column < len(lines[line]):
        return lines[line][column]
    return ""


def kind_of(value: Any) -> str:
    """What ``value`` is, in the words of a message ("a list", "nothing (null)")."""
    if value is None:
        return "nothing (null)"
    return {
        list: "a list",
        str: "a string",
        int: "a number",
        float: "a number",
        bool: "a boolean",
    }.get(type(value), type(value).__name__)


def field_path(loc: Sequence[str | int]) -> str:
    """``['checks', 2, 'pattern']`` as ``checks[2].pattern``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            name = shown_name(part)
            out += f".{name}" if out else name
    return out


class Source:
    """A file's text, for finding the line of a field path and phrasing errors."""

    def __init__(self, path: Path, text: str | None) -> None:
        self.path = path
        #: ``None`` for a file served from the parse cache, read only if a line is needed.
        self.text = text
        self._root: yaml.Node | bool | None = False

    def _tree(self) -> yaml.Node | None:
        if self._root is False:
            if self.text is None:
                self.text = read_text(self.path)
            try:
                self._root = yaml.compose(self.text, Loader=_Composer)
            except yaml.YAMLError:
                self._root = None
        assert not isinstance(self._root, bool)
        return self._root

    def line_of(self, loc: Sequence[str | int], *, key: bool = False) -> int:
        """1-based line of the node at ``loc``: the deepest one that exists."""
        node = self._tree()
        if node is None:
            return 1
        line = node.start_mark.line
        for part in loc:
            child: yaml.Node | None = None
            key_node: yaml.Node | None = None
            if isinstance(node, yaml.MappingNode) and isinstance(part, str):
                for k, v in node.value:
                    if isinstance(k, yaml.ScalarNode) and k.value == part:
                        key_node, child = k, v
                        break
            elif (
                isinstance(node, yaml.SequenceNode)
                and isinstance(part, int)
                and 0 <= part < len(node.value)
            ):
                child = node.value[part]
            if child is None:
                break
            node = child
            line = (key_node if key and key_node is not None else child).start_mark.line
        return line + 1

    def error(self, loc: Sequence[str | int], kind: str, message: str) -> CaseFileError:
        """An error at ``loc``; ``kind`` ``extra`` points at the key rather than its value."""
        line = self.line_of(loc, key=kind == "extra")
        return CaseFileError(str(self.path), message, line=line, field=field_path(loc))

    def validation_error(
        self, exc: ValidationError, prefix: Sequence[str | int], data: Any, *, task: bool = False
    ) -> CaseFileError:
        """One error for the file, listing up to ``MAX_PROBLEMS`` problems; ``task``: the
        data is a task directory's ``checks.yaml`` without its checks."""
        problems: list[Problem] = []
        for err in exc.errors(include_url=False):
            loc, missing = data_loc(data, err["loc"])
            kind = err["type"]
            if kind in ("union_tag_invalid", "union_tag_not_found"):
                loc = [*loc, "type"]  # the check's `type` is what is wrong or missing
            full = [*prefix, *loc]
            line = self.line_of(full, key=kind == "extra_forbidden")
            message = phrase(err, missing, data, loc, task=task)
            problems.append(Problem(kind, tuple(full), line, message))
        problems = typos_first(problems)
        first = problems[0]
        lines = [first.message]
        for problem in problems[1:MAX_PROBLEMS]:
            lines.append(f"line {problem.line}: {field_path(problem.loc)}: {problem.message}")
        if len(problems) > MAX_PROBLEMS:
            lines.append(f"... and {len(problems) - MAX_PROBLEMS} more problems")
        return CaseFileError(
            str(self.path), "\n".join(lines), line=first.line, field=field_path(first.loc)
        )


@dataclass(frozen=True)
class Problem:
    """One validation problem: pydantic's error type, where it is, and what to say."""

    kind: str
    loc: tuple[str | int, ...]
    line: int
    message: str


def typos_first(problems: list[Problem]) -> list[Problem]:
    """A misspelt field is both unknown and the missing field it meant to be; the
    unknown one says more ("did you mean ..."), so it leads and its twin goes."""
    unknown = [p for p in problems if p.kind == "extra_forbidden"]
    explained = {
        id(m)
        for m in problems
        if m.kind == "missing"
        for u in unknown
        if u.loc[:-1] == m.loc[:-1]
        and difflib.get_close_matches(str(u.loc[-1]), [str(m.loc[-1])], n=1)
    }
    kept = [p for p in problems if id(p) not in explained]
    # Stable sort: unknown fields first, then the rest in pydantic's (field) order.
    return sorted(kept, key=lambda p: p.kind != "extra_forbidden")


def data_loc(data: Any, loc: Sequence[str | int]) -> tuple[list[str | int], bool]:
    """Translate a pydantic ``loc`` into a path through ``data``.

    Pydantic inserts the union tag (``checks.2.output_matches.pattern``) and validator
    names; drop them. ``missing`` tells whether the last part names an absent field.
    """
    out: list[str | int] = []
    node = data
    for part in loc:
        if isinstance(node, list) and isinstance(part, int):
            out.append(part)
            node = node[part] if 0 <= part < len(node) else None
        elif isinstance(node, dict) and part in node:
            out.append(part)
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str):
            if node.get("type") == part or "[" in part:
                continue  # a union tag or a validator name
            out.append(part)
            return out, True
    return out, False


def phrase(err: Any, missing: bool, data: Any, loc: list[str | int], *, task: bool = False) -> str:
    """The message for one pydantic error ``err`` at ``loc`` in ``data`` (a task
    directory's ``checks.yaml`` with ``task``): what the field expects, in the words of
    the case format rather than pydantic's."""
    kind = err["type"]
    msg = str(err["msg"])
    if kind == "missing":
        name = str(loc[-1]) if loc else ""
        parent = _at(data, loc[:-1])
        hints = _CHECK_HINTS if isinstance(parent, dict) and "type" in parent else _CASE_HINTS
        expected = hints.get(name)
        return "required field is missing" + (f"; expected {expected}" if expected else "")
    if kind == "extra_forbidden":
        name = str(loc[-1]) if loc else "?"
        parent = _at(data, loc[:-1])
        top = len(loc) == 1
        if top and task and name in _CASE_FIELDS:
            return f"unknown field {shown(name)}: " + _TASK_HEADER_NOTES.get(
                name, f"a field of a case file, not of a task directory's checks.yaml {_TASK_HAS}"
            )
        if top and not task and name in _TASK_FIELDS:
            return (
                f"unknown field {shown(name)}: a field of a task directory's checks.yaml, not "
                "of a case file; a case file says what to do in `prompt` and what must "
                "hold in `description`"
            )
        known = _TASK_FIELDS if top and task else _known_fields(parent)
        # Never the same word: a field this place does not take is not its own typo.
        hint = difflib.get_close_matches(name, [k for k in known if k != name], n=1)
        return f"unknown field {shown(name)}" + (f"; did you mean {hint[0]!r}?" if hint else "")
    if kind == "union_tag_invalid":
        ctx = err.get("ctx", {})
        tag = ctx.get("tag", "?")
        expected = str(ctx.get("expected_tags", "")).replace("'", "")
        names = [n.strip() for n in expected.split(",")]
        hint = difflib.get_close_matches(str(tag), names, n=1)
        return (
            f"unknown check type {shown(tag)}"
            + (f"; did you mean {hint[0]!r}?" if hint else "")
            + f" (known types: {', '.join(names)})"
        )
    if kind == "union_tag_not_found":
        return "a check needs a `type` field (e.g. output_not_matches, file_exists)"
    value = err.get("input")
    ctx = err.get("ctx", {})
    if kind == "string_too_long" and isinstance(value, str):
        return (
            f"too long: {len(value):,} characters, at most {ctx.get('max_length', 0):,} "
            '(docs/case-format.md, "Limits")'
        )
    if kind == "too_long" and isinstance(value, (list, tuple)):
        return (
            f"too many items: {len(value):,}, at most {ctx.get('max_length', 0):,} "
            '(docs/case-format.md, "Limits")'
        )
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected a mapping of fields (`name: value` lines), got {kind_of(value)}"
    if kind == "too_short" and ctx.get("min_length") == 1:
        return "expected a non-empty list (at least 1 item), got an empty one"
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    elif kind == "string_pattern_mismatch" and loc and loc[-1] == "id":
        guess = fields.kebab_case(value) if isinstance(value, str) else None
        meant = f"; did you mean {guess!r}?" if guess is not None else ""
        return f"{fields.KEBAB_RULE} (got {shown(value)}){meant}"
    elif kind in _BOUNDS and msg.startswith("Input should be "):
        msg = "expected a number " + msg[len("Input should be ") :]
    elif msg.startswith("Input should be "):
        # pydantic's wording names the input; ours says what the field expects.
        msg = "expected " + msg[len("Input should be ") :]
    if kind not in ("value_error",) and not isinstance(value, (dict, list)):
        msg += f" (got {shown(value)})"
    if kind == "literal_error" and isinstance(value, str):
        # `tool-misuse` for `tool_misuse`, `critcal` for `critical`: one of the names.
        names = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        hint = difflib.get_close_matches(value.replace("-", "_"), names, n=1)
        msg += f"; did you mean {hint[0]!r}?" if hint else ""
    return msg


_BOUNDS = ("greater_than", "greater_than_equal", "less_than", "less_than_equal")

#: What a missing required field should hold, for the message.
_CASE_HINTS = {
    "id": "a kebab-case id, unique in the suite (e.g. the file stem)",
    "defends": "the rule, skill, hook or config file the case protects (a path)",
    "checks": "a non-empty list of checks, each with a `type`",
}
_CHECK_HINTS = {
    "id": "a check id (the task-directory format names every check)",
    "pattern": "a regular expression",
    "path": "a path relative to the workspace",
    "command": "a shell command",
    "tool": "a regular expression matched against the tool name or kind",
}


#: The top-level fields of a case file, and of a task directory's ``checks.yaml``.
_CASE_FIELDS = (*schema.CaseModelBase.model_fields, "checks")
_TASK_FIELDS = (*schema.TaskFileBase.model_fields, "checks")
_TASK_HAS = f"(its fields: {', '.join(_TASK_FIELDS)})"
#: What a case file's field is in a task directory, where it is not a field.
_TASK_HEADER_NOTES = {
    "id": "a task directory's case id is the name of its directory; remove `id:` "
    "(rename the directory to change the id)",
    "prompt": "a task directory's prompt is the text of its task.md; move it there",
    "severity": "in a task directory each check has its own severity (HIGH, MEDIUM or "
    "LOW); the case takes the highest",
}


def _at(data: Any, loc: Sequence[str | int]) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _known_fields(parent: Any) -> list[str]:
    """Field names a misspelt key may have meant, by where it stands: a check's own
    fields (third-party check types included, as they subclass ``CheckModel``)."""
    if isinstance(parent, dict) and "type" in parent:
        models = _check_models()
        exact = [m for m in models if parent["type"] in _type_tags(m)]
        return sorted({name for m in exact or models for name in m.model_fields} - {"type"})
    return [*schema.CaseModelBase.model_fields, "checks", "task"]


def _check_models() -> list[type[schema.CheckModel]]:
    found: list[type[schema.CheckModel]] = []
    todo = list(schema.CheckModel.__subclasses__())
    while todo:
        model = todo.pop()
        found.append(model)
        todo.extend(model.__subclasses__())
    return found


def _type_tags(model: type[schema.CheckModel]) -> tuple[object, ...]:
    annotation = model.model_fields["type"].annotation
    return tuple(getattr(annotation, "__args__", ()))
