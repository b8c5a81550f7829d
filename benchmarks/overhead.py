"""Per-run overhead: 200 cases through the plugin against a hand-written pytest test
doing the same work.

Run from the repository root with ``python benchmarks/overhead.py``. Both trees are
built in a temporary directory and run with ``pytest -q -p no:cacheprovider`` in a
subprocess of this interpreter, alternating, several times; it prints the medians and
the ratio plugin / hand-written (target <= 1.2).

Each of the 200 runs does the same work in both trees:

* copy a small fixture directory (6 files) into a fresh directory in pytest's tmp dir,
* run ``setup`` (a shell command) there,
* run a no-op agent: ``sh -c 'echo ...'``, with the prompt on standard input,
* three regex checks: one on the agent's output, two on files of the workspace.

The plugin side also does what only it does: load and validate the case files, create
and remove workspaces, build the results records and print the ``eval gate`` summary.
That difference is the overhead being measured.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = "sh -c 'echo \"fix(service): bounds check\"; echo done'"
SETUP = "echo ready > setup.txt"
PROMPT = "Fix the off-by-one in the service and commit."

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
"""The same work as the plugin's 200 cases, written by hand."""

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

#: Byte code caching as a user has it (see collect.py).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def build(root: Path, count: int) -> dict[str, Path]:
    """The trees: ``plugin`` (case files) and ``hand`` (one parametrized test)."""
    trees = {name: root / name for name in ("plugin", "hand")}
    for tree in trees.values():
        for rel, text in FIXTURE.items():
            path = tree / "evals" / "fixtures" / "repo" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    (trees["plugin"] / "pytest.ini").write_text(
        f"[pytest]\neval_agent = command\neval_agent_command = {AGENT}\n"
    )
    for n in range(count):
        (trees["plugin"] / "evals" / f"case-{n:03d}.yaml").write_text(
            CASE.format(n=n, rule=n % 20, prompt=PROMPT, setup=SETUP)
        )
    (trees["hand"] / "pytest.ini").write_text("[pytest]\n")
    (trees["hand"] / "test_hand.py").write_text(
        HAND.format(agent=AGENT, setup=SETUP, prompt=PROMPT, count=count)
    )
    return trees


def run(tree: Path, count: int) -> float:
    """Seconds for one ``pytest`` run of ``tree``; checks that every case passed."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, env=ENV, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or f"{count} passed" not in proc.stdout:
        raise SystemExit(f"unexpected outcome in {tree}:\n{proc.stdout}\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="cases per tree")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per tree")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        trees = build(Path(tmp), args.count)
        runs: dict[str, list[float]] = {"plugin": [], "hand": []}
        run(trees["plugin"], args.count)  # untimed: OS file cache and byte code warm
        run(trees["hand"], args.count)
        for i in range(args.repeat):
            order = ("plugin", "hand") if i % 2 == 0 else ("hand", "plugin")
            for name in order:
                runs[name].append(run(trees[name], args.count))
            print(
                f"  round {i + 1}/{args.repeat}: plugin {runs['plugin'][-1]:.2f}s, "
                f"hand-written {runs['hand'][-1]:.2f}s",
                flush=True,
            )

    plugin = statistics.median(runs["plugin"])
    hand = statistics.median(runs["hand"])
    per_run_ms = (plugin - hand) / args.count * 1000
    print()
    print(f"pytest, {args.count} runs (fixture copy, setup, no-op agent, 3 regex checks),")
    print(f"median of {args.repeat} (seconds):")
    print(f"  plugin (case files)             {plugin:6.2f}")
    print(f"  hand-written parametrized test  {hand:6.2f}")
    print(f"  plugin overhead per run         {per_run_ms:6.1f} ms")
    ratio = plugin / hand
    verdict = "meets" if ratio <= 1.2 else "MISSES"
    print(f"\nplugin / hand-written = {ratio:.2f}: {verdict} the target <= 1.2")


if __name__ == "__main__":
    main()
