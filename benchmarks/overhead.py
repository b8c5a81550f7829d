"""Per-run overhead: cases run and graded by the plugin against hand-written pytest
tests doing the same work.

Run from the repository root with ``python benchmarks/overhead.py`` (``--only runs`` or
``--only grading`` times one part alone). Every tree is built in a temporary directory
and run with ``pytest -q -p no:cacheprovider`` in a subprocess of this interpreter,
alternating, several times; it prints the medians side by side with their targets:

* **runs**: 200 cases, each copying a small fixture directory (6 files) into a fresh
  workspace, running ``setup`` (a shell command) there, then a no-op agent
  (``sh -c 'echo ...'``, the prompt on standard input), then three regex checks (one on
  the agent's output, two on files of the workspace). The plugin with
  ``--eval-sandbox none`` against one hand-written parametrized test doing the same
  copy, subprocesses and regexes: target <= 1.2. The same cases under
  ``--eval-sandbox bwrap``: what bubblewrap adds a run, target <= 10 ms. And, for the
  record, with ``eval_record = false``: what storing each run (its ``run.json``,
  trajectory and changes, docs/replay.md) costs of the overhead.
* **grading**: 300 task directories (one per case, with the agent's answer in
  ``.evalcases/output.txt``) graded with ``--eval-workspace`` against a hand-written
  parametrized test reading the same files and applying the same regexes: target
  <= 1.5.

The plugin also does what only it does: load and validate the case files, create,
snapshot and remove workspaces, check that a run stayed inside its workspace, build
the results records and store each run's answer and changes, print the ``eval gate``
summary. That difference is the overhead being measured.
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
from dataclasses import dataclass
from pathlib import Path

AGENT = "sh -c 'echo \"fix(service): bounds check\"; echo done'"
SETUP = "echo ready > setup.txt"
PROMPT = "Fix the off-by-one in the service and commit."
ANSWER = "fix(service): bounds check\ndone\n"

FIXTURE = {
    "README.md": "# repo\n",
    "src/app.py": "def main():\n    return 0\n",
    "src/service.py": "class Service:\n    limit = 10\n",
    "src/__init__.py": "",
    "tests/test_app.py": "def test_main():\n    assert True\n",
    "migrations/0001_init.sql": "CREATE TABLE t (id int);\n",
}

CASE = """\
id: case-{n:03d}
defends: rules/rule-{rule}.md
prompt: "{prompt}"
cwd: fixtures/repo
setup: {setup}
checks:
  - type: output_matches
    pattern: "^fix\\\\(service\\\\): "
  - type: file_matches
    path: src/app.py
    pattern: "^def main"
  - type: file_not_matches
    path: setup.txt
    pattern: error
"""

HAND = '''\
"""The same work as the plugin's cases, written by hand."""

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "evals" / "fixtures" / "repo"
AGENT = {agent!r}
SETUP = {setup!r}
PROMPT = {prompt!r}


@pytest.mark.parametrize("n", range({count}))
def test_case(n, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws, symlinks=True)
    subprocess.run(SETUP, shell=True, cwd=ws, check=True, capture_output=True)
    out = subprocess.run(
        shlex.split(AGENT), cwd=ws, input=PROMPT, capture_output=True, text=True, check=True
    ).stdout
    assert re.compile(r"^fix\\(service\\): ", re.M).search(out)
    assert re.compile(r"^def main", re.M).search((ws / "src" / "app.py").read_text())
    assert not re.compile(r"error", re.M).search((ws / "setup.txt").read_text())
'''

HAND_GRADING = '''\
"""The same grading as the plugin's --eval-workspace, written by hand."""

import re
from pathlib import Path

import pytest

GRADED = Path(__file__).parent / "graded"


@pytest.mark.parametrize("n", range({count}))
def test_case(n):
    ws = GRADED / f"case-{{n:03d}}"
    out = (ws / ".evalcases" / "output.txt").read_text()
    assert re.compile(r"^fix\\(service\\): ", re.M).search(out)
    assert re.compile(r"^def main", re.M).search((ws / "src" / "app.py").read_text())
    assert not re.compile(r"error", re.M).search((ws / "setup.txt").read_text())
'''

#: The part of the benchmark each timed side belongs to (``--only``).
PARTS = {
    "plugin": "runs",
    "plugin-bwrap": "runs",
    "plugin-unrecorded": "runs",
    "hand": "runs",
    "grading": "grading",
    "grading-hand": "grading",
}

#: Byte code caching as a user has it (see collect.py).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


@dataclass(frozen=True)
class Side:
    """One timed pytest session: the tree it runs in and its extra arguments."""

    tree: str
    args: tuple[str, ...]
    count: int


def write_fixture(root: Path) -> None:
    for rel, text in FIXTURE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def write_cases(tree: Path, count: int) -> None:
    write_fixture(tree / "evals" / "fixtures" / "repo")
    for n in range(count):
        (tree / "evals" / f"case-{n:03d}.yaml").write_text(
            CASE.format(n=n, rule=n % 20, prompt=PROMPT, setup=SETUP)
        )


def build(root: Path, count: int, graded: int) -> dict[str, Side]:
    """The trees and the sessions timed in them."""
    plugin, hand = root / "plugin", root / "hand"
    write_cases(plugin, count)
    (plugin / "pytest.ini").write_text(
        f"[pytest]\neval_agent = command\neval_agent_command = {AGENT}\n"
    )
    write_fixture(hand / "evals" / "fixtures" / "repo")
    (hand / "pytest.ini").write_text("[pytest]\n")
    (hand / "test_hand.py").write_text(
        HAND.format(agent=AGENT, setup=SETUP, prompt=PROMPT, count=count)
    )

    grading, grading_hand = root / "grading", root / "grading-hand"
    write_cases(grading, graded)
    (grading / "pytest.ini").write_text("[pytest]\n")
    for n in range(graded):
        task = grading / "graded" / f"case-{n:03d}"
        write_fixture(task)
        (task / "setup.txt").write_text("ready\n")
        (task / ".evalcases").mkdir()
        (task / ".evalcases" / "output.txt").write_text(ANSWER)
    grading_hand.mkdir()
    shutil.copytree(grading / "graded", grading_hand / "graded")
    (grading_hand / "pytest.ini").write_text("[pytest]\n")
    (grading_hand / "test_grading.py").write_text(HAND_GRADING.format(count=graded))

    return {
        "plugin": Side(str(plugin), ("--eval-sandbox=none",), count),
        "plugin-bwrap": Side(str(plugin), ("--eval-sandbox=bwrap",), count),
        "plugin-unrecorded": Side(
            str(plugin), ("--eval-sandbox=none", "-o", "eval_record=false"), count
        ),
        "hand": Side(str(hand), (), count),
        # The graded directories hold test modules of their own: each side names what it runs.
        "grading": Side(str(grading), ("evals", "--eval-workspace=graded"), graded),
        "grading-hand": Side(str(grading_hand), ("test_grading.py",), graded),
    }


def run(side: Side) -> tuple[float, float]:
    """Seconds for one ``pytest`` session of ``side``, wall clock and CPU (the session's
    and its commands'); checks that every case passed."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    # A temporary directory of the tree's own: pytest's clean-up of the numbered
    # directories that other sessions on the machine left is no part of either side.
    tmp = Path(side.tree) / ".tmp"
    tmp.mkdir(exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [*cmd, *side.args],
        cwd=side.tree,
        env={**ENV, "TMPDIR": str(tmp)},
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if proc.returncode != 0 or f"{side.count} passed" not in proc.stdout:
        raise SystemExit(f"unexpected outcome in {side}:\n{proc.stdout[-3000:]}\n{proc.stderr}")
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="cases run per tree")
    parser.add_argument("--graded", type=int, default=300, help="task directories graded")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per tree")
    parser.add_argument("--no-sandbox", action="store_true", help="leave out bwrap")
    parser.add_argument(
        "--only", choices=("runs", "grading"), help="time one part only: the runs or the grading"
    )
    args = parser.parse_args()
    parts = [args.only] if args.only else ["runs", "grading"]
    bwrap = "runs" in parts and not args.no_sandbox and shutil.which("bwrap") is not None

    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        sides = {
            name: side
            for name, side in build(Path(tmp), args.count, args.graded).items()
            if PARTS[name] in parts and (bwrap or name != "plugin-bwrap")
        }
        for side in sides.values():
            run(side)  # untimed: OS file cache and byte code warm
        runs: dict[str, list[float]] = {name: [] for name in sides}
        cpus: dict[str, list[float]] = {name: [] for name in sides}
        names = list(sides)
        for i in range(args.repeat):
            for name in names if i % 2 == 0 else reversed(names):
                elapsed, cpu = run(sides[name])
                runs[name].append(elapsed)
                cpus[name].append(cpu)
            print(
                f"  round {i + 1}/{args.repeat}: "
                + ", ".join(f"{name} {runs[name][-1]:.2f}s" for name in names),
                flush=True,
            )

    median = {name: statistics.median(times) for name, times in runs.items()}
    cpu = {name: statistics.median(times) for name, times in cpus.items()}

    def line(label: str, name: str) -> None:
        print(f"  {label:<34}{median[name]:6.2f}  {cpu[name]:6.2f}")

    print(f"\nmedian of {args.repeat} alternating rounds (seconds, wall clock and CPU):")
    if "runs" in parts:
        print(f"\n{args.count} runs (fixture copy, setup, no-op agent, 3 regex checks):")
        line("plugin, --eval-sandbox none", "plugin")
        if bwrap:
            line("plugin, --eval-sandbox bwrap", "plugin-bwrap")
        line("plugin, none, eval_record = false", "plugin-unrecorded")
        line("hand-written parametrized test", "hand")
        per_run = (median["plugin"] - median["hand"]) / args.count * 1000
        print(f"  plugin overhead per run           {per_run:6.1f} ms")
        stored = (median["plugin"] - median["plugin-unrecorded"]) / args.count * 1000
        print(f"  of which storing the run          {stored:6.1f} ms")
    if "grading" in parts:
        print(f"\n{args.graded} task directories graded (3 regex checks):")
        line("plugin, --eval-workspace", "grading")
        line("hand-written parametrized test", "grading-hand")
        per_dir = (median["grading"] - median["grading-hand"]) / args.graded * 1000
        print(f"  plugin overhead per directory     {per_dir:6.1f} ms")

    print()
    if "runs" in parts:
        ratio = median["plugin"] / median["hand"]
        unrecorded = median["plugin-unrecorded"] / median["hand"]
        verdict(
            f"runs: plugin (no sandbox) / hand-written = {ratio:.2f} "
            f"(eval_record = false: {unrecorded:.2f})",
            ratio <= 1.2,
            "<= 1.2",
        )
    if bwrap:
        sandbox = (median["plugin-bwrap"] - median["plugin"]) / args.count * 1000
        verdict(f"runs: bwrap adds {sandbox:.1f} ms a run", sandbox <= 10, "<= 10 ms")
    if "grading" in parts:
        ratio = median["grading"] / median["grading-hand"]
        cpu_ratio = cpu["grading"] / cpu["grading-hand"]
        verdict(
            f"grading: plugin / hand-written = {ratio:.2f} (CPU {cpu_ratio:.2f})",
            ratio <= 1.5,
            "<= 1.5",
        )


def verdict(figure: str, met: bool, target: str) -> None:
    print(f"{figure}: {'meets' if met else 'MISSES'} the target {target}")


if __name__ == "__main__":
    main()
