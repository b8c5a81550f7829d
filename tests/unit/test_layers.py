"""The import boundary and the one-way stack of the packages, read from the source with ``ast``.

Only ``plugin/`` may import pytest. The packages form a stack, and a module never imports
one higher up (function-level imports count too):

    root modules < agents < results < cases, recording < run < report < session < authoring
    < cli, plugin

Root modules are the top-level ``.py`` files; of ours they may import only ``errors``,
``kinds``, ``defaults``, ``text``, ``process``, ``reaper``, ``git`` and ``redact``.

No module reaches itself through the modules it imports (an import circle), whether the
imports sit at module level or in a function: only those under ``if TYPE_CHECKING:``,
which never run, are left out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import pytest_evalcases

PACKAGE = Path(pytest_evalcases.__file__).resolve().parent
TOP = "pytest_evalcases"

#: The stack, lowest first; "" stands for the root modules. Packages of one rank (cli and
#: plugin at the top) may not import each other.
STACK: dict[str, int] = {
    "": 0,
    "agents": 1,
    "results": 2,
    "cases": 3,
    # A run's model traffic: it finds a run's recording through the results file, and
    # run (the runner) and report (the transcript) read it; it needs nothing of cases.
    "recording": 3,
    "run": 4,
    "report": 5,
    "session": 6,
    "authoring": 7,
    "cli": 8,
    "plugin": 8,
}
#: Of ours, what a root module may import.
ROOT_MAY_IMPORT = frozenset(
    {"errors", "kinds", "defaults", "text", "process", "reaper", "git", "redact"}
)
#: The only package that may import pytest.
PYTEST_PACKAGE = "plugin"

#: The documented import paths of the check-type API (docs/case-format.md) are root modules
#: that re-export it from its packages: the one sanctioned upward import, kept for good.
RE_EXPORTS: frozenset[tuple[str, str]] = frozenset(
    {
        ("pytest_evalcases.checks", "pytest_evalcases.cases.registry"),
        ("pytest_evalcases.checks", "pytest_evalcases.run.checks"),
        ("pytest_evalcases.schema", "pytest_evalcases.cases.schema"),
        ("pytest_evalcases.schema", "pytest_evalcases.cases.fields"),
    }
)

#: Known violations, ``(importing module, imported module)``, each with its reason; a
#: fixed one must leave the list (an entry that no longer occurs fails the test).
KNOWN_VIOLATIONS: frozenset[tuple[str, str]] = frozenset()
ALLOWED = RE_EXPORTS | KNOWN_VIOLATIONS

#: Known import circles, each with its reason; a circle untied must leave the list.
KNOWN_CIRCLES: frozenset[tuple[str, ...]] = frozenset()


@dataclass(frozen=True)
class Import:
    """One import statement of a module: what it imports and where."""

    module: str  # the importing module, dotted, below pytest_evalcases ("" for __init__)
    target: str  # the imported module, dotted and absolute
    line: int


def module_name(path: Path, root: Path) -> str:
    """``pytest_evalcases.run.checks`` for ``<root>/run/checks.py``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([TOP, *parts])


def imports_of(path: Path, root: Path) -> Iterator[Import]:
    """Every import in the module, at any depth, relative ones made absolute."""
    name = module_name(path, root)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text("utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            target = from_target(node, name, is_package)
            yield Import(name, target, node.lineno)
            # ``from pytest_evalcases import cli`` imports the sub-package cli.
            if target == TOP or (node.level and not node.module):
                for alias in node.names:
                    yield Import(name, f"{target}.{alias.name}", node.lineno)


def from_target(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    """The absolute module a ``from ... import`` statement of module ``name`` names."""
    if not node.level:
        return node.module or ""
    base = name.split(".")
    # A package's own level-1 import is relative to itself, a module's to its parent.
    drop = node.level - 1 if is_package else node.level
    base = base[: len(base) - drop] if drop else base
    prefix = ".".join(base)
    return f"{prefix}.{node.module}" if node.module else prefix


def module_imports(path: Path, root: Path) -> Iterator[str]:
    """The modules of ours that the module imports, at any depth but under ``if
    TYPE_CHECKING:``: ``from pkg import mod`` names the module ``pkg.mod``."""
    name = module_name(path, root)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text("utf-8"), str(path))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name.startswith(TOP))
        elif isinstance(node, ast.ImportFrom):
            target = from_target(node, name, is_package)
            if not target.startswith(TOP):
                continue
            for alias in node.names:
                inner = f"{target}.{alias.name}"
                yield inner if _is_module(inner, root) else target


def _is_module(dotted: str, root: Path) -> bool:
    relative = Path(*dotted.split(".")[1:])
    return (root / relative).with_suffix(".py").is_file() or (root / relative).is_dir()


def circles(root: Path) -> list[tuple[str, ...]]:
    """Each set of modules that import each other in a circle, sorted (Tarjan's
    strongly connected components of the import graph, one module alone only when it
    imports itself)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        graph.setdefault(module_name(path, root), set()).update(module_imports(path, root))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[tuple[str, ...]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1 or module in graph.get(module, ()):
                found.append(tuple(sorted(component)))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def layer(dotted: str, root: Path) -> tuple[str, int] | None:
    """The package (or "" for a root module) of one of our modules and its rank; ``None``
    for ``pytest_evalcases`` itself and for names that are not ours."""
    parts = dotted.split(".")
    if parts[0] != TOP or len(parts) == 1:
        return None
    first = parts[1]
    if (root / first).is_dir():
        return first, STACK[first]
    return "", STACK[""]


def violations(root: Path) -> list[tuple[str, str, str]]:
    """``(importing module, imported module, why)`` for every breach of the boundary or stack."""
    found: list[tuple[str, str, str]] = []
    for path in sorted(root.rglob("*.py")):
        for imp in imports_of(path, root):
            importer = layer(imp.module, root)
            if importer is None:
                continue
            package, rank = importer
            head = imp.target.split(".")[0]
            if head in ("pytest", "_pytest") and package != PYTEST_PACKAGE:
                found.append((imp.module, imp.target, f"line {imp.line}: imports pytest"))
                continue
            imported = layer(imp.target, root)
            if imported is None:
                continue
            target_package, target_rank = imported
            if package == "":
                if target_package != "" or imp.target.split(".")[1] not in ROOT_MAY_IMPORT:
                    found.append(
                        (imp.module, imp.target, f"line {imp.line}: a root module imports it")
                    )
            elif target_package != package and target_rank >= rank:
                found.append(
                    (
                        imp.module,
                        imp.target,
                        f"line {imp.line}: {package} imports the higher {target_package}",
                    )
                )
    return found


def test_no_module_breaks_the_boundary_or_the_stack() -> None:
    new = [v for v in violations(PACKAGE) if (v[0], v[1]) not in ALLOWED]
    assert new == []


def test_every_known_violation_still_exists() -> None:
    """An allowlisted import that is gone must leave the list, so that it cannot return."""
    current = {(v[0], v[1]) for v in violations(PACKAGE)}
    assert sorted(ALLOWED - current) == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert [c for c in circles(PACKAGE) if c not in KNOWN_CIRCLES] == []


def test_every_known_circle_still_exists() -> None:
    assert sorted(KNOWN_CIRCLES - set(circles(PACKAGE))) == []


def test_every_package_has_a_place_in_the_stack() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(STACK) - {""}


def plant(root: Path, files: dict[str, str]) -> Path:
    """A fake ``pytest_evalcases`` source tree of the given files."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    for package in ("agents", "results", "cases", "run", "report", "session", "cli", "plugin"):
        init = root / package / "__init__.py"
        init.parent.mkdir(parents=True, exist_ok=True)
        if not init.exists():
            init.write_text("", "utf-8")
    (root / "__init__.py").touch()
    return root


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {"results/gate.py": "def f():\n    import pytest\n"},
            [("pytest_evalcases.results.gate", "pytest", "line 2: imports pytest")],
            id="pytest-in-a-function",
        ),
        pytest.param(
            {"run/runner.py": "from _pytest.nodes import Item\n"},
            [("pytest_evalcases.run.runner", "_pytest.nodes", "line 1: imports pytest")],
            id="_pytest",
        ),
        pytest.param(
            {"results/stats.py": "from ..session import state\n"},
            [
                (
                    "pytest_evalcases.results.stats",
                    "pytest_evalcases.session",
                    "line 1: results imports the higher session",
                ),
            ],
            id="relative-upward",
        ),
        pytest.param(
            {"agents/base.py": "def f():\n    from pytest_evalcases.cases import schema\n"},
            [
                (
                    "pytest_evalcases.agents.base",
                    "pytest_evalcases.cases",
                    "line 2: agents imports the higher cases",
                )
            ],
            id="absolute-upward-in-a-function",
        ),
        pytest.param(
            {"cli/main.py": "from pytest_evalcases.plugin import hooks\n"},
            [
                (
                    "pytest_evalcases.cli.main",
                    "pytest_evalcases.plugin",
                    "line 1: cli imports the higher plugin",
                )
            ],
            id="cli-imports-plugin",
        ),
        pytest.param(
            {"redact.py": "from pytest_evalcases.results import record\n"},
            [
                (
                    "pytest_evalcases.redact",
                    "pytest_evalcases.results",
                    "line 1: a root module imports it",
                )
            ],
            id="root-imports-a-package",
        ),
        pytest.param(
            {"atomic.py": "from . import sandbox\n"},
            [
                (
                    "pytest_evalcases.atomic",
                    "pytest_evalcases.sandbox",
                    "line 1: a root module imports it",
                )
            ],
            id="root-imports-a-root-module-outside-the-list",
        ),
        pytest.param(
            {
                "atomic.py": "from . import errors, text\nfrom .process import run\n",
                "report/html.py": "from ..results import gate\nfrom . import summary\n",
                "plugin/hooks.py": "import pytest\nfrom pytest_evalcases.session import state\n",
                "run/__init__.py": "from .checks import default_registry\n",
            },
            [],
            id="allowed",
        ),
    ],
)
def test_the_test_catches_a_planted_violation(
    tmp_path: Path, files: dict[str, str], expected: list[tuple[str, str, str]]
) -> None:
    assert violations(plant(tmp_path / TOP, files)) == expected


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {
                "plugin/nodes.py": "from pytest_evalcases.plugin import budget\n",
                "plugin/budget.py": "def f():\n    from pytest_evalcases.plugin.nodes import X\n",
            },
            [("pytest_evalcases.plugin.budget", "pytest_evalcases.plugin.nodes")],
            id="function-level",
        ),
        pytest.param(
            {
                "run/proxy.py": "from . import recording\n",
                "run/recording.py": "from .replay import Replay\n",
                "run/replay.py": "import pytest_evalcases.run.proxy\n",
                "run/checks.py": "from .replay import Replay\n",
            },
            [
                (
                    "pytest_evalcases.run.proxy",
                    "pytest_evalcases.run.recording",
                    "pytest_evalcases.run.replay",
                )
            ],
            id="three-modules",
        ),
        pytest.param(
            {
                "plugin/ahead.py": "from pytest_evalcases.plugin.nodes import EvalItem\n",
                "plugin/nodes.py": (
                    "from typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n    from pytest_evalcases.plugin.ahead import A\n"
                ),
            },
            [],
            id="typing-only",
        ),
    ],
)
def test_the_test_catches_a_planted_circle(
    tmp_path: Path, files: dict[str, str], expected: list[tuple[str, ...]]
) -> None:
    assert circles(plant(tmp_path / TOP, files)) == expected
