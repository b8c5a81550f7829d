"""How checks resolve the paths they read (docs/case-format.md, "Paths, globs and
symlinks"): :func:`inside` resolves as ``os.path.realpath`` does, whatever the path
holds, and refuses what ends outside the workspace."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_evalcases.errors import PathEscapeError
from pytest_evalcases.run.files import inside

RELS = [
    "",
    ".",
    "src/app.py",
    "./src//app.py",
    "src/",
    "src/missing/deeper.txt",
    "src/app.py/not-a-dir",
    "linked/app.py",
    "linked/../README.md",
    "src/../linked/app.py",
    "loop/x",
    "up/file",
    "escape/passwd",
    "escape/../ws/README.md",
    "locked/inner.txt",
]


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("")
    (ws / "README.md").write_text("")
    (ws / "linked").symlink_to("src")
    (ws / "loop").symlink_to("loop")
    (ws / "up").symlink_to("..")
    (tmp_path / "file").write_text("")
    (ws / "escape").symlink_to("/etc")
    (ws / "locked").mkdir()
    (ws / "locked" / "inner.txt").write_text("")
    (ws / "locked").chmod(0)
    yield ws
    (ws / "locked").chmod(0o755)


@pytest.mark.parametrize("rel", RELS)
def test_a_path_resolves_as_realpath_resolves_it(workspace: Path, rel: str) -> None:
    top = os.path.realpath(workspace)
    expected = os.path.realpath(os.path.join(top, rel))

    if expected == top or expected.startswith(top + os.sep):
        assert str(inside(workspace, rel)) == expected
    else:
        with pytest.raises(PathEscapeError, match="resolves outside the workspace"):
            inside(workspace, rel)
