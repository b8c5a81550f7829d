"""Case files to validated cases, with source lines and readable errors.

Data is parsed with the fast loaders (``json``, PyYAML's C loader); the YAML node tree
is composed only when a line is needed: for the cases of a ``cases:`` list, and to
point an error at the offending node.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pytest_evalcases.cases import schema
from pytest_evalcases.cases.parsecache import CaseEntry, FileIndex, ParseCache
from pytest_evalcases.cases.registry import CheckRegistry
from pytest_evalcases.cases.schema import TASK_SEVERITY
from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.kinds import SEVERITIES, RecordKind, Severity

_Base: type[yaml.SafeLoader | yaml.CSafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[valid-type,misc]
    """The C loader when PyYAML has it, refusing duplicate keys: YAML keeps the last
    one silently, and a second `pattern:` must not pass unnoticed."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag.endswith(":str"):
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key_node.value!r}", key_node.start_mark
                    )
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


#: How many problems of one file the error message lists.
MAX_PROBLEMS = 5


@dataclass(frozen=True)
class LoadedCase:
    """A validated case, whatever format it came from; what the runner works with."""

    id: str
    file: Path
    #: 0-based line of the case in its file (IDEs jump there).
    line: int
    evals_root: Path
    defends: str
    severity: Severity
    checks: tuple[schema.CheckModel, ...]
    description: str | None = None
    #: Absolute fixture directory, or ``None`` for an empty workspace.
    fixture: Path | None = None
    setup: str | None = None
    prompt: str | None = None
    bare: bool = True
    timeout: float | None = None
    min_pass_rate: float = 1.0
    quarantine: str | None = None
    tags: tuple[str, ...] = ()
    #: ``case`` or ``task`` (a task directory; docs/case-format.md).
    kind: RecordKind = "case"

    @property
    def entry(self) -> CaseEntry:
        """What collection needs of this case (and the parse cache keeps)."""
        return CaseEntry(self.id, self.line, self.severity, self.tags, self.defends)

    @property
    def needs_transcript(self) -> bool:
        return any(c.type in schema.TOOL_CHECKS for c in self.checks)


def load_case_file(
    path: Path, evals_root: Path, registry: CheckRegistry, cache: ParseCache | None = None
) -> list[LoadedCase]:
    """Load every case of a ``.yaml`` / ``.yml`` / ``.json`` case file."""
    if cache is not None:
        hit = cache.get(path)
        if hit is not None:
            try:
                cases = _cases(path, evals_root, registry, hit[0], _Source(path, None), hit[1])
            except CaseFileError:
                pass  # load it afresh, for a message with the right lines
            else:
                if cache.index(path, evals_root) is None:
                    cache.put(path, hit[0], hit[1], file_index(evals_root, cases, registry))
                return cases
    text = _read_text(path)
    data = _parse(path, text)
    cases = _cases(path, evals_root, registry, data, _Source(path, text), None)
    if cache is not None:
        lines = [case.line for case in cases]
        cache.put(path, data, lines, file_index(evals_root, cases, registry))
    return cases


def file_index(
    evals_root: Path, cases: Sequence[LoadedCase], registry: CheckRegistry
) -> FileIndex | None:
    """What collecting this file again needs, while it stays unchanged: ``None`` when a
    check type comes from a plugin (a plugin may be gone next time, and the file must
    then fail at collection, not when it runs)."""
    if any(check.type not in registry.builtin for case in cases for check in case.checks):
        return None
    fixtures = sorted({str(case.fixture) for case in cases if case.fixture is not None})
    return FileIndex(str(evals_root), tuple(case.entry for case in cases), tuple(fixtures))


def _cases(
    path: Path,
    evals_root: Path,
    registry: CheckRegistry,
    data: Any,
    source: _Source,
    lines: list[int] | None,
) -> list[LoadedCase]:
    """Validate the parsed ``data`` of a case file into cases."""
    if isinstance(data, dict) and "cases" in data:
        extra = sorted(set(data) - {"cases"})
        if extra:
            raise source.error(
                [extra[0]], "extra", f"unknown top-level field beside `cases:`: {extra[0]!r}"
            )
        items = data["cases"]
        if not isinstance(items, list) or not items:
            raise source.error(["cases"], "type", "`cases:` must be a non-empty list of cases")
        prefix: list[str | int] = ["cases"]
    elif isinstance(data, dict):
        items = [data]
        prefix = []
    else:
        raise CaseFileError(
            str(path),
            f"expected a mapping with the case fields (id, defends, prompt, checks) or a "
            f"`cases:` list, got {_kind(data)}",
            line=1,
        )
    cases: list[LoadedCase] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        loc = [*prefix, index] if prefix else []
        if not isinstance(item, dict):
            raise source.error(loc, "type", f"a case must be a mapping, got {_kind(item)}")
        try:
            model = registry.case_model.model_validate(item)
        except ValidationError as exc:
            raise source.validation_error(exc, loc, item) from None
        if not prefix:
            line = 0
        elif lines is not None and index < len(lines):
            line = lines[index]
        else:
            line = source.line_of(loc) - 1
        if model.id in seen:
            raise source.error(
                [*loc, "id"], "value", f"duplicate id {model.id!r} (also at line {seen[model.id]})"
            )
        seen[model.id] = line + 1
        fixture = _fixture(source, evals_root, model.cwd, [*loc, "cwd"])
        cases.append(
            LoadedCase(
                id=model.id,
                file=path,
                line=line,
                evals_root=evals_root,
                defends=model.defends,
                severity=model.severity,
                checks=tuple(model.checks),  # type: ignore[attr-defined]
                description=model.description,
                fixture=fixture,
                setup=model.setup,
                prompt=model.prompt,
                bare=model.bare,
                timeout=model.timeout,
                min_pass_rate=model.min_pass_rate,
                quarantine=model.quarantine,
                tags=tuple(model.tags),
            )
        )
    return cases


def load_task_dir(checks_yaml: Path, registry: CheckRegistry) -> LoadedCase:
    """Load a task directory: ``checks.yaml`` plus an optional ``task.md`` prompt."""
    text = _read_text(checks_yaml)
    data = _parse(checks_yaml, text)
    source = _Source(checks_yaml, text)
    if not isinstance(data, dict):
        raise CaseFileError(
            str(checks_yaml),
            f"expected a mapping with `task:` and `checks:`, got {_kind(data)}",
            line=1,
        )
    raw_checks = data.get("checks")
    header = {k: v for k, v in data.items() if k != "checks"}
    try:
        model = schema.TaskFileBase.model_validate(header)
    except ValidationError as exc:
        raise source.validation_error(exc, [], header) from None
    if not isinstance(raw_checks, list) or not raw_checks:
        raise source.error(["checks"], "missing", "`checks:` must be a non-empty list of checks")
    checks: list[schema.CheckModel] = []
    severities: list[Severity] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_checks):
        loc: list[str | int] = ["checks", index]
        if not isinstance(raw, dict):
            raise source.error(loc, "type", f"a check must be a mapping, got {_kind(raw)}")
        try:
            extras = schema.TaskCheckExtras.model_validate(raw)
            check = registry.check_adapter.validate_python(
                {k: v for k, v in raw.items() if k != "severity"}
            )
        except ValidationError as exc:
            raise source.validation_error(exc, loc, raw) from None
        if extras.id in seen:
            raise source.error([*loc, "id"], "value", f"duplicate check id {extras.id!r}")
        seen.add(extras.id)
        checks.append(check)
        severities.append(TASK_SEVERITY[extras.severity])
    task_md = checks_yaml.parent / "task.md"
    prompt = _read_text(task_md) if task_md.is_file() else None
    severity = min(severities, key=SEVERITIES.index)
    return LoadedCase(
        id=checks_yaml.parent.name,
        file=checks_yaml,
        line=0,
        evals_root=checks_yaml.parent,
        defends=model.defends or "",
        severity=severity,
        checks=tuple(checks),
        description=model.description or model.task,
        prompt=prompt,
        timeout=model.timeout,
        tags=tuple(model.tags),
        kind="task",
    )


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CaseFileError(str(path), f"cannot read the file: {exc.strerror}") from None
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


def _parse(path: Path, text: str) -> Any:
    if not text.strip():
        raise CaseFileError(
            str(path), "the file is empty; expected a case (id, defends, prompt, checks)", line=1
        )
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise CaseFileError(
                str(path), f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno
            ) from None
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        detail = f"{context}, {problem}" if context else problem
        line = mark.line + 1 if mark is not None else None
        column = f" (column {mark.column + 1})" if mark is not None else ""
        hint = ""
        if mark is not None and _char_at(text, mark.line, mark.column) == "\t":
            hint = "; it is a tab: YAML indents with spaces only"
        raise CaseFileError(str(path), f"invalid YAML: {detail}{column}{hint}", line=line) from None


def _char_at(text: str, line: int, column: int) -> str:
    lines = text.splitlines()
    if 0 <= line < len(lines) and 0 <= column < len(lines[line]):
        return lines[line][column]
    return ""


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    return {
        list: "a list",
        str: "a string",
        int: "a number",
        float: "a number",
        bool: "a boolean",
    }.get(type(value), type(value).__name__)


def _fixture(
    source: _Source, evals_root: Path, cwd: str | None, loc: list[str | int]
) -> Path | None:
    if cwd is None:
        return None
    # normpath, not resolve(): no system call per case, and `..` still folds.
    fixture = Path(os.path.normpath(evals_root / cwd))
    if not os.path.isdir(fixture):
        raise source.error(
            loc, "value", f"fixture directory {cwd!r} not found (relative to {evals_root})"
        )
    return fixture


def field_path(loc: Sequence[str | int]) -> str:
    """``['checks', 2, 'pattern']`` as ``checks[2].pattern``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


class _Source:
    """A file's text, for finding the line of a field path and phrasing errors."""

    def __init__(self, path: Path, text: str | None) -> None:
        self.path = path
        #: ``None`` for a file served from the parse cache, read only if a line is needed.
        self.text = text
        self._root: yaml.Node | bool | None = False

    def _tree(self) -> yaml.Node | None:
        if self._root is False:
            if self.text is None:
                self.text = _read_text(self.path)
            try:
                self._root = yaml.compose(self.text, Loader=_Loader)
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
        line = self.line_of(loc, key=kind == "extra")
        return CaseFileError(str(self.path), message, line=line, field=field_path(loc))

    def validation_error(
        self, exc: ValidationError, prefix: Sequence[str | int], data: Any
    ) -> CaseFileError:
        """One error for the file, listing up to ``MAX_PROBLEMS`` problems."""
        problems: list[_Problem] = []
        for err in exc.errors(include_url=False):
            loc, missing = _data_loc(data, err["loc"])
            kind = err["type"]
            if kind in ("union_tag_invalid", "union_tag_not_found"):
                loc = [*loc, "type"]  # the check's `type` is what is wrong or missing
            full = [*prefix, *loc]
            line = self.line_of(full, key=kind == "extra_forbidden")
            problems.append(_Problem(kind, tuple(full), line, _phrase(err, missing, data, loc)))
        problems = _typos_first(problems)
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
class _Problem:
    """One validation problem: pydantic's error type, where it is, and what to say."""

    kind: str
    loc: tuple[str | int, ...]
    line: int
    message: str


def _typos_first(problems: list[_Problem]) -> list[_Problem]:
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


def _data_loc(data: Any, loc: Sequence[str | int]) -> tuple[list[str | int], bool]:
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


def _phrase(err: Any, missing: bool, data: Any, loc: list[str | int]) -> str:
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
        known = _known_fields(parent)
        hint = difflib.get_close_matches(name, known, n=1)
        return f"unknown field {name!r}" + (f"; did you mean {hint[0]!r}?" if hint else "")
    if kind == "union_tag_invalid":
        ctx = err.get("ctx", {})
        tag = ctx.get("tag", "?")
        expected = str(ctx.get("expected_tags", "")).replace("'", "")
        names = [n.strip() for n in expected.split(",")]
        hint = difflib.get_close_matches(str(tag), names, n=1)
        return (
            f"unknown check type {tag!r}"
            + (f"; did you mean {hint[0]!r}?" if hint else "")
            + f" (known types: {', '.join(names)})"
        )
    if kind == "union_tag_not_found":
        return "a check needs a `type` field (e.g. output_not_matches, file_exists)"
    value = err.get("input")
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected a mapping of fields (`name: value` lines), got {_kind(value)}"
    if kind == "too_short" and err.get("ctx", {}).get("min_length") == 1:
        return "expected a non-empty list (at least 1 item), got an empty one"
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    elif kind == "string_pattern_mismatch" and loc and loc[-1] == "id":
        msg = "must be kebab-case: lowercase letters, digits and single hyphens"
    elif kind in _BOUNDS and msg.startswith("Input should be "):
        msg = "expected a number " + msg[len("Input should be ") :]
    elif msg.startswith("Input should be "):
        # pydantic's wording names the input; ours says what the field expects.
        msg = "expected " + msg[len("Input should be ") :]
    if kind not in ("value_error",) and not isinstance(value, (dict, list)):
        msg += f" (got {value!r})"
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
