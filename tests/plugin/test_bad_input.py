"""Bad input (docs/case-format.md, "What a broken file looks like"): every kind of broken
case file is ONE error naming the file, the line, the field and what is expected; the
other case files still collect and run.

Each scenario is a real pytest session holding the broken file beside a valid case that
is graded with ``--eval-workspace`` (so it runs and passes without an agent).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.cases import limits
from tests.helpers.suite import SuiteBuilder, write

VALID_CASE = """\
id: good-case
defends: rules/good.md
severity: normal
tags: [good]
checks:
  - type: file_exists
    path: ok.txt
"""

CHECK = """\
  - type: file_exists
    path: ok.txt
"""
UNCHANGED = "  - type: file_unchanged\n    path: {path}\n"

HEAD = "defends: rules/x.md\nprompt: do it\n"


@dataclass(frozen=True)
class Link:
    """A symbolic link to ``target`` in place of a file's text."""

    target: str


@dataclass(frozen=True)
class Fifo:
    """A named pipe in place of a file's text: opening it would wait for a writer."""


@dataclass(frozen=True)
class Bad:
    """A broken case file and what its one error must say."""

    #: Path of the broken file, relative to the pytester directory.
    path: str
    content: str | bytes | Link | Fifo
    #: 1-based line the message must point at; ``None`` when it cannot be known.
    line: int | None
    #: Field path the message must name (``""``: the file as a whole).
    field: str
    #: Substrings of the message saying what is wrong and what is expected.
    expect: tuple[str, ...]
    #: More files the scenario needs (path -> text, ``None`` for a directory, or a link).
    extra: dict[str, str | Link | None] = field(default_factory=dict)
    #: Valid cases that pass besides the one in ``evals/good.yaml``.
    passed: int = 1
    #: Substrings the message must not hold (a did-you-mean naming the same word).
    absent: tuple[str, ...] = ()


def case(body: str) -> str:
    """A case file with ``body`` after ``id: bad``."""
    return "id: bad\n" + body


def bad_yaml(content: str | bytes, line: int | None, field: str, *expect: str, **more: Any) -> Bad:
    """A broken ``evals/bad.yaml``: its error points at ``line`` and ``field``, saying
    each of ``expect``."""
    return Bad("evals/bad.yaml", content, line, field, expect, **more)


def bad_checks(checks: str, line: int | None, field: str, *expect: str, **more: Any) -> Bad:
    """A broken ``evals/bad.yaml`` whose ``checks:`` list is ``checks``."""
    return bad_yaml(case(HEAD + "checks:\n" + checks), line, field, *expect, **more)


def bad_field(field_line: str, line: int | None, field: str, *expect: str, **more: Any) -> Bad:
    """A broken ``evals/bad.yaml``: a valid case but for ``field_line``."""
    return bad_yaml(case(HEAD + field_line + "checks:\n" + CHECK), line, field, *expect, **more)


BAD: dict[str, Bad] = {
    "yaml-syntax": bad_yaml(
        case("defends: [rules/x.md\nprompt: hi\n"), 3, "", "invalid YAML", "expected ',' or ']'"
    ),
    "yaml-unknown-escape": bad_checks(
        '  - type: output_matches\n    pattern: "fix\\s*:"\n',
        6,
        "",
        "invalid YAML",
        "unknown escape character",
        "\\s is no escape in a double-quoted YAML string: write the backslash twice "
        "(\"\\\\s\") or use single quotes ('\\s')",
    ),
    "case-task-field": bad_field(
        "task: Do the thing\n",
        4,
        "task",
        "unknown field 'task': a field of a task directory's checks.yaml, not of a case file",
        absent=("did you mean",),
    ),
    "yaml-tab-indent": bad_checks(
        "\t- type: file_exists\n", 5, "", "invalid YAML", "tab: YAML indents with spaces only"
    ),
    "yaml-duplicate-key": bad_checks(
        "  - type: output_matches\n    pattern: a\n    pattern: b\n",
        7,
        "",
        "invalid YAML",
        "duplicate key 'pattern'",
    ),
    "yaml-two-documents": bad_checks(
        CHECK + "---\nid: other\n", 7, "", "invalid YAML", "single document"
    ),
    "json-syntax": Bad(
        "evals/bad.json",
        '{\n  "id": "bad",\n  "defends": "rules/x.md"\n  "prompt": "do it"\n}\n',
        4,
        "",
        ("invalid JSON", "Expecting ',' delimiter"),
    ),
    "json-missing-field": Bad(
        "evals/bad.json",
        '{\n  "id": "bad",\n  "checks": [\n    {"type": "file_exists", "path": "ok.txt"}\n  ]\n}\n',
        1,
        "defends",
        ("required field is missing",),
    ),
    "json-wrong-type": Bad(
        "evals/bad.json",
        '{\n  "id": "bad",\n  "defends": "rules/x.md",\n  "timeout": "soon",\n'
        '  "checks": [{"type": "file_exists", "path": "ok.txt"}]\n}\n',
        4,
        "timeout",
        ("number", "'soon'"),
    ),
    "not-utf8": bad_yaml(
        b"id: bad\ndefends: rules/x.md\nprompt: caf\xe9\n",
        3,
        "",
        "not UTF-8",
        "0xe9",
        "save the file as UTF-8",
    ),
    "missing-id": bad_yaml(
        HEAD + "checks:\n" + CHECK, 1, "id", "required field is missing", "kebab-case id"
    ),
    "missing-defends": bad_yaml(
        case("prompt: do it\nchecks:\n" + CHECK), 1, "defends", "required field is missing"
    ),
    "missing-checks": bad_yaml(case(HEAD), 1, "checks", "required field is missing"),
    "empty-checks": bad_yaml(case(HEAD + "checks: []\n"), 4, "checks", "at least 1"),
    "checks-not-a-list": bad_checks("  type: file_exists\n  path: ok.txt\n", 5, "checks", "list"),
    "severity-invalid": bad_field(
        "severity: high\n", 4, "severity", "'critical'", "'normal'", "'advisory'", "'high'"
    ),
    "script-turn-of-two-kinds": bad_field(
        "script:\n  - shell: ls\n    text: done\n",
        5,
        "script[0]",
        "a turn has exactly one of `shell`, `tool`, `mcp` or `text` (got `shell`, `text`)",
    ),
    "script-input-not-a-mapping": bad_field(
        "script:\n  - tool: Read\n    input: src/a.py\n",
        6,
        "script[0].input",
        "expected a mapping",
        "got a string",
    ),
    "script-input-without-tool": bad_field(
        "script:\n  - text: hi\n    input: {a: 1}\n", 5, "script[0]", "`input` goes with `tool`"
    ),
    "script-for-the-command-agent": bad_field(
        "agents: [command]\nscript:\n  - text: hi\n",
        4,
        "agents",
        "`script:` plays the model of claude, codex, gemini only, and agent 'command' is not "
        "one of them",
    ),
    "timeout-not-number": bad_field("timeout: abc\n", 4, "timeout", "number", "'abc'"),
    "timeout-negative": bad_field("timeout: -5\n", 4, "timeout", "greater than 0", "-5"),
    # Valid numbers that would fail only when the run waits on them.
    "timeout-infinite": bad_field("timeout: .inf\n", 4, "timeout", "finite number", "inf"),
    "timeout-too-long": bad_field("timeout: 1.0e10\n", 4, "timeout", "less than or equal to 86400"),
    "check-timeout-infinite": bad_checks(
        "  - {type: command_succeeds, command: 'true', timeout: .inf}\n",
        5,
        "checks[0].timeout",
        "finite number",
    ),
    # Validates as a string, then fails as an argument or a path ("embedded null byte").
    "nul-in-prompt": bad_yaml(
        case('defends: rules/x.md\nprompt: "do\\0it"\nchecks:\n' + CHECK),
        3,
        "prompt",
        "contains a NUL character",
    ),
    "nul-in-check-command": bad_checks(
        '  - {type: command_succeeds, command: "tr\\0ue"}\n',
        5,
        "checks[0].command",
        "contains a NUL character",
    ),
    "nul-in-tag": bad_field('tags: [ok, "b\\0d"]\n', 4, "tags", "contains a NUL character"),
    "json-duplicate-key": Bad(
        "evals/bad.json",
        '{\n  "id": "bad",\n  "defends": "rules/x.md",\n  "id": "other",\n'
        '  "checks": [{"type": "file_exists", "path": "ok.txt"}]\n}\n',
        4,
        "",
        ("invalid JSON", "duplicate key 'id' in one object"),
    ),
    "json-infinity": Bad(
        "evals/bad.json",
        '{\n  "id": "bad",\n  "defends": "rules/x.md",\n  "timeout": Infinity,\n'
        '  "checks": [{"type": "file_exists", "path": "ok.txt"}]\n}\n',
        4,
        "",
        ("invalid JSON", "Infinity is not a JSON number"),
    ),
    "json-huge-number": Bad(
        "evals/bad.json",
        '{\n  "id": "bad",\n  "defends": "rules/x.md",\n  "timeout": 1e999,\n'
        '  "checks": [{"type": "file_exists", "path": "ok.txt"}]\n}\n',
        4,
        "",
        ("invalid JSON", "1e999 is too large a number"),
    ),
    "json-lone-surrogate": Bad(
        "evals/bad.json",
        '{\n  "id": "bad",\n  "defends": "rules/x.md",\n  "description": "x\\ud800y",\n'
        '  "checks": [{"type": "file_exists", "path": "ok.txt"}]\n}\n',
        4,
        "",
        ("invalid JSON", "half of a UTF-16 surrogate pair"),
    ),
    "json-nested-too-deeply": Bad(
        "evals/bad.json", "[" * 5000 + "]" * 5000, None, "", ("invalid JSON", "nested too deeply")
    ),
    # Sizes (docs/case-format.md, "Limits"): a value over one is named, never echoed.
    "tags-anchor-blowup": bad_field(
        # 104 KB that expand to 100 MB: one 100 KB anchor repeated 1,000 times.
        'tags: [&big "' + "x" * 100_000 + '"' + ", *big" * 999 + "]\n",
        4,
        "tags",
        "holds more than 1,000,000 characters once its YAML aliases (*name) are expanded",
    ),
    "yaml-alias-bomb": bad_yaml(
        'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
        + "".join(
            f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
            for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
        )
        + case(HEAD + "checks:\n" + CHECK),
        6,
        "f",
        "holds more than 1,000,000 characters",
    ),
    "tags-too-many": bad_field(
        "tags: [" + ", ".join(f"t{i}" for i in range(limits.TAGS + 1)) + "]\n",
        4,
        "tags",
        f"too many items: {limits.TAGS + 1}, at most {limits.TAGS}",
    ),
    "tag-too-long": bad_field(
        f"tags: [ok, {'t' * (limits.TAG_CHARS + 1)}]\n",
        4,
        "tags[1]",
        f"too long: {limits.TAG_CHARS + 1} characters, at most {limits.TAG_CHARS}",
    ),
    "id-too-long": bad_yaml(
        "id: " + "a" * 900_000 + "\n" + HEAD + "checks:\n" + CHECK,
        1,
        "id",
        f"too long: 900,000 characters, at most {limits.ID_CHARS}",
    ),
    "id-invalid-and-huge": bad_yaml(
        "id: " + "Ab_" * 300_000 + "\n" + HEAD + "checks:\n" + CHECK, 1, "id", "too long"
    ),
    "defends-too-long": bad_yaml(
        case(f"defends: {'d' * (limits.PATH_CHARS + 1)}\nchecks:\n" + CHECK),
        2,
        "defends",
        f"at most {limits.PATH_CHARS:,}",
    ),
    "description-too-long": bad_field(
        f"description: {'d' * (limits.LINE_CHARS + 1)}\n",
        4,
        "description",
        f"too long: {limits.LINE_CHARS + 1:,} characters, at most {limits.LINE_CHARS:,}",
    ),
    "prompt-too-long": bad_yaml(
        case(f"defends: rules/x.md\nprompt: {'p' * (limits.TEXT_CHARS + 1)}\nchecks:\n" + CHECK),
        3,
        "prompt",
        f"at most {limits.TEXT_CHARS:,}",
    ),
    "check-pattern-too-long": bad_checks(
        f"  - type: output_matches\n    pattern: {'p' * (limits.PATTERN_CHARS + 1)}\n",
        6,
        "checks[0].pattern",
        f"at most {limits.PATTERN_CHARS:,}",
    ),
    "check-description-too-long": bad_checks(
        CHECK + f"    description: {'d' * (limits.LINE_CHARS + 1)}\n",
        7,
        "checks[0].description",
        f"at most {limits.LINE_CHARS:,}",
    ),
    "checks-too-many": bad_checks(
        CHECK * (limits.CHECKS + 1),
        5,
        "checks",
        f"too many items: {limits.CHECKS + 1}, at most {limits.CHECKS}",
    ),
    "file-too-large": bad_yaml(
        case(HEAD + "checks:\n" + CHECK) + "#" * limits.FILE_BYTES,
        1,
        "",
        f"bytes; a case file may be at most {limits.FILE_BYTES:,} bytes",
    ),
    "bare-not-bool": bad_field("bare: maybe\n", 4, "bare", "boolean", "'maybe'"),
    "tags-not-list": bad_field("tags: 5\n", 4, "tags", "list", "5"),
    "min-pass-rate-above-1": bad_field(
        "min_pass_rate: 1.5\n", 4, "min_pass_rate", "less than or equal to 1", "1.5"
    ),
    "unknown-top-level-field": bad_yaml(
        "id: bad\ndefends: rules/x.md\npromt: do it\nchecks:\n" + CHECK,
        3,
        "promt",
        "unknown field 'promt'",
        "did you mean 'prompt'?",
    ),
    "unknown-field-in-check": bad_checks(
        CHECK + "  - type: output_matches\n    patern: fix\n",
        8,
        "checks[1].patern",
        "unknown field 'patern'",
        "did you mean 'pattern'?",
    ),
    "unknown-check-type": bad_checks(
        CHECK + "  - type: file_exist\n    path: a.txt\n",
        7,
        "checks[1].type",
        "unknown check type 'file_exist'",
        "did you mean 'file_exists'?",
        "output_matches",
    ),
    "check-without-type": bad_checks(
        CHECK + "  - path: a.txt\n", 7, "checks[1].type", "needs a `type` field"
    ),
    "check-not-a-mapping": bad_checks(
        "  - file_exists\n", 5, "checks[0]", "expected a mapping of fields", "got a string"
    ),
    "regex-output-matches": bad_checks(
        CHECK + "  - type: output_matches\n    pattern: 'fix(auth'\n",
        8,
        "checks[1].pattern",
        "invalid regular expression 'fix(auth'",
        "missing )",
    ),
    "regex-file-matches": bad_checks(
        CHECK + CHECK + "  - type: file_matches\n    path: a.py\n    pattern: '[a-'\n",
        11,
        "checks[2].pattern",
        "invalid regular expression '[a-'",
    ),
    "regex-tool-input": bad_checks(
        "  - type: tool_not_called\n    tool: shell\n    input: 'grep (-r'\n",
        7,
        "checks[0].input",
        "invalid regular expression 'grep (-r'",
    ),
    "path-parent": bad_checks(
        "  - type: file_exists\n    path: ../x\n",
        6,
        "checks[0].path",
        "'../x' escapes the workspace",
    ),
    "path-absolute": bad_checks(
        "  - type: file_matches\n    path: /etc/passwd\n    pattern: root\n",
        6,
        "checks[0].path",
        "'/etc/passwd' is absolute",
        "relative to the workspace",
    ),
    "path-dotdot-inside": bad_checks(
        "  - type: file_absent\n    path: a/../../b\n",
        6,
        "checks[0].path",
        "'a/../../b' escapes the workspace",
    ),
    "path-file-contains": bad_checks(
        "  - type: file_contains\n    file: ../../etc/hosts\n    pattern: x\n",
        6,
        "checks[0].file",
        "escapes the workspace",
    ),
    "file-and-path": bad_checks(
        "  - type: file_contains\n    file: a\n    path: b\n    pattern: x\n",
        5,
        "checks[0]",
        "exactly one of `file` or `path`",
    ),
    "id-not-kebab": bad_yaml(
        "id: Bad_Case\n" + HEAD + "checks:\n" + CHECK, 1, "id", "kebab-case", "'Bad_Case'"
    ),
    "duplicate-id-in-cases": bad_yaml(
        "cases:\n  - id: twin\n" + "    " + HEAD.replace("\n", "\n    ").rstrip() + "\n"
        "    checks:\n      - type: file_exists\n        path: ok.txt\n"
        "  - id: twin\n    defends: rules/y.md\n"
        "    checks:\n      - type: file_exists\n        path: ok.txt\n",
        8,
        "cases[1].id",
        "duplicate id 'twin'",
        "also at line 2",
    ),
    "cases-not-a-list": bad_yaml(
        "cases:\n  id: bad\n  defends: rules/x.md\n", 2, "cases", "non-empty list"
    ),
    "cases-empty": bad_yaml("cases: []\n", 1, "cases", "non-empty list"),
    "case-is-a-string": bad_yaml(
        "cases:\n  - id: fine\n    defends: rules/x.md\n    checks:\n"
        + "    "
        + CHECK.rstrip().replace("\n", "\n    ")
        + "\n  - just-a-string\n",
        7,
        "cases[1]",
        "a case must be a mapping",
        "got a string",
    ),
    "case-in-list-missing-field": bad_yaml(
        "cases:\n  - id: fine\n    defends: rules/x.md\n"
        "    checks: [{type: file_exists, path: a}]\n"
        "  - id: broken\n    checks: [{type: file_exists, path: a}]\n",
        5,
        "cases[1].defends",
        "required field is missing",
    ),
    "field-beside-cases": bad_yaml(
        "defaults:\n  severity: normal\ncases:\n  - id: fine\n    defends: rules/x.md\n"
        "    checks: [{type: file_exists, path: a}]\n",
        1,
        "defaults",
        "unknown top-level field beside `cases:`",
    ),
    "cwd-missing": bad_field(
        "cwd: fixtures/nope\n", 4, "cwd", "fixture directory 'fixtures/nope' not found"
    ),
    # A fixture is copied into the workspace and read by file_unchanged: never from
    # outside the evals root (here /etc/hostname would be compared, then quoted).
    "cwd-absolute": bad_yaml(
        case(HEAD + "cwd: /etc\nchecks:\n" + UNCHANGED.format(path="hostname")),
        4,
        "cwd",
        "'/etc' is absolute",
        "relative to the evals root",
    ),
    "cwd-parent": bad_yaml(
        case(HEAD + "cwd: ../../outside\nchecks:\n" + UNCHANGED.format(path="secret.txt")),
        4,
        "cwd",
        "'../../outside' leaves the evals root",
        extra={"outside/secret.txt": "root:x:0:0\n"},
    ),
    "cwd-symlink-outside": bad_yaml(
        case(HEAD + "cwd: fixtures/repo\nchecks:\n" + UNCHANGED.format(path="secret.txt")),
        4,
        "cwd",
        "fixture directory 'fixtures/repo' leads, through a symbolic link, to ",
        "outside the evals root",
        extra={"outside/secret.txt": "root:x:0:0\n", "evals/fixtures/repo": Link("../../outside")},
    ),
    # Not regular files: pytest's walk passes over them; each is one error, never opened.
    "dangling-symlink": Bad(
        "evals/bad.yaml", Link("nowhere.yaml"), None, "", ("a symbolic link to 'nowhere.yaml'",)
    ),
    "symlink-loop": Bad("evals/bad.yaml", Link("bad.yaml"), None, "", ("loops",)),
    "fifo": Bad("evals/bad.yaml", Fifo(), None, "", ("a named pipe (FIFO)", "not opened")),
    "link-to-dev-null": Bad(
        "evals/bad.yaml",
        Link(os.devnull),
        None,
        "",
        ("not a regular file but a character device", "'/dev/null'"),
    ),
    "task-checks-yaml-dangling": Bad(
        "tasks/broken-task/checks.yaml",
        Link("gone.yaml"),
        None,
        "",
        ("a symbolic link to 'gone.yaml', which does not exist",),
    ),
    "task-check-without-id": Bad(
        "tasks/broken-task/checks.yaml",
        'task: "Do the thing"\nchecks:\n  - id: has-file\n    type: file_exists\n'
        "    path: ok.txt\n  - type: file_exists\n    path: b.txt\n",
        6,
        "checks[1].id",
        ("required field is missing",),
    ),
    "task-severity-invalid": Bad(
        "tasks/broken-task/checks.yaml",
        'task: "Do the thing"\nchecks:\n  - id: has-file\n    type: file_exists\n'
        "    path: ok.txt\n    severity: CRITICAL\n",
        6,
        "checks[0].severity",
        ("'HIGH'", "'MEDIUM'", "'LOW'", "'CRITICAL'"),
    ),
    "task-unknown-header-field": Bad(
        "tasks/broken-task/checks.yaml",
        'tsak: "Do the thing"\nchecks:\n  - id: has-file\n    type: file_exists\n'
        "    path: ok.txt\n",
        1,
        "tsak",
        ("unknown field 'tsak'", "did you mean 'task'?"),
    ),
    "task-header-id": Bad(
        "tasks/broken-task/checks.yaml",
        'id: broken-task\ntask: "Do the thing"\nchecks:\n  - id: has-file\n'
        "    type: file_exists\n    path: ok.txt\n",
        1,
        "id",
        ("unknown field 'id': a task directory's case id is the name of its directory",),
        absent=("did you mean",),
    ),
    "task-header-case-field": Bad(
        "tasks/broken-task/checks.yaml",
        'task: "Do the thing"\ncwd: fixtures/repo\nchecks:\n  - id: has-file\n'
        "    type: file_exists\n    path: ok.txt\n",
        2,
        "cwd",
        ("unknown field 'cwd': a field of a case file, not of a task directory's",),
    ),
    "task-checks-missing": Bad(
        "tasks/broken-task/checks.yaml",
        'task: "Do the thing"\n',
        1,
        "checks",
        ("non-empty list of checks",),
    ),
    "task-duplicate-check-id": Bad(
        "tasks/broken-task/checks.yaml",
        'task: "Do the thing"\nchecks:\n  - id: twice\n    type: file_exists\n'
        "    path: ok.txt\n  - id: twice\n    type: file_absent\n    path: b.txt\n",
        6,
        "checks[1].id",
        ("duplicate check id 'twice'",),
    ),
}


def broken_suite(bad: Bad) -> dict[str, str | bytes | None]:
    """The broken file, a valid case, and the graded directory that satisfies it; links
    and FIFOs are left to :func:`make_broken_suite`."""
    files: dict[str, str | bytes | None] = {"graded/ok.txt": "ok\n", "evals/good.yaml": VALID_CASE}
    for path, content in {**bad.extra, bad.path: bad.content}.items():
        if not isinstance(content, (Link, Fifo)):
            files[path] = content
    return files


def make_broken_suite(make_suite: SuiteBuilder, bad: Bad) -> Path:
    """The suite of :func:`broken_suite`, with its links and FIFOs."""
    root = make_suite(fixtures=broken_suite(bad))
    for path, content in {**bad.extra, bad.path: bad.content}.items():
        if not isinstance(content, (Link, Fifo)):
            continue
        place = root / path
        place.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Link):
            place.symlink_to(content.target)
        else:
            os.mkfifo(place)
    return root


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("--eval-workspace", "graded", "-p", "no:cacheprovider", *args)


def assert_reported(result: pytest.RunResult, bad: Bad) -> None:
    """One clear message for the broken file, and no traceback of our internals."""
    out = result.stdout.str() + result.stderr.str()
    where = bad.path if bad.line is None else f"{bad.path}:{bad.line}"
    head = f"case file error: {where}:" + (f" {bad.field}:" if bad.field else "")
    assert head in out, f"expected {head!r} in:\n{out}"
    message = out[out.index(head) :].split("\n=====")[0]
    for text in bad.expect:
        assert text in message, f"expected {text!r} in:\n{message}"
    for text in bad.absent:
        assert text not in message, f"did not expect {text!r} in:\n{message}"
    assert "Traceback" not in out
    assert "pytest_evalcases/" not in out
    assert "pydantic" not in out.lower().replace("pydantic_core", "")
    # A value over a limit is named, never echoed back whole.
    assert len(message) < 2_000, message[:2_000]
    assert result.ret != 0


@pytest.mark.parametrize("name", list(BAD))
def test_broken_file_is_one_clear_error(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, name: str
) -> None:
    bad = BAD[name]
    make_broken_suite(make_suite, bad)

    result = run(pytester)

    result.assert_outcomes(passed=bad.passed, errors=1)
    assert_reported(result, bad)


#: The entries of issue 10's campaign, also run with pytest's cache, twice: the first run
#: stores the valid file, the second collects it from the parse cache's index.
CACHED = [
    "tags-anchor-blowup",
    "yaml-alias-bomb",
    "id-invalid-and-huge",
    "prompt-too-long",
    "checks-too-many",
    "file-too-large",
    "cwd-absolute",
    "cwd-parent",
    "cwd-symlink-outside",
    "dangling-symlink",
    "symlink-loop",
    "fifo",
    "link-to-dev-null",
]


@pytest.mark.parametrize("name", CACHED)
def test_broken_file_is_one_clear_error_with_the_parse_cache(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, name: str
) -> None:
    bad = BAD[name]
    make_broken_suite(make_suite, bad)

    for _ in range(2):
        result = pytester.runpytest("--eval-workspace", "graded")

        result.assert_outcomes(passed=bad.passed, errors=1)
        assert_reported(result, bad)
    # What a broken file holds is never stored (the blow-up made 191 MB here).
    stored = pytester.path / ".pytest_cache" / "v" / "evalcases" / "parsed"
    assert stored.stat().st_size < 20_000
    assert str(pytester.path / bad.path) not in stored.read_text()


def test_a_fixture_directory_swapped_for_a_link_out_is_refused_when_its_case_runs(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    # A file that validated is collected from the parse cache's index, without loading
    # it: its `cwd` is checked again when its case runs, before anything is copied.
    make_suite(
        fixtures={
            "graded/secret.txt": "same\n",
            "evals/fixtures/repo/secret.txt": "same\n",
            "outside/secret.txt": "root:x:0:0\n",
            "evals/good.yaml": VALID_CASE.replace("ok.txt", "secret.txt"),
            "evals/linked.yaml": case(
                HEAD + "cwd: fixtures/repo\nchecks:\n" + UNCHANGED.format(path="secret.txt")
            ),
        }
    )
    pytester.runpytest("--eval-workspace", "graded").assert_outcomes(passed=2)
    fixture = pytester.path / "evals" / "fixtures" / "repo"
    (fixture / "secret.txt").unlink()
    fixture.rmdir()
    fixture.symlink_to(pytester.path / "outside")

    result = pytester.runpytest("--eval-workspace", "graded")

    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    assert (
        "case file error: evals/linked.yaml:4: cwd: fixture directory 'fixtures/repo' "
        f"leads, through a symbolic link, to {pytester.path / 'outside'}, outside the evals "
        "root" in out
    )
    assert "root:x" not in out
    assert "Traceback" not in out


TWINS = """\
cases:
  - id: valid
    defends: rules/x.md
    checks:
      - {type: file_exists, path: ok.txt}
  - id: other
    defends: rules/x.md
    checks:
      - {type: file_exists, path: ok.txt}
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_an_id_already_used_is_an_error_of_the_later_file_naming_the_first(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, xdist: list[str]
) -> None:
    # docs/case-format.md: a copied case whose id was not changed made both files
    # errors, and the original case stopped running.
    make_suite(
        fixtures={"graded/ok.txt": "ok\n", "evals/valid.yaml": TWINS, "evals/good.yaml": VALID_CASE}
    )
    pytester.runpytest("--eval-workspace", "graded").assert_outcomes(passed=3)
    # Collected after valid.yaml (pytest walks a directory in name order).
    write(pytester.path / "evals" / "valid2.yaml", "id: valid\n" + HEAD + "checks:\n" + CHECK)

    # With the parse cache (the old file collected from its index) and without; under
    # xdist, where every worker collects every file, with it only.
    for cache in ([], ["-p", "no:cacheprovider"])[: 1 if xdist else 2]:
        result = pytester.runpytest("--eval-workspace", "graded", *cache, *xdist)

        # The first file's cases all run; the copy is the error.
        result.assert_outcomes(passed=3, errors=1)
        out = result.stdout.str()
        assert (
            "case file error: evals/valid2.yaml:1: id: duplicate id 'valid': the case at "
            "evals/valid.yaml:2 has it already; ids are unique in the suite: give this case "
            "its own id" in out
        )
        assert "evals/valid.yaml:2: id: duplicate" not in out
        assert "Traceback" not in out
    saved = max((pytester.path / "evals" / "results").glob("*.json"))
    records = json.loads(saved.read_text())["cases"]
    errors = sorted((r["file"], r["error_kind"]) for r in records if r["outcome"] == "error")
    assert errors == [("evals/valid2.yaml", "case-file")]
    passed = sorted((r["file"], r["id"]) for r in records if r["outcome"] == "passed")
    assert ("evals/valid.yaml", "valid") in passed


SELECTIONS = {
    "marker": ("-m", "critical"),
    "keyword": ("-k", "something-else"),
    "tags": ("--eval-tags", "x"),
    "defends": ("--eval-defends", "rules/other.md"),
}


@pytest.mark.parametrize("selection", list(SELECTIONS))
def test_broken_file_reported_when_selection_deselects_everything(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, selection: str
) -> None:
    bad = BAD["unknown-check-type"]
    make_broken_suite(make_suite, bad)

    result = run(pytester, *SELECTIONS[selection])

    result.assert_outcomes(errors=1, deselected=1)
    assert "good-case" not in result.stdout.str()
    assert_reported(result, bad)


@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_broken_file_does_not_decide_a_run_of_other_tests_only(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, xdist: tuple[str, ...]
) -> None:
    """``pytest -k test_unit`` beside a broken case file, under ``filterwarnings =
    error`` (as itsdangerous has it): a section of the summary names the file, with no
    warning that the filter would make an internal error; the unit test decides the exit
    status. Selected with an eval case, it is an error again."""
    bad = BAD["unknown-check-type"]
    make_suite(fixtures=broken_suite(bad), ini="filterwarnings = error\n")
    pytester.makepyfile(test_unit="def test_unit():\n    pass\n")

    result = run(pytester, *xdist, "-k", "test_unit")

    result.assert_outcomes(passed=1, warnings=0, deselected=0 if xdist else 2)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*= case files not loaded =*",
            f"case file error: {bad.path}:*no eval case selected: not counted in the exit status*",
        ]
    )
    assert all(text in result.stdout.str() for text in bad.expect)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()

    everything = run(pytester, *xdist)

    everything.assert_outcomes(passed=2, errors=1)
    assert everything.ret == 2


@pytest.mark.parametrize("name", ["yaml-syntax", "unknown-check-type"])
@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_lone_broken_file_does_not_decide_a_run_of_other_tests_only(
    pytester: pytest.Pytester, xdist: tuple[str, ...], name: str
) -> None:
    """``pytest tests evals -k test_unit`` with a broken file as the only case: -k left
    nothing of the suite to deselect, and the run is still one of other tests only."""
    bad = BAD[name]
    assert isinstance(bad.content, str)
    write(pytester.path / bad.path, bad.content)
    write(pytester.path / "tests" / "test_unit.py", "def test_unit():\n    pass\n")

    result = pytester.runpytest(
        "-p", "no:cacheprovider", *xdist, "tests", "evals", "-k", "test_unit"
    )

    result.assert_outcomes(passed=1)
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"case file error: {bad.path}:*not counted in the exit status*"])
    assert pytester.runpytest("-p", "no:cacheprovider", *xdist, "tests", "evals").ret == 2


#: Broken files of one suite, beside three valid cases.
MANY_BROKEN = ["yaml-syntax", "missing-id", "regex-output-matches", "path-parent", "cwd-missing"]


def many_broken_suite() -> dict[str, str | bytes | None]:
    """Three valid cases, and each broken file of MANY_BROKEN as ``evals/<name>.yaml``."""
    files: dict[str, str | bytes | None] = {"graded/ok.txt": "ok\n"}
    for i in range(3):
        files[f"evals/good-{i}.yaml"] = VALID_CASE.replace("good-case", f"good-{i}")
    for name in MANY_BROKEN:
        content = BAD[name].content
        assert isinstance(content, str)
        files[f"evals/{name}.yaml"] = content
    return files


def test_many_broken_files_each_reported_and_the_run_continues(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    names = MANY_BROKEN
    make_suite(fixtures=many_broken_suite())

    result = run(pytester)

    result.assert_outcomes(passed=3, errors=len(names))
    out = result.stdout.str()
    for name in names:
        assert f"case file error: evals/{name}.yaml:{BAD[name].line}:" in out
    assert f"{len(names)} case files could not be loaded" in out
    assert "Traceback" not in out
    assert result.ret != 0


def test_case_without_prompt_is_valid_when_graded(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    # `prompt` is optional (docs/case-format.md, "Fields"): a case only ever graded needs none.
    make_broken_suite(make_suite, Bad("evals/other.yaml", "", None, "", ()))
    write(
        pytester.path / "evals" / "other.yaml",
        "id: no-prompt\ndefends: rules/x.md\nchecks:\n" + CHECK,
    )

    result = run(pytester)

    result.assert_outcomes(passed=2)
    assert result.ret == 0


def test_case_without_prompt_errors_when_an_agent_runs_it(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\neval_agent_command = true\n")
    write(
        pytester.path / "evals" / "no-prompt.yaml",
        "id: no-prompt\ndefends: rules/x.md\nchecks:\n" + CHECK,
    )

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "case 'no-prompt' has no prompt" in out
    assert "--eval-workspace" in out
    assert "Traceback" not in out


SYMLINK_CHECKS = {
    "file_matches": "  - type: file_matches\n    path: {path}\n    pattern: secret\n",
    "file_exists": "  - type: file_exists\n    path: {path}\n",
    "file_glob": "  - type: file_not_matches\n    path: '*.txt'\n    pattern: nothing\n",
    "directory": "  - type: directory_exists\n    path: {path}\n",
}


@pytest.mark.parametrize("check", list(SYMLINK_CHECKS))
def test_symlink_escaping_the_graded_directory_fails_its_check_and_is_not_read(
    pytester: pytest.Pytester, check: str
) -> None:
    outside = pytester.path / "outside"
    outside.mkdir()
    # A FIFO: opening it for reading would block, so a test that returns proves the
    # plugin never opened it.
    os.mkfifo(outside / "secret.txt")
    graded = pytester.path / "graded"
    graded.mkdir()
    (graded / "ok.txt").write_text("ok\n")
    link = "secret-dir" if check == "directory" else "link.txt"
    target = outside if check == "directory" else outside / "secret.txt"
    (graded / link).symlink_to(target)
    pytester.makeini("[pytest]\n")
    write(pytester.path / "evals" / "good.yaml", VALID_CASE)
    write(
        pytester.path / "evals" / "escape.yaml",
        "id: escape\ndefends: rules/x.md\nchecks:\n" + SYMLINK_CHECKS[check].format(path=link),
    )

    result = pytester.runpytest_subprocess(
        "--eval-workspace", "graded", "-p", "no:cacheprovider", timeout=60
    )

    # What the agent left is graded: the link fails the check that meets it.
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert f"{link} is a symlink leaving the workspace (to {target}): not read" in out
    assert "Traceback" not in out
    assert result.ret != 0


def test_symlink_in_fixture_escaping_a_live_workspace_is_an_error(
    pytester: pytest.Pytester,
) -> None:
    outside = pytester.path / "outside"
    outside.mkdir()
    os.mkfifo(outside / "secret.txt")
    fixture = pytester.path / "evals" / "fixtures" / "repo"
    fixture.mkdir(parents=True)
    (fixture / "README.md").write_text("hello\n")
    (fixture / "link.txt").symlink_to(outside / "secret.txt")
    pytester.makeini("[pytest]\neval_agent_command = echo done\n")
    write(
        pytester.path / "evals" / "escape.yaml",
        "id: escape\ndefends: rules/x.md\nprompt: go\ncwd: fixtures/repo\nchecks:\n"
        "  - type: file_matches\n    path: link.txt\n    pattern: secret\n",
    )
    write(
        pytester.path / "evals" / "fine.yaml",
        "id: fine\ndefends: rules/x.md\nprompt: go\ncwd: fixtures/repo\nchecks:\n"
        "  - type: file_matches\n    path: README.md\n    pattern: hello\n"
        "  - type: output_matches\n    pattern: ^done$\n",
    )

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)

    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    assert "path 'link.txt' resolves outside the workspace" in out
    assert "Traceback" not in out
