"""--eval-concurrency against the ideal: 32 cases of a 1-second agent at concurrency 8,
in one pytest process, no xdist (docs/reference.md, "Concurrency").

Run from the repository root with ``python benchmarks/concurrency.py``. The ideal is
count / concurrency × seconds (4 s by default): every agent run overlapping perfectly,
with nothing else costing time. The ratio measured / ideal is what the plugin adds:
start-up, collection, workspaces, setups, checks and reporting. Target: at most 1.15.
The headline runs without a sandbox; the same with bubblewrap (each run's ``setup``
and agent start in a sandbox of their own), ``-n C`` (pytest-xdist with as many
workers) and ``pytest --collect-only`` (the start-up and collection that no concurrency
shortens) are timed beside it, alternating in every round.

``--memory`` measures instead the peak memory (RSS) of the pytest process at concurrency
32 against concurrency 1, on 64 cases whose agent prints 24 MiB (the output cap keeps
8 MiB of it): memory stays bounded by the cap times the runs in flight (at most twice
the concurrency), whatever the suite's size.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from parallel import ENV, build, run

#: Prints 24 MiB on its standard output, then the answer the checks look for.
LOUD_AGENT = "python3 -c \"import sys; sys.stdout.write('x' * (24 << 20)); print(); print('done')\""

MEASURE = """
import resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=False)
if proc.returncode != 0:
    sys.exit(proc.stdout[-2000:] + proc.stderr[-2000:])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak_rss(root: Path, concurrency: int) -> float:
    """Peak RSS of ``pytest --eval-concurrency C`` in MiB."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--eval-no-save"]
    cmd += [f"--eval-concurrency={concurrency}"]
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, *cmd],
        cwd=root,
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return int(out.strip()) / 1024


def memory(repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        root = Path(tmp)
        build(root, 64, 0)
        (root / "pytest.ini").write_text(f"[pytest]\neval_agent_command = {LOUD_AGENT}\n")
        peaks: dict[int, list[float]] = {1: [], 32: []}
        for i in range(repeat):
            for c in (1, 32) if i % 2 == 0 else (32, 1):
                peaks[c].append(peak_rss(root, c))
            print(
                f"  round {i + 1}/{repeat}: "
                + ", ".join(f"c={c} {peaks[c][-1]:.0f} MiB" for c in peaks),
                flush=True,
            )
    one, many = (statistics.median(peaks[c]) for c in (1, 32))
    print(f"\n64 cases, agent output 24 MiB each (8 MiB kept), median of {repeat}:")
    print(f"  --eval-concurrency 1    {one:7.0f} MiB")
    print(f"  --eval-concurrency 32   {many:7.0f} MiB   ratio {many / one:4.2f}")
    print("  bounded: at most 2 x 32 runs' kept output (about 512 MiB) above the serial peak")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=32, help="cases in the suite")
    parser.add_argument("--seconds", type=float, default=1.0, help="agent time per case")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per setting")
    parser.add_argument("--memory", action="store_true", help="peak RSS at concurrency 32")
    args = parser.parse_args()
    if args.memory:
        memory(args.repeat)
        return

    c = args.concurrency
    sides = {
        f"--eval-concurrency {c}": [f"--eval-concurrency={c}", "--eval-sandbox=none"],
        f"--eval-concurrency {c}, bubblewrap": [f"--eval-concurrency={c}"],
        f"-n {c}": ["-n", str(c), "--eval-sandbox=none"],
        "start-up and collection": ["--collect-only"],
    }
    ideal = args.seconds * -(-args.count // c)
    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        root = Path(tmp)
        build(root, args.count, args.seconds)
        run(root, args.count, next(iter(sides.values())))  # warm-up
        runs: dict[str, list[float]] = {name: [] for name in sides}
        for i in range(args.repeat):
            for name in sides if i % 2 == 0 else reversed(list(sides)):
                expect = "collected" if name.startswith("start-up") else None
                runs[name].append(run(root, args.count, sides[name], expect))
            print(
                f"  round {i + 1}/{args.repeat}: "
                + ", ".join(f"{name} {runs[name][-1]:.2f}s" for name in sides),
                flush=True,
            )

    print(
        f"\n{args.count} cases, agent {args.seconds:g}s each, ideal {ideal:.2f}s, "
        f"median of {args.repeat}:"
    )
    floor = statistics.median(runs["start-up and collection"])
    for name in sides:
        took = statistics.median(runs[name])
        print(
            f"  {name:<34} {took:6.2f}s   / ideal {took / ideal:4.2f}"
            f"   / (ideal + start-up) {took / (ideal + floor):4.2f}"
        )
    print(f"  target: --eval-concurrency {c} / ideal <= 1.15 (no sandbox, as -n {c})")


if __name__ == "__main__":
    main()
