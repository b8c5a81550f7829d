"""Speed-up under pytest-xdist for agent-bound cases (SPEC section 7).

Run from the repository root with ``python benchmarks/parallel.py``. It builds, in a
temporary directory, a suite of cases whose agent takes a fixed time (``sleep``, the way
a real agent spends its time waiting on a model), then times the suite serially and
with ``-n N`` for each N given, alternating, and prints the speed-up serial / parallel
against the ideal N. Agent-bound runs wait rather than compute, so N can exceed the
number of cores.
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

CASE = """\
id: case-{n:03d}
defends: AGENTS.md
prompt: "Fix the bug."
setup: echo ready > setup.txt
checks:
  - type: output_matches
    pattern: "^done$"
  - type: file_exists
    path: setup.txt
"""

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def build(root: Path, count: int, seconds: float) -> None:
    (root / "evals").mkdir(parents=True)
    (root / "pytest.ini").write_text(
        f"[pytest]\neval_agent_command = sh -c 'sleep {seconds}; echo done'\n"
    )
    for n in range(count):
        (root / "evals" / f"case-{n:03d}.yaml").write_text(CASE.format(n=n))


def run(root: Path, count: int, workers: int) -> float:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--eval-no-save"]
    if workers:
        cmd += ["-n", str(workers)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=ENV, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or f"{count} passed" not in proc.stdout:
        raise SystemExit(f"unexpected outcome:\n{proc.stdout}\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=24, help="cases in the suite")
    parser.add_argument("--seconds", type=float, default=1.0, help="agent time per case")
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per setting")
    args = parser.parse_args()

    settings = [0, *args.workers]
    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        root = Path(tmp)
        build(root, args.count, args.seconds)
        runs: dict[int, list[float]] = {n: [] for n in settings}
        for i in range(args.repeat):
            for n in settings if i % 2 == 0 else reversed(settings):
                runs[n].append(run(root, args.count, n))
            print(
                f"  round {i + 1}/{args.repeat}: "
                + ", ".join(
                    f"{'serial' if n == 0 else f'-n {n}'} {runs[n][-1]:.1f}s" for n in settings
                ),
                flush=True,
            )

    serial = statistics.median(runs[0])
    print(f"\n{args.count} cases, agent {args.seconds:g}s each, median of {args.repeat}:")
    print(f"  serial  {serial:6.2f}s")
    for n in args.workers:
        took = statistics.median(runs[n])
        print(f"  -n {n:<4} {took:6.2f}s   speed-up {serial / took:4.2f} (ideal {n})")


if __name__ == "__main__":
    main()
