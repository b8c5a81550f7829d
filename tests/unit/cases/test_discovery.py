"""Which paths are case files, and which directories pytest must not walk."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_evalcases.cases.discovery import Discovery, Found, looks_like_case

ROOT = Path("/repo")


def test_case_files_are_below_an_evals_directory() -> None:
    discovery = Discovery(ROOT)

    assert discovery.case_file(ROOT / "evals" / "a.yaml") == Found("case", ROOT / "evals")
    assert discovery.case_file(ROOT / "pkg" / "evals" / "sub" / "b.json") == Found(
        "case", ROOT / "pkg" / "evals"
    )
    assert discovery.case_file(ROOT / "evals" / "c.yml") == Found("case", ROOT / "evals")
    assert discovery.case_file(ROOT / "other" / "a.yaml") is None


def test_the_nearest_evals_directory_is_the_root() -> None:
    path = ROOT / "evals" / "x" / "evals" / "a.yaml"

    assert Discovery(ROOT).evals_root(path) == ROOT / "evals" / "x" / "evals"


def test_an_evals_directory_above_the_rootdir_does_not_count() -> None:
    rootdir = Path("/evals/project")

    assert Discovery(rootdir).case_file(rootdir / "a.yaml") is None


def test_a_rootdir_named_evals_is_an_evals_directory() -> None:
    rootdir = Path("/repo/evals")

    assert Discovery(rootdir).case_file(rootdir / "a.yaml") == Found("case", rootdir)
    assert Discovery(rootdir).evals_root(rootdir / "sub" / "b.json") == rootdir


def test_only_a_mapping_with_a_case_key_looks_like_a_case() -> None:
    for key in ("checks", "prompt", "defends", "cases"):
        assert looks_like_case({key: None, "other": 1})
    for data in ({"id": "x", "expected": 1}, [{"prompt": "x"}], "prompt", None, 3, {}):
        assert not looks_like_case(data)


def test_hidden_private_and_other_suffixes_are_not_case_files() -> None:
    discovery = Discovery(ROOT)

    assert discovery.case_file(ROOT / "evals" / "_schema.json") is None
    assert discovery.case_file(ROOT / "evals" / ".hidden.yaml") is None
    assert discovery.case_file(ROOT / "evals" / "notes.md") is None


def test_fixtures_and_results_hold_no_case_files() -> None:
    discovery = Discovery(ROOT)

    assert discovery.case_file(ROOT / "evals" / "fixtures" / "repo" / "a.yaml") is None
    assert discovery.case_file(ROOT / "evals" / "results" / "run.json") is None


def test_a_task_directory_is_found_anywhere() -> None:
    path = ROOT / "tasks" / "commit" / "checks.yaml"

    assert Discovery(ROOT).case_file(path) == Found("task", ROOT / "tasks" / "commit")


def test_eval_paths_count_as_evals_roots() -> None:
    extra = ROOT / "agent-tests"
    discovery = Discovery(ROOT, eval_paths=(extra,))

    assert discovery.case_file(extra / "deep" / "a.yaml") == Found("case", extra)


def test_eval_ignore_paths_hold_no_case_files() -> None:
    ignored = ROOT / "evals" / "drafts"
    discovery = Discovery(ROOT, ignore=(ignored,))

    assert discovery.case_file(ignored / "a.yaml") is None
    assert discovery.case_file(ignored / "t" / "checks.yaml") is None
    assert discovery.case_file(ROOT / "evals" / "a.yaml") == Found("case", ROOT / "evals")


def test_skip_dir_only_for_fixtures_and_results_below_an_evals_root(tmp_path: Path) -> None:
    for name in ("evals/fixtures", "evals/results", "fixtures", "evals/cases"):
        (tmp_path / name).mkdir(parents=True)
    discovery = Discovery(tmp_path)

    assert discovery.skip_dir(tmp_path / "evals" / "fixtures") is True
    assert discovery.skip_dir(tmp_path / "evals" / "results") is True
    assert discovery.skip_dir(tmp_path / "fixtures") is False
    assert discovery.skip_dir(tmp_path / "evals" / "cases") is False
    # A file named like the directory is not walked anyway.
    assert discovery.skip_dir(tmp_path / "evals" / "missing" / "fixtures") is False


def test_case_files_that_are_not_regular_files_are_named_for_collection(tmp_path: Path) -> None:
    # pytest's walk collects regular files and walks directories; these it passes over.
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "good.yaml").write_text("id: good\n")
    (evals / "sub.yaml").mkdir()
    (evals / "dangling.yaml").symlink_to("nowhere.yaml")
    (evals / "loop.json").symlink_to("loop.json")
    os.mkfifo(evals / "fifo.yml")
    (evals / "null.yaml").symlink_to(os.devnull)
    (evals / "_template.yaml").symlink_to("nowhere.yaml")
    (evals / "notes.txt").symlink_to("nowhere.txt")
    task = tmp_path / "tasks" / "t"
    task.mkdir(parents=True)
    (task / "checks.yaml").symlink_to("gone.yaml")
    (task / "other.yaml").symlink_to("gone.yaml")
    discovery = Discovery(tmp_path)

    found = discovery.passed_over(evals)

    assert found == [
        (evals / name, Found("case", evals))
        for name in ("dangling.yaml", "fifo.yml", "loop.json", "null.yaml")
    ]
    # Outside an evals root only a task directory's checks.yaml is a case file.
    assert discovery.passed_over(task) == [(task / "checks.yaml", Found("task", task))]
    assert discovery.passed_over(tmp_path / "tasks") == []


def test_a_link_to_a_directory_above_it_is_not_walked(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    (evals / "group").mkdir(parents=True)
    (evals / "again.yaml").symlink_to(".")
    (evals / "group" / "up").symlink_to("../..")
    (evals / "same").symlink_to(evals / "group")  # a link elsewhere is walked
    (tmp_path / "here").symlink_to(".")  # outside an evals root: pytest's own affair
    discovery = Discovery(tmp_path)

    assert discovery.skip_dir(evals / "again.yaml") is True
    assert discovery.skip_dir(evals / "group" / "up") is True
    assert discovery.skip_dir(evals / "same") is False
    assert discovery.skip_dir(evals / "group") is False
    assert discovery.skip_dir(tmp_path / "here") is False


def _never(name: str) -> bool:
    return False


def test_paths_may_hold_cases_through_an_evals_directory_or_a_task_directory(
    tmp_path: Path,
) -> None:
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "unit" / "test_a.py").write_text("")
    discovery = Discovery(tmp_path)

    assert not discovery.may_hold_cases([tmp_path / "tests"], _never)
    (tmp_path / "tests" / "unit" / "evals").mkdir()
    assert discovery.may_hold_cases([tmp_path / "tests"], _never)
    assert discovery.may_hold_cases([tmp_path / "tests" / "unit" / "evals"], _never)
    assert discovery.may_hold_cases([tmp_path / "tests" / "unit" / "evals" / "a.yaml"], _never)

    (tmp_path / "tasks" / "fix").mkdir(parents=True)
    assert not discovery.may_hold_cases([tmp_path / "tasks"], _never)
    (tmp_path / "tasks" / "fix" / "checks.yaml").write_text("")
    assert discovery.may_hold_cases([tmp_path / "tasks"], _never)
    assert discovery.may_hold_cases([tmp_path / "tasks" / "fix" / "checks.yaml"], _never)


def test_paths_may_hold_cases_of_eval_paths_below_them(tmp_path: Path) -> None:
    (tmp_path / "suite" / "cases").mkdir(parents=True)
    discovery = Discovery(tmp_path, eval_paths=(tmp_path / "suite" / "cases",))

    assert discovery.may_hold_cases([tmp_path], _never)
    assert discovery.may_hold_cases([tmp_path / "suite" / "cases"], _never)
    assert not Discovery(tmp_path).may_hold_cases([tmp_path], _never)


def test_the_walk_skips_what_pytest_does_not_enter_and_each_link_target_once(
    tmp_path: Path,
) -> None:
    (tmp_path / "node_modules" / "pkg" / "evals").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "again").symlink_to(tmp_path)
    (tmp_path / "src" / "up").symlink_to("..")

    assert not Discovery(tmp_path).may_hold_cases([tmp_path], lambda n: n == "node_modules")
    assert Discovery(tmp_path).may_hold_cases([tmp_path], _never)
