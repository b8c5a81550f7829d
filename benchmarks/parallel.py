"""Speed-up under pytest-xdist and --eval-concurrency for agent-bound cases.

Run from the repository root with ``python benchmarks/parallel.py``. It builds, in a
temporary directory, a suite of cases whose agent takes a fixed time (``sleep``, the way
a real agent spends its time waiting on a model), then times the suite serially, with
``-n N`` for each N given and with ``--eval-concurrency C`` for each C given,
alternating, and prints the speed-up serial / parallel against the ideal. Agent-bound
runs wait rather than compute, so N can exceed the number of cores.
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


def run(root: Path, count: int, args: list[str], expect: str | None = None) -> float:
    """Seconds that ``pytest -q ARGS`` takes on the suite in ``root``; its output must
    say ``expect`` (by default, that every case passed)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--eval-no-save"]
    cmd += args
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=ENV, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or (expect or f"{count} passed") not in proc.stdout:
        raise SystemExit(f"unexpected outcome:\n{proc.stdout}\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=24, help="cases in the suite")
    parser.add_argument("--seconds", type=float, default=1.0, help="agent time per case")
    parser.add_argument("--workers", type=int, nargs="*", default=[2, 4], help="-n N")
    parser.add_argument(
        "--concurrency", type=int, nargs="*", default=[8], help="--eval-concurrency C"
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per setting")
    args = parser.parse_args()

    settings: dict[str, tuple[list[str], int]] = {"serial": ([], 1)}
    for n in args.workers:
        settings[f"-n {n}"] = (["-n", str(n)], n)
    for c in args.concurrency:
        settings[f"--eval-concurrency {c}"] = ([f"--eval-concurrency={c}"], c)
    names = list(settings)
    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        root = Path(tmp)
        build(root, args.count, args.seconds)
        run(root, args.count, [])  # warm-up: byte code, caches
        runs: dict[str, list[float]] = {name: [] for name in names}
        for i in range(args.repeat):
            for name in names if i % 2 == 0 else reversed(names):
                runs[name].append(run(root, args.count, settings[name][0]))
            print(
                f"  round {i + 1}/{args.repeat}: "
                + ", ".join(f"{name} {runs[name][-1]:.1f}s" for name in names),
                flush=True,
            )

    serial = statistics.median(runs["serial"])
    print(f"\n{args.count} cases, agent {args.seconds:g}s each, median of {args.repeat}:")
    for name in names:
        took = statistics.median(runs[name])
        ideal = args.seconds * -(-args.count // settings[name][1])
        print(
            f"  {name:<24} {took:6.2f}s   speed-up {serial / took:4.2f} "
            f"(ideal {settings[name][1]})   / ideal time {took / ideal:4.2f}"
        )


if __name__ == "__main__":
    main()
