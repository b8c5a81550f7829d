"""Collection time: 1,000 case files against 1,000 one-test Python modules, and against
pytest's own example plugin for non-Python tests on the same files.

Run from the repository root with ``python benchmarks/collect.py``. It builds, in a
temporary directory, a tree of 1,000 realistic YAML case files under ``evals/`` and a
tree of 1,000 ``test_NNNN.py`` modules holding one trivial test each, then times
``pytest --collect-only -q`` on each in a subprocess of this interpreter, alternating
the trees, and prints the medians and the ratio cases / python (target <= 0.35: IDE
discovery is collection).

Beside it, the same case files collected by the pattern of pytest's documentation
example for non-Python tests (``doc/en/example/nonpython/conftest.py``): a plugin,
written into the temporary directory and loaded with ``-p`` (and ``-p no:evalcases``),
that turns each YAML file into one item with ``yaml.safe_load``. What the plugin does
beyond that (validating every case, its marks, ids and filters) is the difference;
target: cases / example <= 1.5, warm against warm and cold against cold.

Both trees are timed twice: *cold*, with their caches removed before the run (the first
run after a checkout: no ``__pycache__`` for the modules, no ``.pytest_cache`` holding
the plugin's parsed case files), and *warm*, with what the previous run left (every
later run, what a user sees day to day). The ratio that counts is warm against warm.
For scale, it also times one module with a 1,000-parameter test, pytest's start-up
on an empty directory (a floor that every run pays), and *bare*: a plugin that makes
each case file one file node and one item without reading it, the least that pytest
itself costs for 1,000 non-Python test files. No plugin that turns files into items
collects faster than bare: bare / python-warm is the floor of the ratio that counts.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHECKS = [
    '  - type: output_not_matches\n    pattern: "(?i)co-authored-by:\\\\s*claude"\n',
    '  - type: output_matches\n    pattern: "(?i)^fix\\\\(auth\\\\)|fix:"\n'
    "    description: conventional commit subject\n",
    "  - type: file_exists\n    path: src/service_{n}.py\n",
    '  - type: file_absent\n    path: "**/*.orig"\n',
    '  - type: file_matches\n    path: src/service_{n}.py\n    pattern: "^class \\\\w+Service"\n',
    "  - type: file_not_matches\n    path: migrations/0001_init.sql\n    pattern: DROP TABLE\n",
    "  - type: command_succeeds\n    command: python -m compileall -q src\n    timeout: 60\n",
    '  - type: tool_not_called\n    tool: shell\n    input: "grep -r"\n',
    "  - type: file_unchanged\n    path: migrations/0001_init.sql\n",
]

CASE = """\
id: case-{n:04d}
defends: rules/rule-{rule}.md
severity: {severity}
description: Case {n} keeps rule {rule} from drifting
cwd: fixtures/repo-{fixture}
setup: git init -q && git add -A
prompt: "Fix the off-by-one in service {n} and commit. Message: fix(service): bounds"
tags: [{tags}]
checks:
{checks}"""

PY_TEST = """\
def test_case_{n:04d}():
    assert {n} + 1 == {n1}
"""

PARAM_TEST = """\
import pytest


@pytest.mark.parametrize("n", range(1000))
def test_case(n):
    assert n + 1 > n
"""

INI = "[pytest]\n"

#: pytest's example plugin for YAML tests, one item per file (each case file holds one
#: case): collect a ``.yaml`` file, parse it with ``yaml.safe_load``, yield its item.
NONPYTHON = """\
import pytest
import yaml


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".yaml":
        return YamlFile.from_parent(parent, path=file_path)


class YamlFile(pytest.File):
    def collect(self):
        with self.path.open(encoding="utf-8") as f:
            raw = yaml.safe_load(f)
        yield YamlItem.from_parent(self, name=raw["id"], spec=raw)


class YamlItem(pytest.Item):
    def __init__(self, *, spec, **kwargs):
        super().__init__(**kwargs)
        self.spec = spec

    def runtest(self):
        for check in self.spec["checks"]:
            if "type" not in check:
                raise YamlException(self, check)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, YamlException):
            return f"usecase execution failed: {excinfo.value.args[1]!r}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"usecase: {self.name}"


class YamlException(Exception):
    \"\"\"Custom exception for error reporting.\"\"\"
"""
#: The module name of the example plugin (``-p``), written beside the trees.
NONPYTHON_PLUGIN = "nonpython_example"

#: pytest's own part of collecting a non-Python test file: a file node and one item,
#: the file never read.
BARE = """\
import pytest


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".yaml":
        return BareFile.from_parent(parent, path=file_path)


class BareFile(pytest.File):
    def collect(self):
        yield BareItem.from_parent(self, name=self.path.stem)


class BareItem(pytest.Item):
    def runtest(self):
        pass
"""
#: The module name of the bare plugin (``-p``), written beside the trees.
BARE_PLUGIN = "bare_items"

#: Byte code caching as a user has it: PYTHONDONTWRITEBYTECODE (set in some CI and
#: sandbox images) would make every run cold, for pytest's and the plugin's modules too.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
PYTHONPATH = os.environ.get("PYTHONPATH", "")
#: How the example plugin collects the case files instead of pytest-evalcases.
EXAMPLE = ("-p", "no:evalcases", "-p", NONPYTHON_PLUGIN)
#: How the bare plugin collects them.
BARE_ARGS = ("-p", "no:evalcases", "-p", BARE_PLUGIN)


def build(root: Path, count: int) -> dict[str, Path]:
    """The trees: ``cases``, ``python``, ``param`` and ``empty``."""
    rng = random.Random(1234)
    trees = {name: root / name for name in ("cases", "python", "param", "empty")}
    for tree in trees.values():
        tree.mkdir()
        (tree / "pytest.ini").write_text(INI)

    evals = trees["cases"] / "evals"
    for f in range(5):
        repo = evals / "fixtures" / f"repo-{f}"
        (repo / "src").mkdir(parents=True)
        (repo / "migrations").mkdir()
        (repo / "src" / "service.py").write_text("class Service:\n    pass\n")
        (repo / "migrations" / "0001_init.sql").write_text("CREATE TABLE t (id int);\n")
    for n in range(count):
        checks = rng.sample(CHECKS, rng.randint(3, 5))
        text = CASE.format(
            n=n,
            rule=n % 40,
            severity=rng.choice(["critical", "normal", "normal", "advisory"]),
            fixture=n % 5,
            tags=", ".join(rng.sample(["git", "style", "tests", "security", "docs"], 2)),
            checks="".join(c.format(n=n) for c in checks),
        )
        # Grouped by area as real suites are: evals/<area>/<case>.yaml
        path = evals / f"area-{n % 20:02d}" / f"case-{n:04d}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)

    for n in range(count):
        (trees["python"] / f"test_{n:04d}.py").write_text(PY_TEST.format(n=n, n1=n + 1))
    (trees["param"] / "test_param.py").write_text(PARAM_TEST)
    (root / f"{NONPYTHON_PLUGIN}.py").write_text(NONPYTHON)
    (root / f"{BARE_PLUGIN}.py").write_text(BARE)
    return trees


def clear_caches(tree: Path) -> None:
    """Remove byte code and pytest's cache (where the plugin keeps parsed case files)."""
    for cache in [*tree.rglob("__pycache__"), tree / ".pytest_cache"]:
        shutil.rmtree(cache, ignore_errors=True)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def collect(tree: Path, expected: int | None, *args: str) -> float:
    """CPU seconds (user and system) of one ``pytest --collect-only`` of ``tree``, which
    other work on a shared machine disturbs far less than the wall clock; checks what
    it found."""
    cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", *args]
    env = {**ENV, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree.parent), PYTHONPATH]))}
    start = children_cpu()
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    elapsed = children_cpu() - start
    if expected is not None:
        summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        if proc.returncode != 0 or not summary.startswith(f"{expected} tests collected"):
            raise SystemExit(f"unexpected collection in {tree}:\n{proc.stdout}\n{proc.stderr}")
    elif proc.returncode not in (0, 5):
        raise SystemExit(f"pytest failed in {tree}:\n{proc.stdout}\n{proc.stderr}")
    return elapsed


#: Collecting 1,000 case files against 1,000 one-test modules, both warm.
TARGET = 0.35
#: Collecting 1,000 case files against pytest's non-Python example on the same files.
EXAMPLE_TARGET = 1.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="files per tree")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per tree")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        trees = build(Path(tmp), args.count)
        runs: dict[str, list[float]] = {
            k: []
            for k in (
                "cases-cold",
                "python-cold",
                "example-cold",
                "cases-warm",
                "python-warm",
                "example-warm",
                "bare",
                "param",
                "empty",
            )
        }
        # One untimed round so that the interpreter's own files are in the OS cache.
        collect(trees["cases"], args.count)
        collect(trees["python"], args.count)
        for i in range(args.repeat):
            clear_caches(trees["python"])
            clear_caches(trees["cases"])
            runs["python-cold"].append(collect(trees["python"], args.count))
            runs["cases-cold"].append(collect(trees["cases"], args.count))
            runs["python-warm"].append(collect(trees["python"], args.count))
            runs["cases-warm"].append(collect(trees["cases"], args.count))
            clear_caches(trees["cases"])
            runs["example-cold"].append(collect(trees["cases"], args.count, *EXAMPLE))
            runs["example-warm"].append(collect(trees["cases"], args.count, *EXAMPLE))
            runs["bare"].append(collect(trees["cases"], args.count, *BARE_ARGS))
            runs["param"].append(collect(trees["param"], 1000))
            runs["empty"].append(collect(trees["empty"], None))
            print(
                f"  round {i + 1}/{args.repeat}: "
                + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in runs.items()),
                flush=True,
            )

    med = {k: statistics.median(v) for k, v in runs.items()}
    print()
    print(f"pytest --collect-only, median of {args.repeat} (CPU seconds):")
    print(f"  {args.count} case files, warm (parsed cache)     {med['cases-warm']:6.2f}")
    print(f"  {args.count} Python modules, warm .pyc           {med['python-warm']:6.2f}")
    print(f"  {args.count} case files, cold (no cache)         {med['cases-cold']:6.2f}")
    print(f"  {args.count} Python modules, cold (no .pyc)      {med['python-cold']:6.2f}")
    print(f"  {args.count} case files, pytest's example, warm  {med['example-warm']:6.2f}")
    print(f"  {args.count} case files, pytest's example, cold  {med['example-cold']:6.2f}")
    print(f"  {args.count} case files, bare items (not read)   {med['bare']:6.2f}")
    print(f"  1 module, 1000 parametrized tests           {med['param']:6.2f}")
    print(f"  empty directory (start-up floor)            {med['empty']:6.2f}")
    print()
    floor = med["empty"]
    for cases, other in (
        ("cases-warm", "python-warm"),
        ("cases-cold", "python-cold"),
        ("cases-warm", "example-warm"),
        ("cases-cold", "example-cold"),
        ("cases-warm", "bare"),
        ("bare", "python-warm"),
        ("cases-warm", "param"),
        ("cases-cold", "param"),
    ):
        ratio = med[cases] / med[other]
        net = (med[cases] - floor) / max(med[other] - floor, 1e-9)
        label = f"{cases} / {other}"
        print(f"  ratio {label:<26} {ratio:5.2f}   (start-up excluded: {net:5.2f})")
    target = med["cases-warm"] / med["python-warm"]
    verdict = "meets" if target <= TARGET else "MISSES"
    bare = med["bare"] / med["python-warm"]
    print(
        f"\ncases-warm / python-warm = {target:.2f}: {verdict} the target <= {TARGET} "
        f"(pytest's own floor, bare / python-warm: {bare:.2f})"
    )
    for side in ("warm", "cold"):
        example = med[f"cases-{side}"] / med[f"example-{side}"]
        verdict = "meets" if example <= EXAMPLE_TARGET else "MISSES"
        print(f"cases-{side} / example-{side} = {example:.2f}: {verdict} <= {EXAMPLE_TARGET}")


if __name__ == "__main__":
    main()
