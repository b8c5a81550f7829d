"""Where ``defends`` paths start outside pytest (``evalcases lint``): where pytest started
in the same directory has its rootdir."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.cases.rootdir import defends_root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``proj/evals/sub``, with no configuration file, no setup.py, no pyproject.toml."""
    (tmp_path / "proj" / "evals" / "sub").mkdir(parents=True)
    return tmp_path / "proj"


def test_without_configuration_the_invocation_directory_is_the_root(tree: Path) -> None:
    # pytest's rootdir: the common ancestor of the invocation directory and the
    # arguments, not the case file's own directory.
    assert defends_root(tree / "evals" / "sub", tree) == tree
    assert defends_root(tree / "evals" / "sub", tree / "evals") == tree / "evals"
    # Started beside the project, pytest roots at the directory holding both.
    (tree.parent / "elsewhere").mkdir()
    assert defends_root(tree / "evals" / "sub", tree.parent / "elsewhere") == tree.parent


def test_started_inside_the_case_directory_the_root_is_that_directory(tree: Path) -> None:
    assert defends_root(tree / "evals" / "sub", tree / "evals" / "sub") == tree / "evals" / "sub"


def test_a_git_directory_is_no_root_for_pytest(tree: Path) -> None:
    (tree / "evals" / ".git").mkdir()

    assert defends_root(tree / "evals" / "sub", tree) == tree


@pytest.mark.parametrize("marker", ["setup.py", "pyproject.toml"])
def test_a_setup_py_or_a_pyproject_toml_roots_pytest(tree: Path, marker: str) -> None:
    (tree / "evals" / marker).write_text("")

    assert defends_root(tree / "evals" / "sub", tree) == tree / "evals"


def test_a_pyproject_toml_outranks_a_nearer_setup_py(tree: Path) -> None:
    # pytest looks for a pyproject.toml at every level before it looks for a setup.py.
    (tree / "evals" / "setup.py").write_text("")
    (tree / "pyproject.toml").write_text("[project]\nname = 'x'\n")

    assert defends_root(tree / "evals" / "sub", tree / "evals") == tree


def test_a_configuration_file_decides_wherever_pytest_is_started(tree: Path) -> None:
    (tree / "evals" / "pytest.ini").write_text("[pytest]\neval_config_root = cfg\n")

    assert defends_root(tree / "evals" / "sub", tree) == tree / "evals" / "cfg"
    assert defends_root(tree / "evals" / "sub", tree.parent) == tree / "evals" / "cfg"
