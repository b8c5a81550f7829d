"""report/junit.py: an eval case's JUnit class name, and the file pytest wrote renamed
(the sessions: tests/plugin/test_collection.py)."""

from __future__ import annotations

from pathlib import Path

from pytest_evalcases.report.junit import classname, rename


def test_the_class_is_the_case_file_without_its_suffix_or_the_task_directory() -> None:
    assert classname("evals/toggles.yaml::x") == "evals.toggles"
    assert classname("tasks/01-service/checks.yaml::01-service") == "tasks.01-service"


def test_rename_changes_the_named_classes_only(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(
        '<testsuites><testsuite><testcase classname="evals.toggles.yaml" name="x"/>'
        '<testcase classname="tests.test_a" name="y"/></testsuite></testsuites>'
    )

    rename(path, {"evals.toggles.yaml": "evals.toggles"})

    text = path.read_text()
    assert 'classname="evals.toggles"' in text
    assert 'classname="tests.test_a"' in text
    rename(tmp_path / "missing.xml", {"a": "b"})
