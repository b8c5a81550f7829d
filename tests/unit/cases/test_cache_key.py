"""cases/parsecache.py: the parse cache's key follows every module of the package."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_evalcases import __version__
from pytest_evalcases.cases.parsecache import PACKAGE_DIR, cache_version


def package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "cases").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "cases" / "schema.py").write_text("A = 1\n")
    return root


def test_key_is_the_version_and_a_digest() -> None:
    version, _, digest = cache_version().rpartition(":")

    assert version == __version__
    assert len(digest) == 16
    assert cache_version() == cache_version()


def test_the_installed_package_is_the_one_keyed() -> None:
    assert (PACKAGE_DIR / "plugin" / "cache.py").is_file()
    assert (PACKAGE_DIR / "cases" / "schema.py").is_file()


def test_touching_a_module_changes_the_key(tmp_path: Path) -> None:
    root = package(tmp_path)
    before = cache_version(root)
    module = root / "cases" / "schema.py"
    stat = module.stat()

    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))

    assert cache_version(root) != before


def test_editing_adding_or_moving_a_module_changes_the_key(tmp_path: Path) -> None:
    root = package(tmp_path)
    keys = [cache_version(root)]
    module = root / "cases" / "schema.py"
    mtime = module.stat().st_mtime_ns

    module.write_text("A = 22\n")
    os.utime(module, ns=(mtime, mtime))
    keys.append(cache_version(root))
    (root / "run").mkdir()
    (root / "run" / "checks.py").write_text("")
    keys.append(cache_version(root))
    (root / "run" / "checks.py").rename(root / "cases" / "checks.py")
    keys.append(cache_version(root))

    assert len(set(keys)) == 4


def test_other_files_and_bytecode_do_not_change_the_key(tmp_path: Path) -> None:
    root = package(tmp_path)
    before = cache_version(root)

    (root / "py.typed").write_text("")
    (root / "cases" / "__pycache__").mkdir()
    (root / "cases" / "__pycache__" / "schema.py").write_text("")

    assert cache_version(root) == before
