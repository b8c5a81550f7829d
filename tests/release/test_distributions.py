"""What PyPI gets: a wheel and an sdist that ``twine check --strict`` accepts, whose
README's links work off GitHub, whose metadata says where the project lives, and whose
sdist holds what the docs and tests use. Installed from the wheel alone into a fresh
virtual environment, the README's demo ends as the README says."""

from __future__ import annotations

import email.parser
import importlib.metadata
import importlib.util
import os
import re
import shutil
import site
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.docs.test_reference_docs import LINK, anchors

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY = "https://github.com/pytest-evalcases/pytest-evalcases"
INTO_REPOSITORY = re.compile(
    re.escape(REPOSITORY) + r"/(?P<kind>blob|tree)/main/(?P<path>[^#]+)(?:#(?P<anchor>.+))?$"
)

#: What a source tree holds that no distribution should: caches, builds, run leftovers.
LEFTOVERS = {".git", "build", "dist", ".venv", ".ci-venv", ".ci-venv-min", "__pycache__"}
LEFTOVERS |= {".pytest_cache", ".mypy_cache", ".ruff_cache"}


def test_the_readme_links_work_on_pypi() -> None:
    """PyPI shows the README away from the repository: a relative link there is dead.
    Every link into the repository names a file or directory it has, and a heading of it."""
    links = LINK.findall((ROOT / "README.md").read_text("utf-8"))
    assert len(links) > 30
    for link in links:
        assert link.startswith("https://"), f"relative link in README.md: {link}"
        if link == f"{REPOSITORY}#contributing":
            assert "contributing" in anchors(ROOT / "README.md")
            continue
        if not link.startswith(REPOSITORY + "/"):
            continue
        match = INTO_REPOSITORY.match(link)
        assert match is not None, link
        target = ROOT / match["path"]
        assert target.is_dir() if match["kind"] == "tree" else target.is_file(), link
        if match["anchor"]:
            assert match["anchor"] in anchors(target), link


def source_copy(dest: Path) -> Path:
    """The source tree without caches and leftovers: the build writes into what it builds."""

    def ignore(directory: str, names: list[str]) -> set[str]:
        ignored = {n for n in names if n in LEFTOVERS or n.endswith((".egg-info", ".runs"))}
        # What the example suites' runs wrote (example_cases/NAME/results).
        if Path(directory).parent.name == "example_cases" and "results" in names:
            ignored.add("results")
        return ignored

    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, f"{args}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.mark.slow
def test_build_check_install_and_run_the_demo(tmp_path: Path) -> None:
    for module in ("build", "twine"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install '.[test]')")
    if int(importlib.metadata.version("setuptools").split(".")[0]) < 77:
        pytest.skip("the offline build needs setuptools>=77 here (pip install '.[test]')")

    # Built without network: the build backend is the one installed here.
    source = source_copy(tmp_path / "source")
    dist = tmp_path / "dist"
    run(sys.executable, "-m", "build", "--no-isolation", "-o", dist, source, cwd=tmp_path)
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    checked = run(sys.executable, "-m", "twine", "check", "--strict", sdist, wheel, cwd=tmp_path)
    assert checked.count("PASSED") == 2

    with zipfile.ZipFile(wheel) as zipped:
        names = zipped.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = email.parser.Parser().parsestr(zipped.read(metadata_name).decode())
        entry_points = zipped.read(metadata_name.replace("METADATA", "entry_points.txt")).decode()
    assert "pytest_evalcases/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not [n for n in names if n.startswith(("tests/", "docs/", "example_cases/"))]
    assert "evalcases = pytest_evalcases.plugin.hooks" in entry_points
    assert "Framework :: Pytest" in metadata.get_all("Classifier", [])
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata["License-Expression"] == "MIT"
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL", []))
    assert set(urls) >= {"Homepage", "Documentation", "Changelog", "Issues"}
    assert all(u.startswith(REPOSITORY) for u in urls.values())

    # The sdist holds what the docs and the tests use: everything the source tree has
    # but git's own file.
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    unpacked = tmp_path / sdist.name.removesuffix(".tar.gz")
    for path in source.rglob("*"):
        if path.is_file() and path.name != ".gitignore":
            assert (unpacked / path.relative_to(source)).is_file(), path.relative_to(source)

    # A fresh environment: the wheel alone, its dependencies those already installed here
    # (a .pth line adds a directory without reading the .pth files in it, so an editable
    # install of the project there stays out).
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    purelib = run(
        python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=tmp_path
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("PYTEST")}
    run(
        python,
        "-m",
        "pip",
        "install",
        "-q",
        "--no-index",
        "--no-deps",
        wheel,
        cwd=tmp_path,
        env=env,
    )
    # Only now the dependencies: with them on the path first, pip would find this
    # project installed there (CI installs it into its environment) and install nothing.
    Path(purelib.strip(), "here.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    where = run(
        python,
        "-c",
        "import pytest_evalcases; print(pytest_evalcases.__file__)",
        cwd=tmp_path,
        env=env,
    )
    assert where.startswith(str(venv)), where
    version = run(venv / "bin" / "evalcases", "--version", cwd=tmp_path, env=env)
    assert version.split() == ["evalcases", metadata["Version"]]
    assert wheel.name.startswith(f"pytest_evalcases-{metadata['Version']}-")

    # The README's demo, from the sdist: exit status 1 (BLOCKED) and the eval gate section.
    demo = subprocess.run(
        [python, "-m", "pytest", "example_cases/drift-demo", "-p", "no:cacheprovider"],
        cwd=unpacked,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert demo.returncode == 1, demo.stdout + demo.stderr
    assert re.search(r"=+ eval gate =+", demo.stdout), demo.stdout
    assert "after-drift: 0/3 cases passed · Score: 5/9 (56%)" in demo.stdout
    assert "eval gate: BLOCKED" in demo.stdout
