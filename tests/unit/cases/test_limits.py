"""The size limits of case files (docs/case-format.md, "Limits"): each field at its limit
loads, one character or item more is one error naming the field and its line; YAML
aliases count every time they appear; messages never echo a huge value back."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_evalcases.cases import limits
from pytest_evalcases.cases.loading import load_case_file, load_task_dir
from pytest_evalcases.cases.parsecache import ParseCache
from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.run.checks import default_registry

REGISTRY = default_registry()

HEAD = "id: sized\ndefends: rules/x.md\n"
CHECK = "  - type: file_exists\n    path: ok.txt\n"


@dataclass(frozen=True)
class Sized:
    """A case file whose one field holds ``n`` characters (or items)."""

    make: Callable[[int], str]
    limit: int
    line: int
    field: str


def _field(line: str) -> Callable[[int], str]:
    """A case with ``line`` (``{}`` standing for the sized value) before its checks."""
    return lambda n: HEAD + line.format("v" * n) + "\nchecks:\n" + CHECK


def _check(line: str) -> Callable[[int], str]:
    """A case whose one check has ``line`` besides ``type: tool_called``."""
    check = "checks:\n  - type: tool_called\n    tool: x\n"
    return lambda n: HEAD + check + line.format("v" * n) + "\n"


SIZED = {
    "id": Sized(lambda n: "id: " + "a" * n + "\ndefends: d\nchecks:\n" + CHECK, 100, 1, "id"),
    "defends": Sized(
        lambda n: "id: sized\ndefends: " + "d" * n + "\nchecks:\n" + CHECK,
        limits.PATH_CHARS,
        2,
        "defends",
    ),
    "description": Sized(_field("description: {}"), limits.LINE_CHARS, 3, "description"),
    "quarantine": Sized(_field("quarantine: {}"), limits.LINE_CHARS, 3, "quarantine"),
    "prompt": Sized(_field("prompt: {}"), limits.TEXT_CHARS, 3, "prompt"),
    "setup": Sized(_field("setup: {}"), limits.TEXT_CHARS, 3, "setup"),
    "tag": Sized(_field("tags: [{}]"), limits.TAG_CHARS, 3, "tags[0]"),
    "check-id": Sized(_check("    id: {}"), limits.ID_CHARS, 6, "checks[0].id"),
    "check-description": Sized(
        _check("    description: {}"), limits.LINE_CHARS, 6, "checks[0].description"
    ),
    "tool": Sized(
        lambda n: HEAD + "checks:\n  - type: tool_called\n    tool: " + "t" * n + "\n",
        limits.PATTERN_CHARS,
        5,
        "checks[0].tool",
    ),
    "input": Sized(_check("    input: {}"), limits.PATTERN_CHARS, 6, "checks[0].input"),
    "pattern": Sized(
        lambda n: HEAD + "checks:\n  - type: output_matches\n    pattern: " + "p" * n + "\n",
        limits.PATTERN_CHARS,
        5,
        "checks[0].pattern",
    ),
    "path": Sized(
        lambda n: HEAD + "checks:\n  - type: file_exists\n    path: " + "p" * n + "\n",
        limits.PATH_CHARS,
        5,
        "checks[0].path",
    ),
    "command": Sized(
        lambda n: HEAD + "checks:\n  - type: command_succeeds\n    command: " + "c" * n + "\n",
        limits.TEXT_CHARS,
        5,
        "checks[0].command",
    ),
}
COUNTED = {
    "tags": Sized(
        lambda n: HEAD + "tags: [" + ", ".join(f"t{i}" for i in range(n)) + "]\nchecks:\n" + CHECK,
        limits.TAGS,
        3,
        "tags",
    ),
    "checks": Sized(lambda n: HEAD + "checks:\n" + CHECK * n, limits.CHECKS, 4, "checks"),
}


def _load(tmp_path: Path, text: str, cache: ParseCache | None = None) -> None:
    evals = tmp_path / "evals"
    evals.mkdir(exist_ok=True)
    path = evals / "sized.yaml"
    path.write_text(text, encoding="utf-8")
    load_case_file(path, evals, REGISTRY, cache)


def _refused(tmp_path: Path, text: str, cache: ParseCache | None = None) -> CaseFileError:
    with pytest.raises(CaseFileError) as info:
        _load(tmp_path, text, cache)
    return info.value


@pytest.mark.parametrize("name", list(SIZED))
def test_a_field_at_its_limit_loads_and_one_character_more_is_refused(
    tmp_path: Path, name: str
) -> None:
    sized = SIZED[name]
    _load(tmp_path, sized.make(sized.limit))

    err = _refused(tmp_path, sized.make(sized.limit + 1))

    assert (err.line, err.field) == (sized.line, sized.field)
    assert err.reason == (
        f"too long: {sized.limit + 1:,} characters, at most {sized.limit:,} "
        '(docs/case-format.md, "Limits")'
    )


@pytest.mark.parametrize("name", list(COUNTED))
def test_a_list_at_its_limit_loads_and_one_item_more_is_refused(tmp_path: Path, name: str) -> None:
    sized = COUNTED[name]
    _load(tmp_path, sized.make(sized.limit))

    err = _refused(tmp_path, sized.make(sized.limit + 1))

    assert (err.line, err.field) == (sized.line, sized.field)
    assert err.reason.startswith(f"too many items: {sized.limit + 1}, at most {sized.limit} ")


def test_the_schema_tells_editors_the_limits() -> None:
    schema = REGISTRY.case_model.model_json_schema()
    properties = schema["properties"]

    assert properties["id"]["maxLength"] == limits.ID_CHARS
    assert properties["tags"]["maxItems"] == limits.TAGS
    assert properties["checks"]["maxItems"] == limits.CHECKS


def _shared_prompts(count: int) -> str:
    """A ``cases:`` list of ``count`` cases sharing one 90,000-character prompt."""
    cases = [
        f"  - id: case-{i}\n    defends: d\n    prompt: "
        + ("&p " + "w" * 90_000 if i == 0 else "*p")
        + "\n    checks: [{type: file_exists, path: a}]\n"
        for i in range(count)
    ]
    return "cases:\n" + "".join(cases)


def test_aliases_count_each_time_they_appear(tmp_path: Path) -> None:
    _load(tmp_path, _shared_prompts(11))  # 990,000 characters and a few more

    err = _refused(tmp_path, _shared_prompts(12))

    assert (err.line, err.field) == (2, "cases")
    assert err.reason == (
        "holds more than 1,000,000 characters once its YAML aliases (*name) are expanded; "
        'a case file may hold at most 1,000,000 (docs/case-format.md, "Limits")'
    )


def test_the_blown_up_file_of_issue_10_names_its_tags_and_is_not_cached(tmp_path: Path) -> None:
    # 104 KB: one 100 KB anchor, repeated 1,000 times in `tags` (it made a 100 MB results
    # file and 191 MB in .pytest_cache).
    text = HEAD + 'tags: [&big "' + "x" * 100_000 + '"' + ", *big" * 999 + "]\nchecks:\n" + CHECK
    cache = ParseCache()

    err = _refused(tmp_path, text, cache)

    assert (err.line, err.field) == (3, "tags")
    assert cache.files == {}
    assert not cache.changed


def test_an_alias_bomb_and_an_alias_inside_its_anchor_are_refused(tmp_path: Path) -> None:
    levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]\n")
    bomb = _refused(tmp_path, "".join(levels) + "tags: *i\ndefends: rules/x.md\n")
    looped = _refused(tmp_path, HEAD + "tags: &t [*t]\nchecks:\n" + CHECK)

    assert (bomb.line, bomb.field) == (6, "f")  # the first of the nine over the limit
    assert (looped.line, looped.field) == (3, "tags[0]")
    assert "once its YAML aliases (*name) are expanded" in looped.reason


def test_a_file_over_the_size_limit_is_not_read(tmp_path: Path) -> None:
    text = HEAD + "checks:\n" + CHECK
    _load(tmp_path, text + "#" * (limits.FILE_BYTES - len(text)))

    err = _refused(tmp_path, text + "#" * (limits.FILE_BYTES - len(text) + 1))

    assert err.line == 1
    assert err.reason == (
        f"the file is {limits.FILE_BYTES + 1:,} bytes; a case file may be at most "
        f'{limits.FILE_BYTES:,} bytes (docs/case-format.md, "Limits")'
    )


HUGE = "Q" * 900_000


@pytest.mark.parametrize(
    ("data", "start"),
    [
        ({"id": HUGE, "defends": "d"}, "too long: 900,000 characters"),
        ({"id": "x", "defends": "d", HUGE: 1}, "unknown field 'QQQ"),
        ({"id": "x", "defends": "d", "checks": [{"type": HUGE}]}, "unknown check type 'QQQ"),
        (
            {
                "id": "x",
                "defends": "d",
                "checks": [{"type": "output_matches", "pattern": "(" + HUGE}],
            },
            "too long",
        ),
        ({"id": "x", "defends": "d", "timeout": HUGE}, "expected a valid number"),
    ],
    ids=["id", "key", "check-type", "pattern", "timeout"],
)
def test_a_huge_value_is_never_echoed_back(tmp_path: Path, data: object, start: str) -> None:
    evals = tmp_path / "evals"
    evals.mkdir()
    path = evals / "huge.json"
    path.write_text(json.dumps(data), encoding="utf-8")

    with pytest.raises(CaseFileError) as info:
        load_case_file(path, evals, REGISTRY)

    message = str(info.value)
    assert len(message) < 1_000, message[:1_000]
    assert start in message
    assert HUGE not in message


def test_a_task_directory_is_held_to_the_same_limits(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "sized"
    task.mkdir(parents=True)
    checks = task / "checks.yaml"
    check = "  - id: c{}\n    type: file_exists\n    path: a\n"
    checks.write_text("task: do it\nchecks:\n" + "".join(check.format(i) for i in range(101)))

    with pytest.raises(CaseFileError) as many:
        load_task_dir(checks, REGISTRY)
    checks.write_text("task: do it\nchecks:\n" + check.format(0))
    (task / "task.md").write_text("w" * (limits.TEXT_CHARS + 1))
    with pytest.raises(CaseFileError) as long_prompt:
        load_task_dir(checks, REGISTRY)
    checks.write_text("task: " + "t" * (limits.LINE_CHARS + 1) + "\nchecks:\n" + check.format(0))
    with pytest.raises(CaseFileError) as long_task:
        load_task_dir(checks, REGISTRY)

    assert (many.value.line, many.value.field) == (3, "checks")
    assert "too many items: 101, at most 100" in many.value.reason
    assert long_prompt.value.path == str(task / "task.md")
    assert "too long: 100,001 characters, at most 100,000" in long_prompt.value.reason
    assert (long_task.value.line, long_task.value.field) == (1, "task")
