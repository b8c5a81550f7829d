"""The plugin's own start-up cost: what every pytest run of a project that has it
installed pays, eval cases or not.

Run from the repository root with ``python benchmarks/imports.py``. Each round, in fresh
subprocesses of this interpreter:

- **import**: ``import pytest``, then the plugin's ``pytest11`` module
  (``pytest_evalcases.plugin.hooks``) timed on its own, and the modules of ours that
  it loaded counted;
- **session**: ``pytest -q`` of one trivial test (no eval case), with the plugin and
  with ``-p no:evalcases``; the difference is what the plugin costs such a run
  (importing, options, ``pytest_configure``, the hooks).

Each is measured in CPU time (user + system, of the process or the pytest subprocess),
which other work on a shared machine disturbs far less than the wall-clock time printed
beside it. The sides alternate in every round; it prints the medians of ``--repeat``
rounds (default 5) after one untimed warm-up round, and the ratios. Byte code caching
is on (``PYTHONDONTWRITEBYTECODE`` removed), as users have it. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

#: Prints the seconds the plugin's import took and how many of our modules it loaded.
IMPORT = """\
import sys, time
import pytest
start = time.process_time()
import pytest_evalcases.plugin.hooks
took = time.process_time() - start
ours = [m for m in sys.modules if m.startswith("pytest_evalcases")]
print(took, len(ours))
"""

PYTEST_IMPORT = """\
import time
start = time.process_time()
import pytest
print(time.process_time() - start)
"""


def python(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code], env=ENV, capture_output=True, text=True, check=True
    ).stdout
    return out.split()


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def session(tree: Path, *args: str) -> tuple[float, float]:
    """CPU and wall-clock seconds of one ``pytest -q`` in ``tree``."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, env=ENV, capture_output=True, text=True, check=False)
    elapsed, cpu = time.perf_counter() - start, children_cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"pytest failed in {tree}:\n{proc.stdout}\n{proc.stderr}")
    return cpu, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        tree = Path(tmp)
        (tree / "pytest.ini").write_text("[pytest]\n")
        (tree / "test_one.py").write_text("def test_one():\n    assert True\n")
        runs: dict[str, list[float]] = {
            k: [] for k in ("plugin", "pytest", "with", "without", "with-wall", "without-wall")
        }
        modules = 0
        python(IMPORT)
        session(tree)
        for i in range(args.repeat):
            took, count = python(IMPORT)
            runs["plugin"].append(float(took))
            modules = int(count)
            runs["pytest"].append(float(python(PYTEST_IMPORT)[0]))
            for side, extra in (("with", ()), ("without", ("-p", "no:evalcases"))):
                cpu, wall = session(tree, *extra)
                runs[side].append(cpu)
                runs[f"{side}-wall"].append(wall)
            print(
                f"  round {i + 1}/{args.repeat}: "
                + ", ".join(f"{k} {v[-1] * 1000:.0f} ms" for k, v in runs.items()),
                flush=True,
            )

    med = {k: statistics.median(v) * 1000 for k, v in runs.items()}
    print()
    print(f"median of {args.repeat}, CPU milliseconds (wall clock in brackets):")
    print(f"  import pytest                              {med['pytest']:7.1f}")
    print(
        f"  import the plugin, after pytest            {med['plugin']:7.1f}"
        f"   ({modules} modules of pytest_evalcases)"
    )
    print(
        f"  pytest -q, one test, with the plugin       {med['with']:7.1f}"
        f"   ({med['with-wall']:.0f})"
    )
    print(
        f"  pytest -q, one test, -p no:evalcases       {med['without']:7.1f}"
        f"   ({med['without-wall']:.0f})"
    )
    print()
    print(f"  ratio plugin import / pytest import        {med['plugin'] / med['pytest']:7.2f}")
    print(
        f"  ratio session with / without the plugin    {med['with'] / med['without']:7.2f}"
        f"   (+{med['with'] - med['without']:.0f} ms)"
    )


if __name__ == "__main__":
    main()
