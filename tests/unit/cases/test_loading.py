"""Case files and task directories to LoadedCase values, and the parse cache."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Literal

import pytest

from pytest_evalcases.cases import limits, schema
from pytest_evalcases.cases.loading import LoadedCase, file_index, load_case_file, load_task_dir
from pytest_evalcases.cases.parsecache import CaseEntry, FileIndex, ParseCache
from pytest_evalcases.cases.registry import CheckContext, Outcome
from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.results.record import CheckRecord, JudgeRecord
from pytest_evalcases.run.checks import default_registry

REGISTRY = default_registry()

ONE = """\
id: no-trailer
defends: rules/git.md
severity: critical
description: No trailer
cwd: fixtures/repo
prompt: Commit it.
timeout: 30
tags: [git]
checks:
  - type: output_not_matches
    pattern: co-authored-by
  - type: tool_called
    tool: Bash
"""

MANY = """\
cases:
  - id: first
    defends: a.md
    checks:
      - type: file_exists
        path: a.txt

  - id: second
    defends: b.md
    severity: advisory
    checks:
      - type: file_absent
        path: b.txt
"""


@pytest.fixture
def evals(tmp_path: Path) -> Path:
    root = tmp_path / "evals"
    (root / "fixtures" / "repo").mkdir(parents=True)
    return root


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_one_case_per_file(evals: Path) -> None:
    path = _write(evals / "one.yaml", ONE)

    [case] = load_case_file(path, evals, REGISTRY)

    assert case == LoadedCase(
        id="no-trailer",
        file=path,
        line=0,
        evals_root=evals,
        defends="rules/git.md",
        severity="critical",
        checks=(
            schema.OutputNotMatches(type="output_not_matches", pattern="co-authored-by"),
            schema.ToolCalled(type="tool_called", tool="Bash"),
        ),
        description="No trailer",
        fixture=evals / "fixtures" / "repo",
        prompt="Commit it.",
        timeout=30.0,
        tags=("git",),
    )
    assert case.needs_transcript is True
    assert case.entry == CaseEntry(
        "no-trailer", 0, "critical", ("git",), "rules/git.md", prompt="Commit it."
    )


def test_a_json_case_file(evals: Path) -> None:
    text = '{"id": "j", "defends": "a.md", "checks": [{"type": "file_exists", "path": "a"}]}'
    [case] = load_case_file(_write(evals / "j.json", text), evals, REGISTRY)

    assert (case.id, case.severity, case.needs_transcript) == ("j", "normal", False)


def test_a_cases_list_gives_each_case_its_line(evals: Path) -> None:
    cases = load_case_file(_write(evals / "many.yaml", MANY), evals, REGISTRY)

    assert [(c.id, c.line, c.severity) for c in cases] == [
        ("first", 1, "normal"),
        ("second", 7, "advisory"),
    ]


def test_a_duplicate_id_names_the_first_one(evals: Path) -> None:
    path = _write(evals / "dup.yaml", MANY.replace("id: second", "id: first"))

    with pytest.raises(CaseFileError) as info:
        load_case_file(path, evals, REGISTRY)

    assert (info.value.line, info.value.field) == (8, "cases[1].id")
    assert info.value.reason == "duplicate id 'first' (also at line 2)"


def test_a_missing_fixture_directory(evals: Path) -> None:
    path = _write(evals / "one.yaml", ONE.replace("fixtures/repo", "fixtures/gone"))

    with pytest.raises(CaseFileError) as info:
        load_case_file(path, evals, REGISTRY)

    assert (info.value.line, info.value.field) == (5, "cwd")
    assert info.value.reason == f"fixture directory 'fixtures/gone' not found (relative to {evals})"


@pytest.mark.parametrize(
    ("cwd", "reason"),
    [
        ("/etc", "'/etc' is absolute; a fixture directory is relative to the evals root"),
        ("../../outside", "'../../outside' leaves the evals root"),
        ("fixtures/../../outside", "'fixtures/../../outside' leaves the evals root"),
    ],
)
def test_a_fixture_directory_outside_the_evals_root_is_refused(
    evals: Path, cwd: str, reason: str
) -> None:
    # Refused whether or not the directory is there: nothing outside is even looked at.
    path = _write(evals / "one.yaml", ONE.replace("fixtures/repo", cwd))

    with pytest.raises(CaseFileError) as info:
        load_case_file(path, evals, REGISTRY)

    assert (info.value.line, info.value.field) == (5, "cwd")
    assert info.value.reason == reason


def test_a_fixture_directory_that_links_out_of_the_evals_root_is_refused(
    evals: Path, tmp_path: Path
) -> None:
    (tmp_path / "outside").mkdir()
    (evals / "fixtures" / "out").symlink_to(tmp_path / "outside")
    # A link on the way there counts as well as a link at the end.
    (evals / "fixtures" / "hop").symlink_to(tmp_path)
    for cwd, lands in (("fixtures/out", "outside"), ("fixtures/hop/outside", "outside")):
        path = _write(evals / "one.yaml", ONE.replace("fixtures/repo", cwd))

        with pytest.raises(CaseFileError) as info:
            load_case_file(path, evals, REGISTRY)

        assert (info.value.line, info.value.field) == (5, "cwd")
        assert info.value.reason == (
            f"fixture directory {cwd!r} leads, through a symbolic link, to "
            f"{tmp_path / lands}, outside the evals root ({evals}); nothing is copied from it"
        )


def test_links_that_stay_below_the_evals_root_are_fine(evals: Path, tmp_path: Path) -> None:
    (evals / "fixtures" / "alias").symlink_to(evals / "fixtures" / "repo")
    (tmp_path / "linked-evals").symlink_to(evals)
    linked = tmp_path / "linked-evals"

    [inside] = load_case_file(
        _write(evals / "one.yaml", ONE.replace("fixtures/repo", "fixtures/alias")), evals, REGISTRY
    )
    # The evals root itself reached through a link (a checkout below a linked directory).
    [through] = load_case_file(linked / "one.yaml", linked, REGISTRY)

    assert inside.fixture == evals / "fixtures" / "alias"
    assert through.fixture == linked / "fixtures" / "alias"


def _refused(path: Path, evals: Path) -> str:
    """The reason ``path`` does not load, which must come back (a FIFO opened for
    reading would wait for a writer for ever: then the test fails, unblocked)."""
    outcome: list[BaseException] = []

    def load() -> None:
        try:
            load_case_file(path, evals, REGISTRY)
        except BaseException as exc:  # handed to the test's thread
            outcome.append(exc)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(timeout=30)
    if thread.is_alive():
        # Let a reader blocked on the FIFO go, then fail.
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(timeout=30)
        pytest.fail(f"loading {path.name} blocked")
    [error] = outcome
    assert isinstance(error, CaseFileError)
    assert error.path == str(path)
    return error.reason


def test_a_case_file_that_is_not_a_regular_file_is_refused_unopened(evals: Path) -> None:
    os.mkfifo(evals / "fifo.yaml")
    (evals / "dangling.yaml").symlink_to("nowhere.yaml")
    (evals / "loop.yaml").symlink_to("loop.yaml")
    (evals / "null.yaml").symlink_to(os.devnull)
    (evals / "dir.yaml").mkdir()

    assert _refused(evals / "fifo.yaml", evals) == (
        "not a regular file but a named pipe (FIFO); a case file must be a regular file "
        "(this one was not opened)"
    )
    assert _refused(evals / "dangling.yaml", evals) == (
        "a symbolic link to 'nowhere.yaml', which does not exist"
    )
    assert _refused(evals / "loop.yaml", evals) == (
        "a symbolic link that loops: it never reaches a file"
    )
    assert _refused(evals / "null.yaml", evals) == (
        "not a regular file but a character device (through the symbolic link to "
        f"{os.devnull!r}); a case file must be a regular file (this one was not opened)"
    )
    assert _refused(evals / "dir.yaml", evals).startswith("not a regular file but a directory")


def test_a_task_md_that_is_a_fifo_is_an_error_not_a_missing_prompt(tmp_path: Path) -> None:
    checks_yaml = _write(tmp_path / "t" / "checks.yaml", TASK)
    os.mkfifo(tmp_path / "t" / "task.md")

    with pytest.raises(CaseFileError) as info:
        load_task_dir(checks_yaml, REGISTRY)

    assert info.value.path == str(tmp_path / "t" / "task.md")
    assert "a named pipe (FIFO)" in info.value.reason


def test_a_duplicate_key_is_refused(evals: Path) -> None:
    path = _write(evals / "one.yaml", ONE + "id: again\n")

    with pytest.raises(CaseFileError) as info:
        load_case_file(path, evals, REGISTRY)

    assert info.value.line == 14
    assert info.value.reason == "invalid YAML: duplicate key 'id' (column 1)"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("2020-02-30", "'2020-02-30' is not a valid timestamp (day is out of range for month)"),
        ("!!bool abc", "'abc' is not a valid bool"),
        ("9" * 5000, "an integer of more than 4,300 digits is too large"),
    ],
    ids=["no-such-date", "bool-tag-on-a-word", "5000-digits"],
)
def test_a_value_yaml_cannot_build_is_an_error_at_its_line_and_field(
    evals: Path, value: str, reason: str
) -> None:
    path = _write(evals / "one.yaml", ONE.replace("timeout: 30", f"timeout: {value}"))

    with pytest.raises(CaseFileError) as info:
        load_case_file(path, evals, REGISTRY)

    assert (info.value.line, info.value.field) == (7, "timeout")
    assert info.value.reason.startswith("invalid YAML: ")
    assert reason in info.value.reason


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("golden.json", '[{"prompt": "hi", "expected": "hello"}]'),
        ("expected.json", '{"prompt_tokens": 12, "answer": "yes"}'),
        ("list.yaml", "- id: a\n  defends: rules/x.md\n"),
        ("scalar.yaml", "just some words\n"),
        ("comment.yaml", "# nothing yet\n"),
        ("empty.yml", ""),
        ("blank.json", "  \n\n\t\n"),
    ],
)
def test_a_file_that_is_not_a_case_mapping_is_data_and_holds_no_case(
    evals: Path, name: str, text: str
) -> None:
    """docs/case-format.md: a file is a case file when its top level is a mapping with
    checks, prompt, defends or cases (or it does not parse); any other holds no case."""
    cache = ParseCache()
    path = _write(evals / name, text)

    assert load_case_file(path, evals, REGISTRY, cache) == []
    assert load_case_file(path, evals, REGISTRY, cache) == []  # from the parse cache


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("defends: rules/x.md\n", "checks: required field is missing"),
        ("checks: []\n", "checks: expected a non-empty list"),
        ('{"prompt": "hi"', "invalid JSON"),
        ("cases: 3\n", "`cases:` must be a non-empty list"),
    ],
)
def test_a_file_with_one_case_key_or_that_does_not_parse_is_a_case_file(
    evals: Path, text: str, error: str
) -> None:
    suffix = ".json" if text.startswith("{") else ".yaml"
    with pytest.raises(CaseFileError) as info:
        load_case_file(_write(evals / f"bad{suffix}", text), evals, REGISTRY)

    assert error in str(info.value)


def test_a_data_file_over_the_size_limit_is_data_and_a_case_file_over_it_an_error(
    evals: Path,
) -> None:
    rows = [{"prompt": f"question {i}", "expected": "x" * 100} for i in range(10_000)]
    big = _write(evals / "golden.json", json.dumps(rows))
    assert big.stat().st_size > limits.FILE_BYTES
    big_case = _write(evals / "big.json", json.dumps({"defends": "a.md", "rows": rows}))

    assert load_case_file(big, evals, REGISTRY) == []
    with pytest.raises(CaseFileError) as info:
        load_case_file(big_case, evals, REGISTRY)
    assert "a case file may be at most 1,000,000 bytes" in info.value.reason


def test_an_unknown_field_beside_cases(evals: Path) -> None:
    with pytest.raises(CaseFileError) as info:
        load_case_file(_write(evals / "m.yaml", "version: 1\n" + MANY), evals, REGISTRY)

    assert (info.value.line, info.value.field) == (1, "version")
    assert info.value.reason == "unknown top-level field beside `cases:`: 'version'"


def test_the_parse_cache_serves_an_unchanged_file(evals: Path) -> None:
    path = _write(evals / "many.yaml", MANY)
    cache = ParseCache()

    first = load_case_file(path, evals, REGISTRY, cache)
    stored = cache.files[str(path)]
    again = load_case_file(path, evals, REGISTRY, cache)

    assert again == first
    assert stored[2] == [1, 7]
    assert cache.index(path, evals) == FileIndex(
        str(evals),
        (
            CaseEntry("first", 1, "normal", (), "a.md"),
            CaseEntry("second", 7, "advisory", (), "b.md"),
        ),
    )


def test_cached_data_that_does_not_validate_is_loaded_afresh(evals: Path) -> None:
    path = _write(evals / "many.yaml", MANY)
    cache = ParseCache()
    first = load_case_file(path, evals, REGISTRY, cache)
    # Same stamp, data that no longer validates: the file itself decides.
    cache.files[str(path)][1]["cases"][0]["checks"][0]["path"] = "/abs"

    assert load_case_file(path, evals, REGISTRY, cache) == first
    assert cache.files[str(path)][1]["cases"][0]["checks"][0]["path"] == "a.txt"


class Custom(schema.CheckModel):
    """A plugin's check type."""

    type: Literal["custom_check"]


def _custom(check: Custom, ctx: CheckContext) -> Outcome:
    return Outcome(True, "")


def test_no_file_index_when_a_check_type_comes_from_a_plugin(evals: Path) -> None:
    registry = default_registry()
    registry.register(Custom, _custom)
    path = _write(evals / "c.yaml", "id: c\ndefends: a.md\nchecks:\n  - type: custom_check\n")

    cases = load_case_file(path, evals, registry)

    assert file_index(evals, cases, registry) is None
    assert file_index(
        evals, load_case_file(_write(evals / "m.yaml", MANY), evals, REGISTRY), REGISTRY
    ) == FileIndex(
        str(evals),
        (
            CaseEntry("first", 1, "normal", (), "a.md"),
            CaseEntry("second", 7, "advisory", (), "b.md"),
        ),
    )


TASK = """\
task: Add a migration
defends: skills/db.md
tags: [db]
checks:
  - id: has-file
    type: file_exists
    path: db/*.xml
    severity: MEDIUM
  - id: mentions
    type: file_contains
    file: db/1.xml
    pattern: createTable
    severity: LOW
"""


def test_a_task_directory(tmp_path: Path) -> None:
    checks_yaml = _write(tmp_path / "add-migration" / "checks.yaml", TASK)
    _write(tmp_path / "add-migration" / "task.md", "Add a changelog.\n")

    case = load_task_dir(checks_yaml, REGISTRY)

    assert case == LoadedCase(
        id="add-migration",
        file=checks_yaml,
        line=0,
        evals_root=checks_yaml.parent,
        defends="skills/db.md",
        severity="normal",
        checks=(
            schema.FileExists(type="file_exists", id="has-file", path="db/*.xml"),
            schema.FileContains(
                type="file_contains", id="mentions", file="db/1.xml", pattern="createTable"
            ),
        ),
        description="Add a migration",
        prompt="Add a changelog.\n",
        tags=("db",),
        kind="task",
        check_severities=("normal", "advisory"),
    )


def test_a_task_check_needs_an_id(tmp_path: Path) -> None:
    checks_yaml = _write(
        tmp_path / "t" / "checks.yaml", "checks:\n  - type: file_exists\n    path: a\n"
    )

    with pytest.raises(CaseFileError) as info:
        load_task_dir(checks_yaml, REGISTRY)

    assert (info.value.line, info.value.field) == (2, "checks[0].id")
    assert info.value.reason == (
        "required field is missing; expected a check id (the task-directory format names "
        "every check)"
    )


def test_a_task_file_without_checks(tmp_path: Path) -> None:
    checks_yaml = _write(tmp_path / "t" / "checks.yaml", "task: nothing\n")

    with pytest.raises(CaseFileError) as info:
        load_task_dir(checks_yaml, REGISTRY)

    assert (info.value.line, info.value.field) == (1, "checks")
    assert info.value.reason == "`checks:` must be a non-empty list of checks"


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("My_Task", "; did you mean 'my-task'?"),
        ("AddMigration", "; did you mean 'add-migration'?"),
        ("two--hyphens", "; did you mean 'two-hyphens'?"),
        ("___", ""),
    ],
)
def test_a_task_directory_name_must_be_a_kebab_case_id(
    tmp_path: Path, name: str, hint: str
) -> None:
    checks_yaml = _write(tmp_path / name / "checks.yaml", TASK)

    with pytest.raises(CaseFileError) as info:
        load_task_dir(checks_yaml, REGISTRY)

    # The rule of a case file's `id` (docs/case-format.md, "Task-directory format").
    assert (info.value.path, info.value.field) == (str(checks_yaml), "")
    assert info.value.reason == (
        f"the directory name {name!r} is the case's id, which must be kebab-case: "
        f"lowercase letters, digits and single hyphens; rename the directory{hint}"
    )


def test_a_task_directory_name_longer_than_an_id_is_refused(tmp_path: Path) -> None:
    name = "a" * 101
    checks_yaml = _write(tmp_path / name / "checks.yaml", TASK)

    with pytest.raises(CaseFileError) as info:
        load_task_dir(checks_yaml, REGISTRY)

    assert "which must be at most 100 characters; rename the directory; did you mean" in str(
        info.value
    )


def test_a_task_failure_is_as_severe_as_its_most_severe_failed_check(tmp_path: Path) -> None:
    checks_yaml = _write(
        tmp_path / "t" / "checks.yaml",
        "checks:\n"
        + "".join(
            f"  - {{id: {name}, type: file_exists, path: {name}{severity}}}\n"
            for name, severity in (("high", ""), ("medium", ", severity: MEDIUM"))
        )
        + "  - {id: low, type: file_exists, path: low, severity: LOW}\n",
    )

    case = load_task_dir(checks_yaml, REGISTRY)

    assert case.severity == "critical"  # the marker: the highest of its checks
    assert case.failure_severity(_failed("low")) == "advisory"
    assert case.failure_severity(_failed("low", "medium")) == "normal"
    assert case.failure_severity(_failed("medium", "high")) == "critical"


def test_a_case_file_failure_is_as_severe_as_the_case(evals: Path) -> None:
    (case,) = load_case_file(_write(evals / "no-trailer.yaml", ONE), evals, REGISTRY)

    assert case.failure_severity(_failed("output_not_matches-0")) == "critical"


def test_an_uncalibrated_judge_failing_alone_is_an_advisory_failure(evals: Path) -> None:
    (case,) = load_case_file(_write(evals / "no-trailer.yaml", ONE), evals, REGISTRY)
    unsure = JudgeRecord(False, "no", "claude", blocking=False)
    sure = JudgeRecord(False, "no", "claude", blocking=True)

    assert case.failure_severity(_failed("judge-1", judge=unsure)) == "advisory"
    assert case.failure_severity(_failed("judge-1", judge=sure)) == "critical"
    # With a deterministic check failing too, the run fails as the case.
    both = [*_failed("judge-1", judge=unsure), *_failed("output_not_matches-0")]
    assert case.failure_severity(both) == "critical"


def _failed(*ids: str, judge: JudgeRecord | None = None) -> list[CheckRecord]:
    return [CheckRecord(i, "t", None, False, "failed", judge=judge) for i in ids]


# --- conversations (docs/conversations.md) ----------------------------------------------

TALK = """\
id: talk
defends: AGENTS.md
prompt: Fix the parser.
follow_ups:
  - The test is right; fix the code.
checks:
  - type: output_matches
    pattern: fixed
    turn: {turn}
"""


def test_follow_ups_and_a_turn_within_them_load(evals: Path) -> None:
    [case] = load_case_file(_write(evals / "talk.yaml", TALK.format(turn=2)), evals, REGISTRY)

    assert case.follow_ups == ("The test is right; fix the code.",)
    assert getattr(case.checks[0], "turn", None) == 2


@pytest.mark.parametrize(
    ("text", "line", "field", "reason"),
    [
        (
            TALK.format(turn=3),
            9,
            "checks[0].turn",
            "turn 3 does not exist: the case has 2 turns (`prompt` and 1 of `follow_ups`)",
        ),
        (
            TALK.format(turn=1).replace("follow_ups:\n  - The test is right; fix the code.\n", ""),
            7,
            "checks[0].turn",
            "`turn: 1`: the case has one prompt: a turn needs `follow_ups:`",
        ),
    ],
    ids=["past-the-last", "without-follow-ups"],
)
def test_a_turn_the_case_has_not_is_an_error_naming_file_line_and_field(
    evals: Path, text: str, line: int, field: str, reason: str
) -> None:
    path = _write(evals / "talk.yaml", text)

    with pytest.raises(CaseFileError) as info:
        load_case_file(path, evals, REGISTRY)

    assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)
    assert info.value.reason == reason


@pytest.mark.parametrize(
    ("replace", "field"),
    [
        (("type: output_matches\n    pattern: fixed", "type: file_exists\n    path: a"), "turn"),
        (("- The test is right; fix the code.", '- ""'), "follow_ups[0]"),
    ],
    ids=["turn-on-a-file-check", "empty-follow-up"],
)
def test_a_turn_on_another_check_and_an_empty_follow_up_are_errors(
    evals: Path, replace: tuple[str, str], field: str
) -> None:
    path = _write(evals / "talk.yaml", TALK.format(turn=2).replace(*replace))

    with pytest.raises(CaseFileError) as info:
        load_case_file(path, evals, REGISTRY)

    assert info.value.field is not None
    assert info.value.field.endswith(field)


REWORDED = """\
id: push
defends: rules/git.md
prompt: push my commit to origin main please
paraphrases:
  - Please get my commit onto origin/main.
  - can you push my latest commit to main on origin?
checks:
  - type: output_matches
    pattern: pushed
"""


def test_paraphrases_load_and_their_number_reaches_the_entry(evals: Path) -> None:
    [case] = load_case_file(_write(evals / "push.yaml", REWORDED), evals, REGISTRY)

    assert case.paraphrases == (
        "Please get my commit onto origin/main.",
        "can you push my latest commit to main on origin?",
    )
    assert (case.entry.prompt, case.entry.paraphrases) == (case.prompt, 2)
    # The parse cache keeps the entry as a list and reads it back alike.
    assert CaseEntry.from_list(case.entry.to_list()) == case.entry


@pytest.mark.parametrize(
    ("replace", "line", "field", "reason"),
    [
        (
            ("- Please get my commit onto origin/main.", "- push my commit to origin  main please"),
            5,
            "paraphrases[0]",
            "paraphrase 1 is the prompt",
        ),
        (
            (
                "- can you push my latest commit to main on origin?",
                "- Please get my commit onto\n    origin/main.",
            ),
            6,
            "paraphrases[1]",
            "paraphrase 2 is the same as paraphrase 1",
        ),
        (
            ("- can you push my latest commit to main on origin?", '- "  \\n "'),
            6,
            "paraphrases[1]",
            "paraphrase 2 is blank",
        ),
        (
            ("prompt: push my commit to origin main please\n", ""),
            4,
            "paraphrases",
            "a case with no `prompt:` has no paraphrases to run",
        ),
        (
            ("checks:", "perturb: false\nchecks:"),
            5,
            "paraphrases",
            "a case with `perturb: false` has no paraphrases to run",
        ),
    ],
    ids=["the-prompt", "twice", "blank", "no-prompt", "never-perturbed"],
)
def test_a_paraphrase_that_would_perturb_nothing_is_an_error_naming_line_and_field(
    evals: Path, replace: tuple[str, str], line: int, field: str, reason: str
) -> None:
    path = _write(evals / "push.yaml", REWORDED.replace(*replace))

    with pytest.raises(CaseFileError) as info:
        load_case_file(path, evals, REGISTRY)

    assert (info.value.line, info.value.field, info.value.reason) == (line, field, reason)


@pytest.mark.parametrize("value", ['[""]', "[]", '"one string"', "[[a, b]]"])
def test_paraphrases_must_be_a_list_of_non_empty_strings(evals: Path, value: str) -> None:
    text = re.sub(r"paraphrases:\n(  - .*\n)+", f"paraphrases: {value}\n", REWORDED)
    path = _write(evals / "push.yaml", text)

    with pytest.raises(CaseFileError) as info:
        load_case_file(path, evals, REGISTRY)

    assert str(info.value.field).startswith("paraphrases")
