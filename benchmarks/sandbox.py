"""The cost of the sandbox: a suite of agent-bound cases with ``eval_sandbox = bwrap``
against ``none``, side by side (docs/sandbox.md).

Run from the repository root with ``python benchmarks/sandbox.py`` (bubblewrap must be
installed). It builds, in temporary directories outside any git repository, two suites
of 50 cases whose command agent takes 0.2 seconds: ``agent``, whose checks read the
answer and the workspace (one sandboxed command per run, the agent), and ``commands``,
whose cases also have a ``setup`` and a command check (three per run). It times each
suite under each setting, alternating their order, and prints the medians and the ratio
bwrap / none of each suite (target: at most 1.05).

With ``--commands`` it times single commands instead, in this process: ``true`` run
200 times through the plugin's ``process.run``, with and without the sweep of what a
command leaves, bare and under bubblewrap (milliseconds a command, wall clock and this
process's CPU): what starting a command costs a run, apart from pytest.
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

CASES = {
    "agent": """\
id: case-{n:03d}
defends: AGENTS.md
prompt: "Fix the bug."
checks:
  - type: output_matches
    pattern: "^done$"
  - type: file_exists
    path: fixed.txt
""",
    "commands": """\
id: case-{n:03d}
defends: AGENTS.md
prompt: "Fix the bug."
setup: echo ready > setup.txt
checks:
  - type: output_matches
    pattern: "^done$"
  - type: command_succeeds
    command: test -f setup.txt -a -f fixed.txt
""",
}

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
SETTINGS = ("none", "bwrap")


def build(root: Path, case: str, count: int, seconds: float) -> None:
    (root / "evals").mkdir(parents=True)
    (root / "pytest.ini").write_text(
        f"[pytest]\neval_agent_command = sh -c 'sleep {seconds}; touch fixed.txt; echo done'\n"
    )
    for n in range(count):
        (root / "evals" / f"case-{n:03d}.yaml").write_text(case.format(n=n))


def run(root: Path, count: int, sandbox: str) -> float:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--eval-no-save"]
    cmd.append(f"--eval-sandbox={sandbox}")
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=ENV, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or f"{count} passed" not in proc.stdout:
        raise SystemExit(f"unexpected outcome:\n{proc.stdout}\n{proc.stderr}")
    if ("runs were not contained" in proc.stdout) != (sandbox == "none"):
        raise SystemExit(f"the summary does not match sandbox {sandbox}:\n{proc.stdout}")
    return elapsed


def commands(count: int, repeat: int) -> None:
    """Milliseconds a command through ``process.run``: swept or not, bare or in bwrap."""
    from pytest_evalcases import process
    from pytest_evalcases.sandbox import choose

    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        cwd = Path(tmp)
        box = choose("bwrap")
        argv = {"bare": ["true"], "bwrap": list(box.wrap(["true"], cwd=cwd, writable=(cwd,)))}
        sides = [(name, sweep) for name in argv for sweep in (False, True)]
        wall: dict[tuple[str, bool], list[float]] = {side: [] for side in sides}
        cpu: dict[tuple[str, bool], list[float]] = {side: [] for side in sides}
        for i in range(repeat):
            for name, sweep in sides if i % 2 == 0 else reversed(sides):
                used = resource.getrusage(resource.RUSAGE_SELF)
                start = time.perf_counter()
                for _ in range(count):
                    process.run(argv[name], cwd=cwd, sweep=sweep)
                elapsed = time.perf_counter() - start
                after = resource.getrusage(resource.RUSAGE_SELF)
                spent = after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime
                wall[name, sweep].append(elapsed / count * 1000)
                cpu[name, sweep].append(spent / count * 1000)
    print(f"\n`true` through process.run, {count} times, median of {repeat} (ms a command):")
    for name, sweep in sides:
        label = f"{name}, {'swept' if sweep else 'not swept'}"
        print(
            f"  {label:<18} wall {statistics.median(wall[name, sweep]):6.2f}"
            f"  cpu {statistics.median(cpu[name, sweep]):5.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=50, help="cases in the suite")
    parser.add_argument("--seconds", type=float, default=0.2, help="agent time per case")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per setting")
    parser.add_argument("--commands", action="store_true", help="time single commands")
    args = parser.parse_args()
    if shutil.which("bwrap") is None:
        raise SystemExit("bubblewrap is not installed: apt-get install bubblewrap")
    if args.commands:
        commands(200, args.repeat)
        return

    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        roots = {name: Path(tmp) / name for name in CASES}
        for name, case in CASES.items():
            build(roots[name], case, args.count, args.seconds)
        order = [(name, setting) for name in CASES for setting in SETTINGS]
        runs: dict[tuple[str, str], list[float]] = {key: [] for key in order}
        for i in range(args.repeat):
            for name, setting in order if i % 2 == 0 else reversed(order):
                runs[name, setting].append(run(roots[name], args.count, setting))
            print(
                f"  round {i + 1}/{args.repeat}: "
                + ", ".join(f"{n} {s} {runs[n, s][-1]:.2f}s" for n, s in order),
                flush=True,
            )

    print(f"\n{args.count} cases, agent {args.seconds:g}s each, median of {args.repeat}:")
    for name in CASES:
        none, bwrap = (statistics.median(runs[name, s]) for s in SETTINGS)
        print(
            f"  {name:<9} none {none:6.2f}s  bwrap {bwrap:6.2f}s  "
            f"ratio {bwrap / none:5.3f} (target <= 1.05)"
        )


if __name__ == "__main__":
    main()
