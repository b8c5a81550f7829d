"""Bad input (docs/case-format.md, "What a broken file looks like"): every kind of broken
case file is ONE error naming the file, the line, the field and what is expected; the
other case files still collect and run.

Each scenario is a real pytest session holding the broken file beside a valid case that
is graded with ``--eval-workspace`` (so it runs and passes without an agent).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import pytest

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

HEAD = "defends: rules/x.md\nprompt: do it\n"


@dataclass(frozen=True)
class Bad:
    """A broken case file and what its one error must say."""

    #: Path of the broken file, relative to the pytester directory.
    path: str
    content: str | bytes
    #: 1-based line the message must point at; ``None`` when it cannot be known.
    line: int | None
    #: Field path the message must name (``""``: the file as a whole).
    field: str
    #: Substrings of the message saying what is wrong and what is expected.
    expect: tuple[str, ...]
    #: More files the scenario needs (path -> text, or ``None`` for a directory).
    extra: dict[str, str | None] = field(default_factory=dict)
    #: Valid cases that pass besides the one in ``evals/good.yaml``.
    passed: int = 1


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


def bad_field(field_line: str, line: int | None, field: str, *expect: str) -> Bad:
    """A broken ``evals/bad.yaml``: a valid case but for ``field_line``."""
    return bad_yaml(case(HEAD + field_line + "checks:\n" + CHECK), line, field, *expect)


BAD: dict[str, Bad] = {
    "yaml-syntax": bad_yaml(
        case("defends: [rules/x.md\nprompt: hi\n"), 3, "", "invalid YAML", "expected ',' or ']'"
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
    "empty-file": bad_yaml("", 1, "", "empty", "id, defends"),
    "whitespace-only": bad_yaml("  \n\n\t\n", 1, "", "empty"),
    "comment-only": bad_yaml("# nothing yet\n", 1, "", "got nothing"),
    "not-utf8": bad_yaml(
        b"id: bad\ndefends: rules/x.md\nprompt: caf\xe9\n",
        3,
        "",
        "not UTF-8",
        "0xe9",
        "save the file as UTF-8",
    ),
    "top-level-list": bad_yaml(
        "- id: bad\n  defends: rules/x.md\n",
        1,
        "",
        "expected a mapping",
        "`cases:` list",
        "got a list",
    ),
    "top-level-scalar": bad_yaml("just some words\n", 1, "", "expected a mapping", "got a string"),
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
    "duplicate-id-across-files": Bad(
        "evals/zz-bad.yaml",
        "id: good-twin\n" + HEAD + "checks:\n" + CHECK,
        1,
        "id",
        ("duplicate id 'good-twin'", "already defined in evals/aa-first.yaml:1"),
        extra={"evals/aa-first.yaml": "id: good-twin\n" + HEAD + "checks:\n" + CHECK},
        passed=2,
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
    """The broken file, a valid case, and the graded directory that satisfies it."""
    return {
        "graded/ok.txt": "ok\n",
        "evals/good.yaml": VALID_CASE,
        **bad.extra,
        bad.path: bad.content,
    }


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
    assert "Traceback" not in out
    assert "pytest_evalcases/" not in out
    assert "pydantic" not in out.lower().replace("pydantic_core", "")
    assert result.ret != 0


@pytest.mark.parametrize("name", list(BAD))
def test_broken_file_is_one_clear_error(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, name: str
) -> None:
    bad = BAD[name]
    make_suite(fixtures=broken_suite(bad))

    result = run(pytester)

    result.assert_outcomes(passed=bad.passed, errors=1)
    assert_reported(result, bad)


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
    make_suite(fixtures=broken_suite(bad))

    result = run(pytester, *SELECTIONS[selection])

    result.assert_outcomes(errors=1, deselected=1)
    assert "good-case" not in result.stdout.str()
    assert_reported(result, bad)


#: Broken files of one suite, beside three valid cases.
MANY_BROKEN = ["yaml-syntax", "missing-id", "regex-output-matches", "path-parent", "cwd-missing"]


def many_broken_suite() -> dict[str, str | bytes | None]:
    """Three valid cases, and each broken file of MANY_BROKEN as ``evals/<name>.yaml``."""
    files: dict[str, str | bytes | None] = {"graded/ok.txt": "ok\n"}
    for i in range(3):
        files[f"evals/good-{i}.yaml"] = VALID_CASE.replace("good-case", f"good-{i}")
    for name in MANY_BROKEN:
        files[f"evals/{name}.yaml"] = BAD[name].content
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
    make_suite(fixtures=broken_suite(Bad("evals/other.yaml", "", None, "", ())))
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
def test_symlink_escaping_the_graded_directory_is_an_error_and_not_read(
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

    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    assert f"path {link!r} resolves outside the workspace" in out
    assert "not read" in out
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
