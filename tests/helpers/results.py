"""A small eval suite for the results-file tests: real case files, a real command
agent (a Python script) and a fake ``claude`` CLI, steered through files so that one
suite can pass, fail, error, sleep and report usage as each test needs."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.results import gate
from pytest_evalcases.results import writer as resultsfile
from pytest_evalcases.results.document import ResultsDocument
from pytest_evalcases.results.factors import Factors
from pytest_evalcases.results.policy import GatePolicy
from pytest_evalcases.results.record import RunRecord
from tests.helpers.agents import fake_credentials

#: The ``eval gate`` section's lines of a variant's metrics (docs/results.md, "Metrics"),
#: whose wall times differ from run to run: tests/plugin/test_metrics.py tests them, and
#: the tests of other lines leave them out (:func:`without_metrics`).
METRIC_LINE = re.compile(
    r"  (runs \d+/\d+ passed |wall |tokens [\d,]+ ± |cost \$[\d.]+ ± |runaway: "
    r"|… and \d+ more runaway|failures by mode: |errors by kind: )"
)


def without_metrics(lines: list[str]) -> list[str]:
    """``lines`` of the ``eval gate`` section without the metrics lines."""
    return [line for line in lines if not METRIC_LINE.match(line)]


#: The command agent: ``agent.py ROOT PROMPT``; the prompt is the case id. Files under
#: ROOT steer it per case: fail/<id> (a wrong answer that quotes ANTHROPIC_API_KEY),
#: crash/<id> (exit 3, the key on stderr), slow/<id> (sleep that many seconds after
#: writing started/<id>).
COMMAND_AGENT = r"""
import os, pathlib, sys, time
root, case = pathlib.Path(sys.argv[1]), sys.argv[2].split()[0]
secret = os.environ.get("ANTHROPIC_API_KEY", "") + " " + os.environ.get("MY_SERVICE_TOKEN", "")
slow = root / "slow" / case
if slow.exists():
    (root / "started").mkdir(exist_ok=True)
    (root / "started" / case).write_text("")
    time.sleep(float(slow.read_text() or 60))
if (root / "crash" / case).exists():
    sys.stderr.write("crashed while using the key " + secret + "\n")
    sys.exit(3)
if (root / "fail" / case).exists():
    print("wrong answer; I used the key " + secret)
else:
    print("ok " + case)
"""

#: A fake ``claude`` CLI: ``--version`` and ``-p PROMPT --output-format json``, its
#: version, model, tokens (``tokens_by_case``: some cases' own), cost, failing cases and
#: cases stopped at the turn limit (still paid for) read from $FAKE_CLAUDE_STATE (JSON).
FAKE_CLAUDE = r"""#!{python}
import json, os, sys
state = json.load(open(os.environ["FAKE_CLAUDE_STATE"]))
if sys.argv[1:] == ["--version"]:
    print(state.get("version", "1.0.0 (Claude Code)"))
    sys.exit(0)
case = sys.argv[sys.argv.index("-p") + 1].split()[0]
text = "wrong" if case in state.get("fail", []) else "ok " + case
stopped = case in state.get("max_turns", [])
print(json.dumps({
    "type": "result", "subtype": "error_max_turns" if stopped else "success",
    "is_error": stopped, "result": text,
    "num_turns": 1, "duration_ms": 10,
    "total_cost_usd": state.get("cost", 0.01),
    "usage": {"input_tokens": state.get("tokens_by_case", {}).get(case, state.get("tokens", 1000)),
              "output_tokens": 100},
    "modelUsage": {state.get("model", "claude-test-1"): {"inputTokens": 1, "outputTokens": 1}},
}))
"""


def case_yaml(case_id: str, severity: str = "normal") -> str:
    return (
        f"id: {case_id}\n"
        "defends: AGENTS.md\n"
        f"severity: {severity}\n"
        f"prompt: {case_id}\n"
        "checks:\n"
        "  - type: output_matches\n"
        "    pattern: '^ok'\n"
    )


def steer(root: Path, kind: str, case_id: str, value: str = "") -> None:
    """Make the command agent ``fail``, ``crash`` or be ``slow`` for ``case_id``."""
    (root / kind).mkdir(exist_ok=True)
    (root / kind / case_id).write_text(value, "utf-8")


def install_fake_claude(tmp: Path, monkeypatch: pytest.MonkeyPatch, **state: Any) -> Path:
    """Put a fake ``claude`` first on PATH, with a fake credential for the preflight;
    returns its state file (rewrite to steer)."""
    fake_credentials(monkeypatch)
    bindir = tmp / "fake-bin"
    bindir.mkdir(exist_ok=True)
    script = bindir / "claude"
    script.write_text(FAKE_CLAUDE.replace("{python}", sys.executable), "utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    state_file = tmp / "fake-claude.json"
    state_file.write_text(json.dumps(state), "utf-8")
    monkeypatch.setenv("FAKE_CLAUDE_STATE", str(state_file))
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return state_file


def results_files(root: Path) -> list[Path]:
    directory = root / "evals" / "results"
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


def only_results(root: Path) -> dict[str, Any]:
    """The one results file of the run; fails when there is not exactly one."""
    files = results_files(root)
    assert len(files) == 1, files
    doc: dict[str, Any] = json.loads(files[0].read_text("utf-8"))
    return doc


def rec(
    case: str, outcome: str, severity: str = "normal", variant: str = "", **kw: Any
) -> RunRecord:
    """A run record of ``case`` with one check that passed when the run did."""
    checks = kw.pop("checks", [{"id": "c", "passed": outcome == "passed"}])
    return RunRecord.from_dict(
        {
            "case_id": case,
            "file": f"evals/{case}.yaml",
            "line": 0,
            "defends": "AGENTS.md",
            "severity": severity,
            "variant": variant,
            "outcome": outcome,
            "checks": checks,
            **kw,
        }
    )


def document(
    records: list[RunRecord],
    min_pass_rate: float = 0.9,
    *,
    order: list[str] | tuple[str, ...] = (),
    mode: str = "run",
    factors: dict[str, Factors] | None = None,
    perturbed_block: bool = False,
    perturb_max_delta: float | None = None,
    complete: bool = True,
    incomplete_reasons: tuple[str, ...] | list[str] = (),
    **kw: Any,
) -> ResultsDocument:
    """The results document of ``records``, decided under a policy of these values, as
    a session would write it."""
    policy = GatePolicy(
        min_pass_rate,
        red_first=mode == "red-first",
        perturbed_block=perturbed_block,
        perturb_max_delta=perturb_max_delta,
    )
    unfinished = () if complete else (tuple(incomplete_reasons) or ("incomplete",))
    report = gate.decide(records, policy, order=order, factors=factors, incomplete=unfinished)
    return resultsfile.document(
        report, complete=complete, incomplete_reasons=incomplete_reasons, **kw
    )
