"""--eval-concurrency against the ideal: 32 cases of a 1-second agent at concurrency 8,
in one pytest process, no xdist (docs/reference.md, "Concurrency").

Run from the repository root with ``python benchmarks/concurrency.py``. The ideal is
count / concurrency × seconds (4 s by default): every agent run overlapping perfectly,
with nothing else costing time. The ratio measured / ideal is what the plugin adds:
start-up, collection, workspaces, setups, checks and reporting. Target: at most 1.15.
For comparison it also times ``-n C`` (pytest-xdist with as many workers), alternating
the two in every round.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from parallel import build, run


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=32, help="cases in the suite")
    parser.add_argument("--seconds", type=float, default=1.0, help="agent time per case")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per setting")
    args = parser.parse_args()

    sides = {
        f"--eval-concurrency {args.concurrency}": [f"--eval-concurrency={args.concurrency}"],
        f"-n {args.concurrency}": ["-n", str(args.concurrency)],
    }
    ideal = args.seconds * -(-args.count // args.concurrency)
    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        root = Path(tmp)
        build(root, args.count, args.seconds)
        run(root, args.count, next(iter(sides.values())))  # warm-up
        runs: dict[str, list[float]] = {name: [] for name in sides}
        for i in range(args.repeat):
            for name in sides if i % 2 == 0 else reversed(list(sides)):
                runs[name].append(run(root, args.count, sides[name]))
            print(
                f"  round {i + 1}/{args.repeat}: "
                + ", ".join(f"{name} {runs[name][-1]:.2f}s" for name in sides),
                flush=True,
            )

    print(
        f"\n{args.count} cases, agent {args.seconds:g}s each, ideal {ideal:.2f}s, "
        f"median of {args.repeat}:"
    )
    for name in sides:
        took = statistics.median(runs[name])
        print(f"  {name:<24} {took:6.2f}s   / ideal {took / ideal:4.2f}")
    print("  target: --eval-concurrency / ideal <= 1.15")


if __name__ == "__main__":
    main()
