"""--eval-reuse against a live run: 8 cases of the real ``claude`` CLI against the
scripted model server answering every response after 2 seconds (docs/replay.md, "Reuse").

Run from the repository root with ``python benchmarks/replay.py`` and
``EVALCASES_AGENT_CLIS`` naming the ``node_modules/.bin`` that holds ``claude`` (``.ci/run``
installs the pinned CLIs). Each case is a small agent loop: ``--turns`` shell commands,
one per model response, then a final answer, each response 2 s late (``--delay``), as a
real model's would be. Every round runs the suite live (recorded), then again with
``--eval-reuse`` of that recording, unchanged: every request is answered from the
recording, none reaches the server. The ratio reuse / live is what a re-run of an
unchanged suite costs. Target: at most 0.1.

Beside them, the suite runs live against the server answering at once: the CLI's own
time (start-up, its agent loop, its tool calls), which a replay cannot save, since the
CLI runs again and re-executes its tools. reuse / that floor shows what the replaying
proxy adds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.model_server import Reply, Request, model_server  # noqa: E402

CASE = """id: case-{i}
defends: CLAUDE.md
prompt: Log {turns} steps in log.txt, then say done. MARK-case-{i}
checks:
  - {{type: file_matches, path: log.txt, pattern: "step {last}"}}
  - {{type: output_matches, pattern: "^done"}}
"""


def script(turns: int, delay: dict[str, float]):  # type: ignore[no-untyped-def]
    def answer(request: Request) -> Reply:
        time.sleep(delay["seconds"])
        step = request.tool_results
        if step < turns:
            return Reply(shell=f"echo step {step} >> log.txt", input_tokens=2000)
        return Reply(text="done", input_tokens=2000, output_tokens=20)

    return answer


def build(root: Path, count: int, turns: int) -> None:
    (root / "pytest.ini").write_text("[pytest]\neval_agent = claude\neval_sandbox = none\n")
    (root / "CLAUDE.md").write_text("Do as asked, briefly.\n")
    (root / "evals").mkdir()
    for i in range(count):
        text = CASE.format(i=i, turns=turns, last=turns - 1)
        (root / "evals" / f"case-{i}.yaml").write_text(text)


def run(root: Path, env: dict[str, str], *options: str) -> tuple[float, dict[str, object]]:
    """One session: its wall time and its results file."""
    before = set((root / "evals" / "results").glob("*.json"))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    written = set((root / "evals" / "results").glob("*.json")) - before
    return took, json.loads(written.pop().read_text()) if written else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=8, help="cases in the suite")
    parser.add_argument("--turns", type=int, default=6, help="tool calls per case")
    parser.add_argument("--delay", type=float, default=2.0, help="seconds per response")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds")
    args = parser.parse_args()
    clis = os.environ.get("EVALCASES_AGENT_CLIS")
    if not clis or not (Path(clis) / "claude").exists():
        print(
            "skipped: set EVALCASES_AGENT_CLIS to a node_modules/.bin holding the claude "
            "CLI (.ci/run installs the pinned versions)"
        )
        return

    with tempfile.TemporaryDirectory(prefix="evalcases-bench-") as tmp:
        root = Path(tmp) / "suite"
        root.mkdir()
        build(root, args.count, args.turns)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        delay = {"seconds": args.delay}
        with model_server("anthropic", script(args.turns, delay)) as server:
            env.update(
                PATH=f"{clis}{os.pathsep}{env['PATH']}",
                ANTHROPIC_BASE_URL=server.url,
                ANTHROPIC_API_KEY="sk-ant-bench-Zq7xK2pW9mR4",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                CLAUDE_CODE_MAX_RETRIES="0",
                CLAUDE_CONFIG_DIR=str(Path(tmp) / "claude-home"),
                HOME=str(Path(tmp) / "home"),
            )
            live: list[float] = []
            reuse: list[float] = []
            floor: list[float] = []
            for i in range(args.repeat):
                delay["seconds"] = 0.0
                floor.append(run(root, env, "--eval-no-save")[0])
                delay["seconds"] = args.delay
                took, _ = run(root, env)
                live.append(took)
                sent = len(server.requests)
                took, doc = run(root, env, "--eval-reuse")
                reuse.append(took)
                cases = doc["cases"]
                assert isinstance(cases, list)
                how = sorted({str(c["replay"]) for c in cases})
                went = len(server.requests) - sent
                print(
                    f"  round {i + 1}/{args.repeat}: no delay {floor[-1]:.2f}s, "
                    f"live {live[-1]:.2f}s, "
                    f"--eval-reuse {reuse[-1]:.2f}s (runs replayed: {', '.join(how)}; "
                    f"requests to the server: {went})",
                    flush=True,
                )
    one, two, cli = statistics.median(live), statistics.median(reuse), statistics.median(floor)
    responses = args.turns + 1
    print(
        f"\n{args.count} cases of claude, {responses} model responses each, "
        f"{args.delay:g}s per response, median of {args.repeat}:"
    )
    print(f"  live, recorded          {one:7.2f}s")
    print(f"  --eval-reuse, unchanged {two:7.2f}s   ratio {two / one:4.2f}")
    print(f"  live, no model delay    {cli:7.2f}s   (the CLI's own time)")
    print(f"  --eval-reuse / no delay {two / cli:7.2f}    (what the replaying proxy adds)")
    print("  target: ratio <= 0.1")


if __name__ == "__main__":
    main()
