"""The messages of a broken case file: exact file, line, field and words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from pytest_evalcases.cases import diagnostics
from pytest_evalcases.cases.diagnostics import Problem, Source
from pytest_evalcases.cases.loading import load_case_file, load_task_dir
from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.run.checks import default_registry

REGISTRY = default_registry()


def _error(tmp_path: Path, text: str, name: str = "case.yaml") -> CaseFileError:
    evals = tmp_path / "evals"
    evals.mkdir(exist_ok=True)
    path = evals / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CaseFileError) as info:
        load_case_file(path, evals, REGISTRY)
    assert info.value.path == str(path)
    return info.value


def test_bad_yaml_names_the_line_and_column(tmp_path: Path) -> None:
    err = _error(tmp_path, "id: x\ndefends: [a\n")

    assert (err.line, err.field) == (3, "")
    assert err.reason == (
        "invalid YAML: while parsing a flow sequence, did not find expected ',' or ']' (column 1)"
    )


UNCLOSED = "id: x\ndefends: a\nprompt: {q}Commit it.\nchecks:\n  - type: file_exists\n    path: a\n"


@pytest.mark.parametrize("quote", ['"', "'"])
def test_a_quote_never_closed_is_reported_where_it_opened(tmp_path: Path, quote: str) -> None:
    # PyYAML reads on to the end of the file: its line was the last, 7.
    err = _error(tmp_path, UNCLOSED.format(q=quote))

    assert (err.line, err.field) == (3, "")
    assert err.reason == (
        "invalid YAML: the quoted string opened at column 9 is never closed (found "
        "unexpected end of stream at line 7, column 1)"
    )


def test_a_quote_closed_lines_later_by_another_is_reported_where_it_opened(
    tmp_path: Path,
) -> None:
    # The string runs on to the first quote of line 6, and the parser fails after it.
    text = UNCLOSED.format(q='"').replace("path: a", 'path: "a"')
    err = _error(tmp_path, text + "  - type: file_absent\n    path: b\n")

    assert err.line == 3
    assert err.reason == (
        "invalid YAML: the quoted string opened at column 9 runs on over the lines after it "
        "until a quote on line 6 closes it (did not find expected key at line 6, column 12): "
        "is its closing quote missing?"
    )


def test_a_quoted_string_over_several_lines_is_not_blamed_for_what_follows(
    tmp_path: Path,
) -> None:
    # A quoted string may span lines; one that swallowed no key is not a runaway quote.
    text = 'id: x\ndefends: a\nprompt: "Commit\n  it." extra\nchecks: []\n'
    err = _error(tmp_path, text)

    assert err.line == 4
    assert "quoted string" not in err.reason


def test_a_tab_in_yaml_is_named(tmp_path: Path) -> None:
    err = _error(tmp_path, "id: x\ndefends:\n\t- a\n")

    assert err.line == 3
    assert err.reason.endswith("; it is a tab: YAML indents with spaces only")


def test_bad_json_names_the_line_and_column(tmp_path: Path) -> None:
    err = _error(tmp_path, '{"id": "x",\n "defends": }\n', name="case.json")

    assert (err.line, err.field) == (2, "")
    assert err.reason == "invalid JSON: Expecting value (column 13)"


def test_a_missing_field_says_what_it_expects(tmp_path: Path) -> None:
    err = _error(tmp_path, "id: x\nprompt: hi\nchecks:\n  - type: file_exists\n    path: a\n")

    assert (err.line, err.field) == (1, "defends")
    assert err.reason == (
        "required field is missing; expected the rule, skill, hook or config file the case "
        "protects (a path)"
    )
    assert str(err) == f"{err.path}:1: defends: {err.reason}"


def test_an_unknown_field_suggests_the_known_one_and_hides_its_missing_twin(
    tmp_path: Path,
) -> None:
    text = "id: x\ndefends: rules/a.md\nchecks:\n  - type: output_matches\n    patern: a\n"
    err = _error(tmp_path, text)

    # The key's line, and no second problem for the missing `pattern`.
    assert (err.line, err.field) == (5, "checks[0].patern")
    assert err.reason == "unknown field 'patern'; did you mean 'pattern'?"


def _task_error(tmp_path: Path, header: str) -> CaseFileError:
    task = tmp_path / "tasks" / "01-service"
    task.mkdir(parents=True)
    (task / "checks.yaml").write_text(
        header + "checks:\n  - id: exists\n    type: file_exists\n    path: a.py\n"
    )
    with pytest.raises(CaseFileError) as info:
        load_task_dir(task / "checks.yaml", REGISTRY)
    return info.value


def test_an_id_in_a_task_directory_says_the_directory_is_the_id(tmp_path: Path) -> None:
    # It said "unknown field 'id'; did you mean 'id'?".
    err = _task_error(tmp_path, "id: 01-service\ntask: Write it\n")

    assert (err.line, err.field) == (1, "id")
    assert err.reason == (
        "unknown field 'id': a task directory's case id is the name of its directory; "
        "remove `id:` (rename the directory to change the id)"
    )


def test_a_prompt_in_a_task_directory_belongs_in_task_md(tmp_path: Path) -> None:
    err = _task_error(tmp_path, "prompt: Write it\n")

    assert err.reason == (
        "unknown field 'prompt': a task directory's prompt is the text of its task.md; "
        "move it there"
    )


def test_a_case_field_in_a_task_directory_names_the_fields_it_has(tmp_path: Path) -> None:
    err = _task_error(tmp_path, "task: Write it\nsetup: git init\n")

    assert (err.line, err.field) == (2, "setup")
    assert err.reason == (
        "unknown field 'setup': a field of a case file, not of a task directory's "
        "checks.yaml (its fields: task, defends, description, tags, timeout, checks)"
    )


def test_a_misspelt_task_field_suggests_the_task_directory_field(tmp_path: Path) -> None:
    err = _task_error(tmp_path, "tsak: Write it\n")

    assert err.reason == "unknown field 'tsak'; did you mean 'task'?"


def test_a_task_field_in_a_case_file_says_where_it_belongs(tmp_path: Path) -> None:
    # It said "unknown field 'task'; did you mean 'task'?".
    err = _error(
        tmp_path, "id: x\ndefends: a\ntask: Write it\nchecks:\n  - type: file_exists\n    path: a\n"
    )

    assert (err.line, err.field) == (3, "task")
    assert err.reason == (
        "unknown field 'task': a field of a task directory's checks.yaml, not of a case "
        "file; a case file says what to do in `prompt` and what must hold in `description`"
    )


def test_an_unknown_field_is_never_its_own_suggestion() -> None:
    err = {"type": "extra_forbidden", "msg": "Extra inputs are not permitted"}
    # A check of a type no model has: every check type's fields are the candidates.
    data = {"type": "gone_plugin_type", "pattern": "x"}

    message = diagnostics.phrase(err, False, data, ["pattern"])

    assert message == "unknown field 'pattern'"


@pytest.mark.parametrize(
    ("loader", "line"),
    [
        (getattr(yaml, "CSafeLoader", yaml.SafeLoader), '    pattern: "fix\\s*:"\n'),
        (yaml.SafeLoader, '    pattern: "a\\d+"\n'),
    ],
    ids=["libyaml", "python"],
)
def test_an_unknown_escape_says_to_double_the_backslash_or_use_single_quotes(
    loader: type[yaml.SafeLoader], line: str
) -> None:
    text = "id: x\ndefends: a\nchecks:\n  - type: output_matches\n" + line
    with pytest.raises(yaml.YAMLError) as info:
        yaml.load(text, Loader=loader)
    escape = "\\s" if "\\s" in line else "\\d"

    err = diagnostics.yaml_error(Path("a.yaml"), text, info.value)

    assert err.line == 5
    assert err.reason.endswith(
        f"; {escape} is no escape in a double-quoted YAML string: write the backslash "
        f"twice (\"\\{escape}\") or use single quotes ('{escape}')"
    )


def test_a_bad_regex_points_at_the_pattern(tmp_path: Path) -> None:
    text = (
        "id: x\ndefends: rules/a.md\nchecks:\n"
        "  - type: file_matches\n    path: a.txt\n    pattern: '(unclosed'\n"
    )
    err = _error(tmp_path, text)

    assert (err.line, err.field) == (6, "checks[0].pattern")
    assert err.reason == (
        "invalid regular expression '(unclosed': missing ), unterminated subpattern at position 0"
    )


def test_an_unknown_check_type_lists_the_known_ones(tmp_path: Path) -> None:
    err = _error(tmp_path, "id: x\ndefends: a\nchecks:\n  - type: file_exist\n    path: a\n")

    assert (err.line, err.field) == (4, "checks[0].type")
    assert err.reason.startswith("unknown check type 'file_exist'; did you mean 'file_exists'?")


def test_several_problems_are_listed_with_their_lines(tmp_path: Path) -> None:
    text = "id: Bad Id\ndefends: a\ntimeout: -1\nchecks:\n  - type: file_exists\n    path: a\n"
    err = _error(tmp_path, text)

    assert (err.line, err.field) == (1, "id")
    assert err.reason == (
        "must be kebab-case: lowercase letters, digits and single hyphens (got 'Bad Id'); "
        "did you mean 'bad-id'?\n"
        "line 3: timeout: expected a number greater than 0 (got -1)"
    )


def test_more_problems_than_the_limit_are_counted(tmp_path: Path) -> None:
    extras = "".join(f"extra{i}: 1\n" for i in range(diagnostics.MAX_PROBLEMS + 2))
    err = _error(
        tmp_path, "id: x\ndefends: a\nchecks:\n  - type: file_exists\n    path: a\n" + extras
    )

    lines = err.reason.splitlines()
    assert len(lines) == diagnostics.MAX_PROBLEMS + 1
    assert lines[-1] == "... and 2 more problems"


def test_read_text_rejects_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "case.yaml"
    path.write_bytes(b"id: x\ndefends: \xff\n")

    with pytest.raises(CaseFileError) as info:
        diagnostics.read_text(path)

    assert info.value.line == 2
    assert info.value.reason == ("not UTF-8 text: byte 0xff at offset 15; save the file as UTF-8")


def test_empty_file_error() -> None:
    err = diagnostics.empty_file_error(Path("evals/a.yaml"))

    assert str(err) == (
        "evals/a.yaml:1: the file is empty; expected a case (id, defends, prompt, checks)"
    )


def test_json_and_yaml_errors_from_the_parsers_exceptions() -> None:
    with pytest.raises(json.JSONDecodeError) as json_info:
        json.loads("[1,\n")
    with pytest.raises(yaml.YAMLError) as yaml_info:
        yaml.safe_load("a: [1\n")

    json_err = diagnostics.json_error(Path("a.json"), json_info.value)
    yaml_err = diagnostics.yaml_error(Path("a.yaml"), "a: [1\n", yaml_info.value)

    assert (json_err.line, json_err.reason) == (2, "invalid JSON: Expecting value (column 1)")
    assert yaml_err.line == 2
    assert yaml_err.reason.startswith("invalid YAML: while parsing a flow sequence")


def test_field_path() -> None:
    assert diagnostics.field_path(["cases", 1, "checks", 2, "pattern"]) == (
        "cases[1].checks[2].pattern"
    )
    assert diagnostics.field_path([]) == ""


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (None, "nothing (null)"),
        ([1], "a list"),
        ("s", "a string"),
        (3, "a number"),
        (1.5, "a number"),
        (True, "a boolean"),
        ({}, "dict"),
    ],
)
def test_kind_of(value: object, words: str) -> None:
    assert diagnostics.kind_of(value) == words


def test_source_line_of_goes_as_deep_as_the_path_exists() -> None:
    source = Source(Path("a.yaml"), "id: x\nchecks:\n  - type: a\n    path: b\n")

    assert source.line_of(["checks", 0, "path"]) == 4
    assert source.line_of(["checks", 0, "nope"]) == 3
    # The list itself starts at its first item; its key is on the line before.
    assert source.line_of(["checks", 5]) == 3
    assert source.line_of(["checks"], key=True) == 2
    assert source.line_of([]) == 1


def test_source_reads_the_file_only_when_a_line_is_needed(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("id: x\ndefends: a\n", encoding="utf-8")
    source = Source(path, None)

    err = source.error(["defends"], "value", "bad")

    assert (err.line, err.field, err.reason) == (2, "defends", "bad")
    assert source.text == "id: x\ndefends: a\n"


def test_source_of_text_that_does_not_compose_says_line_1() -> None:
    assert Source(Path("a.yaml"), "a: [\n").line_of(["a"]) == 1


def test_typos_first_drops_the_missing_twin_and_puts_unknown_fields_first() -> None:
    missing = Problem("missing", ("checks", 0, "pattern"), 4, "required field is missing")
    other = Problem("missing", ("defends",), 1, "required field is missing")
    unknown = Problem("extra_forbidden", ("checks", 0, "patern"), 5, "unknown field 'patern'")

    assert diagnostics.typos_first([other, missing, unknown]) == [unknown, other]


def test_data_loc_drops_union_tags_and_reports_missing_fields() -> None:
    data = {"checks": [{"type": "output_matches"}]}

    assert diagnostics.data_loc(data, ("checks", 0, "output_matches", "pattern")) == (
        ["checks", 0, "pattern"],
        True,
    )
    assert diagnostics.data_loc(data, ("checks", 0, "type")) == (["checks", 0, "type"], False)
