"""The plugin's start-up cost: what a pytest session with no eval case pays for having
the plugin installed (a team's unit tests, every xdist worker).

Run from the repository root with ``python benchmarks/startup.py``. The package is
installed as a user installs it, not as an editable checkout: its files are copied into
a temporary ``site`` directory beside a ``.dist-info`` whose ``RECORD`` lists them and
whose ``entry_points.txt`` names the ``pytest11`` module, put first on ``PYTHONPATH``.
That matters: pytest rewrites the asserts of every module of an entry-point plugin's
distribution as it imports them, which it finds through ``RECORD`` (an editable
install's ``RECORD`` lists a ``.pth`` file, so nothing of it is rewritten).

A tree of 20 trivial tests is then run with ``pytest -q`` with the plugin and with
``-p no:evalcases``, alternating the two sides in every round, in four settings:

- **cache on**: byte code caching as most users have it (``PYTHONDONTWRITEBYTECODE``
  removed), after an untimed round that fills the caches;
- **cache off**: ``PYTHONDONTWRITEBYTECODE=1`` (set in some CI and sandbox images, and
  on the machine this was written on) and an installation of its own that never had a
  ``__pycache__``: every module of ours is compiled, and assert-rewritten, on every run;
- the same two with ``-n 2``: the controller and two xdist workers, each of which loads
  the plugin (the figures are their sum).

It prints, per setting, the median of ``--repeat`` rounds (default 7) of CPU time (user
and system of pytest and its workers, which other work on a shared machine disturbs far
less than the wall clock printed beside it), the difference in milliseconds and the
ratio, and the median of the rounds' differences per process that loads the plugin
(target: at most 50 ms).
Beside them: how many of our modules the ``pytest11`` module loads on its own.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest_evalcases

#: Twenty trivial tests: a session of a project's own tests, no eval case.
TESTS = "".join(f"def test_{n:02d}():\n    assert {n} + 1 > {n}\n\n\n" for n in range(20))

#: Prints how many modules of ours importing the ``pytest11`` module (after pytest) loads.
COUNT = """\
import sys
import pytest
import pytest_evalcases.plugin.hooks
print(len([m for m in sys.modules if m.startswith("pytest_evalcases")]))
"""

SETTINGS = (
    ("cache on", "on", ()),
    ("cache off", "off", ()),
    ("cache on, -n 2", "on", ("-n", "2")),
    ("cache off, -n 2", "off", ("-n", "2")),
)
#: The processes of a setting that load the plugin: the controller and its workers.
PROCESSES = {"cache on, -n 2": 3, "cache off, -n 2": 3}


def install(package: Path, site: Path) -> None:
    """Copy ``package`` into ``site`` with a ``.dist-info`` that declares it, as a wheel
    install leaves it (no byte code)."""
    target = site / package.name
    shutil.copytree(package, target, ignore=shutil.ignore_patterns("__pycache__"))
    info = site / f"{package.name}-{pytest_evalcases.__version__}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: pytest-evalcases\nVersion: {pytest_evalcases.__version__}\n"
    )
    (info / "entry_points.txt").write_text(
        "[pytest11]\nevalcases = pytest_evalcases.plugin.hooks\n"
    )
    files = sorted(p.relative_to(site).as_posix() for p in target.rglob("*") if p.is_file())
    (info / "RECORD").write_text("".join(f"{name},,\n" for name in files))


def environment(site: Path, cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    env.pop("PYTHONPYCACHEPREFIX", None)
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    if cache == "off":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def session(tree: Path, env: dict[str, str], *args: str) -> tuple[float, float]:
    """CPU and wall-clock seconds of one ``pytest -q`` in ``tree``."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    elapsed, cpu = time.perf_counter() - start, children_cpu() - cpu
    if proc.returncode != 0 or "20 passed" not in proc.stdout:
        raise SystemExit(f"pytest failed in {tree}:\n{proc.stdout}\n{proc.stderr}")
    return cpu, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds")
    parser.add_argument(
        "--package",
        type=Path,
        default=Path(pytest_evalcases.__file__).parent,
        help="the pytest_evalcases directory to install (default: the one imported)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        root = Path(tmp)
        envs: dict[str, dict[str, str]] = {}
        trees: dict[str, Path] = {}
        for cache in ("on", "off"):
            # One installation and one tree per setting: "off" never sees "on"'s caches.
            install(args.package.resolve(), root / f"site-{cache}")
            envs[cache] = environment(root / f"site-{cache}", cache)
            trees[cache] = root / f"tree-{cache}"
            trees[cache].mkdir()
            (trees[cache] / "pytest.ini").write_text("[pytest]\n")
            (trees[cache] / "test_unit.py").write_text(TESTS)
        count = subprocess.run(
            [sys.executable, "-c", COUNT], env=envs["off"], capture_output=True, text=True
        ).stdout.strip()

        runs: dict[tuple[str, str, str], list[float]] = {}
        for _, cache, extra in SETTINGS:
            session(trees[cache], envs[cache], *extra)  # warm-up: the OS and .pyc caches
        for i in range(args.repeat):
            line = []
            for name, cache, extra in SETTINGS:
                for side, more in (("with", ()), ("without", ("-p", "no:evalcases"))):
                    cpu, wall = session(trees[cache], envs[cache], *extra, *more)
                    runs.setdefault((name, side, "cpu"), []).append(cpu)
                    runs.setdefault((name, side, "wall"), []).append(wall)
                with_, without = runs[name, "with", "cpu"][-1], runs[name, "without", "cpu"][-1]
                line.append(f"{name} +{(with_ - without) * 1000:.0f} ms")
            print(f"  round {i + 1}/{args.repeat}: " + ", ".join(line), flush=True)

    med = {key: statistics.median(values) * 1000 for key, values in runs.items()}
    print()
    print(f"importing pytest_evalcases.plugin.hooks loads {count} modules of pytest_evalcases")
    print(f"pytest -q, 20 tests, no eval case, median of {args.repeat}, CPU milliseconds")
    print("(wall clock in brackets; -n 2 sums the controller and both workers):")
    print(
        f"  {'setting':<18} {'with':>12} {'without':>12} {'difference':>16} {'ratio':>6}"
        "  per process"
    )
    for name, _, _ in SETTINGS:
        with_, without = med[name, "with", "cpu"], med[name, "without", "cpu"]
        wall = med[name, "with", "wall"] - med[name, "without", "wall"]
        # The median of each round's difference: the two sides of a round ran back to
        # back, so a neighbour's burst of work disturbs both less than it does the medians.
        rounds = zip(runs[name, "with", "cpu"], runs[name, "without", "cpu"], strict=True)
        paired = statistics.median(a - b for a, b in rounds)
        print(
            f"  {name:<18} {with_:7.0f} ({med[name, 'with', 'wall']:4.0f})"
            f" {without:7.0f} ({med[name, 'without', 'wall']:4.0f})"
            f" {with_ - without:+7.0f} ({wall:+5.0f}) {with_ / without:6.2f}"
            f"  {paired * 1000 / PROCESSES.get(name, 1):+7.0f}"
        )


if __name__ == "__main__":
    main()
