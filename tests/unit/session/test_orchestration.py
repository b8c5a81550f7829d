"""session/orchestration.py: one item's run to its outcome, with a real ``command``
agent (a subprocess per run) and no pytest session."""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path

import pytest

from pytest_evalcases.agents import make_agent
from pytest_evalcases.agents.base import AgentSettings
from pytest_evalcases.cases.loading import load_case_file
from pytest_evalcases.cases.parsecache import CaseEntry
from pytest_evalcases.errors import RunError
from pytest_evalcases.kinds import Spent
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run.budget import Budget
from pytest_evalcases.run.checks import default_registry
from pytest_evalcases.run.perturb import PerturbPlan
from pytest_evalcases.run.runner import AgentRun, RunReport
from pytest_evalcases.run.scheduler import Scheduler
from pytest_evalcases.run.workspace import Variant, WorkspaceDirs
from pytest_evalcases.session.orchestration import (
    CaseRun,
    CheckVerdict,
    PlannedRun,
    check_verdict,
    run_case,
    slots,
    start_ahead,
    unperturbed,
)
from pytest_evalcases.session.settings import SandboxSettings, Settings
from pytest_evalcases.session.state import EvalSession

#: Logs each run to $RUNS; fails while fewer than $FAIL runs were logged before it.
AGENT = """
import os, pathlib, sys
runs = pathlib.Path(os.environ["RUNS"])
before = len(runs.read_text().splitlines()) if runs.exists() else 0
with runs.open("a") as log:
    log.write(os.getcwd() + "\\n")
if before < int(os.environ.get("FAIL", "0")):
    sys.exit(3)
pathlib.Path("answer.txt").write_text(sys.argv[1])
"""


CASE = """\
id: answer
defends: AGENTS.md
prompt: hello
checks: [{type: file_exists, path: answer.txt}]
"""


class CountingBudget(Budget):
    """A budget that also notes what it was asked, in order."""

    def __init__(self, limit: float = 100.0) -> None:
        super().__init__(limit)
        self.calls: list[str] = []

    def admit(self) -> None:
        self.calls.append("admit")
        super().admit()

    def finished(self, spent: Spent | None) -> None:
        self.calls.append("finished")
        super().finished(spent)

    def spent_more(self, spent: Spent) -> None:
        self.calls.append("spent_more")
        super().spent_more(spent)


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the agent logs its runs to, one workspace a line."""
    log = tmp_path / "runs.log"
    monkeypatch.setenv("RUNS", str(log))
    return log


def session(tmp_path: Path, *, retries: int = 0, agent: bool = True) -> EvalSession:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{prompt}}"
    given = AgentSettings(name="command", command=command)
    settings = Settings(
        rootdir=tmp_path,
        agent=given if agent else None,
        retries=retries,
        sandbox=SandboxSettings(mode="none"),
    )
    return EvalSession(
        settings=settings,
        agent=make_agent(given) if agent else None,
        workspaces=WorkspaceDirs(temproot=tmp_path),
    )


def planned(tmp_path: Path, more: str = "") -> PlannedRun:
    """The run of a case that asks the agent for answer.txt; ``more``: YAML lines."""
    path = tmp_path / "evals" / "case.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(CASE + more)
    (case,) = load_case_file(path, path.parent, default_registry())
    return PlannedRun(case, Variant(), 0, None, label="answer", key="evals/case.yaml::answer")


def test_a_run_asks_the_budget_once_and_counts_what_its_attempts_spent(
    tmp_path: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIL", "2")
    budget = CountingBudget()
    case_run = CaseRun(session(tmp_path, retries=2), planned(tmp_path), budget=budget)

    outcome = case_run.outcome()

    assert outcome.kind == "ran"
    assert outcome.report is not None
    assert outcome.report.passed
    assert outcome.report.attempts == 3
    assert len(runs.read_text().splitlines()) == 3
    assert len(case_run.workspaces) == 3
    assert budget.calls == ["admit", "finished"]


def test_a_budget_that_refuses_starts_no_agent(tmp_path: Path, runs: Path) -> None:
    budget = CountingBudget(limit=1.5)
    budget.admit()
    budget.finished(Spent(cost_usd=1.0))
    case_run = CaseRun(session(tmp_path), planned(tmp_path), budget=budget)

    outcome = case_run.outcome()

    assert outcome.kind == "errored"
    assert outcome.error is not None
    assert outcome.error.kind == "budget"
    assert outcome.report is not None
    assert outcome.report.attempts == 0
    assert "budget of $1.50 spent after 1 runs" in str(outcome.error)
    assert not runs.exists()
    assert case_run.workspaces == []


def test_the_run_started_ahead_is_taken_and_its_retry_runs_here(
    tmp_path: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIL", "1")
    state = session(tmp_path, retries=1)
    run = planned(tmp_path)
    budget = CountingBudget()
    scheduler: Scheduler[AgentRun] = Scheduler(1)
    scheduler.offer(run.key, start_ahead(state, run, budget))
    case_run = CaseRun(state, run, budget=budget, ahead=scheduler)

    outcome = case_run.outcome()
    scheduler.close()

    assert outcome.kind == "ran"
    assert outcome.report is not None
    assert outcome.report.attempts == 2
    logged = runs.read_text().splitlines()
    # The first attempt ran ahead, in a workspace it made; only the retry's is made here.
    assert len(logged) == 2
    assert [str(p) for p in case_run.workspaces] == logged[1:]
    # Asked once, by the run started ahead; the retry is added to its cost.
    assert budget.calls == ["admit", "finished", "spent_more"]


def test_a_run_not_offered_ahead_runs_itself(tmp_path: Path, runs: Path) -> None:
    scheduler: Scheduler[AgentRun] = Scheduler(1)
    case_run = CaseRun(session(tmp_path), planned(tmp_path), ahead=scheduler)

    outcome = case_run.outcome()

    assert outcome.kind == "ran"
    assert [str(p) for p in case_run.workspaces] == runs.read_text().splitlines()


@pytest.mark.parametrize(
    ("more", "agent", "reason"),
    [
        ("quarantine: flaky model\n", True, "quarantined: flaky model"),
        ("", False, "no agent configured (--eval-agent)"),
    ],
)
def test_a_case_that_does_not_run_here_is_skipped_with_its_reason(
    tmp_path: Path, runs: Path, more: str, agent: bool, reason: str
) -> None:
    outcome = CaseRun(session(tmp_path, agent=agent), planned(tmp_path, more)).outcome()

    assert (outcome.kind, outcome.reason) == ("skipped", reason)
    assert not runs.exists()


def test_a_session_that_shows_what_would_run_starts_nothing(tmp_path: Path, runs: Path) -> None:
    outcome = CaseRun(session(tmp_path), planned(tmp_path)).outcome(dry=True)

    assert outcome.kind == "not-run"
    assert not runs.exists()


def test_a_run_stopped_from_outside_is_a_timeout_naming_its_last_workspace(
    tmp_path: Path,
) -> None:
    case_run = CaseRun(session(tmp_path), planned(tmp_path))
    workspace = case_run.state.workspaces.new("answer")
    case_run.workspaces.append(workspace)

    outcome = case_run.stopped("stopped by 'Timeout'")

    assert outcome.kind == "errored"
    assert outcome.error is not None
    assert (outcome.error.kind, str(outcome.error)) == ("timeout", "stopped by 'Timeout'")
    assert outcome.report is not None
    assert outcome.report.workspace == workspace


@pytest.mark.parametrize(
    ("passed", "more", "settings", "perturbation", "expected"),
    [
        (True, "", {}, None, "passed"),
        (False, "", {}, None, "failed"),
        (False, "severity: advisory\n", {}, None, "advisory"),
        (False, "", {"perturb": PerturbPlan(classes=("typo",))}, "typo-0", "perturbed"),
        (False, "", {"perturb": PerturbPlan(("typo",), blocking=True)}, "typo-0", "failed"),
        (False, "", {"red_first": True}, None, "red"),
        (True, "", {"red_first": True}, None, "green"),
    ],
)
def test_the_checks_verdict_follows_the_case_and_the_settings(
    tmp_path: Path,
    passed: bool,
    more: str,
    settings: dict[str, object],
    perturbation: str | None,
    expected: CheckVerdict,
) -> None:
    state = EvalSession(dataclasses.replace(Settings(rootdir=tmp_path), **settings), agent=None)
    run = dataclasses.replace(planned(tmp_path, more), perturbation=perturbation)
    check = CheckRecord("answer", "file_exists", None, passed, "")

    assert check_verdict(state, run, RunReport(checks=[check])) == expected


def test_a_case_is_collected_as_each_variant_perturbation_and_repetition(tmp_path: Path) -> None:
    settings = Settings(
        rootdir=tmp_path,
        variants=(Variant(name="a"), Variant(name="b", graded_dir=tmp_path)),
        repeat=2,
        perturb=PerturbPlan(classes=("typo",), n=1),
    )

    entry = CaseEntry("refund", 0, "normal", (), "AGENTS.md", prompt="Refund the order.")
    names = [slot.name for slot in slots(entry, settings)]

    # The graded directory has no prompt to perturb.
    assert names == [
        "refund[a-r0]",
        "refund[a-r1]",
        "refund[a-perturb-typo-0-r0]",
        "refund[a-perturb-typo-0-r1]",
        "refund[b-r0]",
        "refund[b-r1]",
    ]
    unperturbed = dataclasses.replace(settings, repeat=1, variants=(Variant(),))
    opted_out = dataclasses.replace(entry, perturb=False)
    assert [slot.name for slot in slots(opted_out, unperturbed)] == ["refund"]


@pytest.mark.parametrize(
    ("prompt", "paraphrases", "labels", "gaps"),
    [
        (
            "Refund the order.",
            3,
            ["typo-0", "typo-1", "case-0", "case-1", "paraphrase-0", "paraphrase-1"],
            [],
        ),
        (
            "Refund the order.",
            1,
            ["typo-0", "typo-1", "case-0", "case-1", "paraphrase-0"],
            [],
        ),
        (
            "Refund the order.",
            0,
            ["typo-0", "typo-1", "case-0", "case-1"],
            [("paraphrase", "no paraphrases")],
        ),
        (
            "`make release` src/app.py",
            0,
            [],
            [
                ("typo", "no word of 4 letters outside the protected spans"),
                ("case", "no letter outside the protected spans"),
                ("paraphrase", "no paraphrases"),
            ],
        ),
        (None, 0, [], [(c, "no prompt") for c in ("typo", "case", "paraphrase")]),
    ],
)
def test_a_perturbation_slot_exists_only_where_it_changes_the_prompt(
    tmp_path: Path,
    prompt: str | None,
    paraphrases: int,
    labels: list[str],
    gaps: list[tuple[str, str]],
) -> None:
    plan = PerturbPlan(classes=("typo", "case", "paraphrase"), n=2)
    settings = Settings(rootdir=tmp_path, perturb=plan)
    entry = CaseEntry("refund", 0, "normal", (), "AGENTS.md", True, prompt, paraphrases)

    assert [slot.perturbation for slot in slots(entry, settings)] == [None, *labels]
    assert unperturbed(entry, settings) == [("refund", cls, why) for cls, why in gaps]
    # A case that opts out is no gap: it asked for none.
    assert unperturbed(dataclasses.replace(entry, perturb=False), settings) == []


def test_a_run_gets_its_paraphrase_and_one_gone_since_collection_is_an_error(
    tmp_path: Path,
) -> None:
    state = session(tmp_path)
    state.settings = dataclasses.replace(
        state.settings, perturb=PerturbPlan(classes=("paraphrase",), n=3)
    )
    base = planned(tmp_path, 'paraphrases: ["hello there", "hi"]\n')

    runs = [dataclasses.replace(base, perturbation=f"paraphrase-{k}") for k in range(3)]

    assert [run_case(state, run).prompt for run in runs[:2]] == ["hello there", "hi"]
    with pytest.raises(RunError, match="perturbation paraphrase-2: no paraphrase 2") as info:
        run_case(state, runs[2])
    assert info.value.kind == "case"
