"""The session object's verdict and exit status: decided once, and after an interrupt."""

from __future__ import annotations

from pathlib import Path

from pytest_evalcases.results.policy import BaselinePolicy, GatePolicy
from pytest_evalcases.results.skills import SkillLimits
from pytest_evalcases.results.writer import ResultsSettings
from pytest_evalcases.session.settings import Settings
from pytest_evalcases.session.state import EvalSession
from tests.helpers.results import rec


def test_an_interrupt_recorded_as_it_arrived_outweighs_what_pytest_says(tmp_path: Path) -> None:
    session = EvalSession(settings=Settings(rootdir=tmp_path), agent=None)
    session.records.append(rec("a", "passed"))
    assert (session.report().verdict.status, session.exit_status(0)) == ("PASS", 0)

    # The signal handler's call: pytest may still end the session with status 0 (a
    # second Ctrl-C cut its own bookkeeping of the first short).
    session.interrupt()
    session.interrupt()

    assert session.incomplete == ["interrupted"]
    verdict = session.report().verdict
    assert (verdict.status, verdict.reason) == ("INCONCLUSIVE", "run incomplete: interrupted")
    assert session.exit_status(0) == 2
    assert session.exit_status(1) == 2
    # pytest's own status other than 0 and 1 stands, as ever.
    assert session.exit_status(4) == 4


def test_the_gate_decides_once_for_every_reader_and_the_policy_is_the_settings(
    tmp_path: Path,
) -> None:
    limits = SkillLimits(min_recall=0.8)
    session = EvalSession(
        settings=Settings(
            rootdir=tmp_path,
            min_pass_rate=0.5,
            skill_limits=limits,
            results=ResultsSettings(baseline=tmp_path / "base" / "b.json", tolerance=2.0),
        ),
        agent=None,
    )
    session.records.append(rec("a", "failed", severity="advisory"))

    first = session.report()

    # The summary, the HTML report and the exit status read the same decision.
    assert session.report() is first
    assert session.exit_status(0) == 0
    # Relative to the results directory (evals/results), where the file goes.
    assert first.policy == GatePolicy(
        0.5, skill_limits=limits, baseline=BaselinePolicy("../../base/b.json", 2.0)
    )
    session.records.append(rec("b", "failed"))
    assert session.report().verdict.status == "BLOCKED"


def test_how_the_session_stopped_leaves_the_run_incomplete(tmp_path: Path) -> None:
    session = EvalSession(settings=Settings(rootdir=tmp_path), agent=None)
    assert not session.ran_cases()
    session.cases_started = True
    assert session.ran_cases()

    session.stopped(interrupted=False, early=False)
    assert session.incomplete == []
    session.stopped(interrupted=False, early="stopping after 1 failures")
    assert session.incomplete == ["stopped early: stopping after 1 failures"]
    session.stopped(interrupted=True, early="ignored")
    assert session.incomplete[-1] == "interrupted"


def test_the_case_ids_a_run_is_given_are_made_once_and_again_when_one_is_added(
    tmp_path: Path,
) -> None:
    session = EvalSession(settings=Settings(rootdir=tmp_path), agent=None)
    session.ids["a"] = {tmp_path / "a.yaml": 1}

    first = session.context().case_ids

    assert first == {"a"}
    assert session.context().case_ids is first
    session.ids["b"] = {tmp_path / "b.yaml": 1}
    assert session.context().case_ids == {"a", "b"}
