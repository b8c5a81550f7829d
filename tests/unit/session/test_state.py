"""The session object's verdict and exit status after an interrupt."""

from __future__ import annotations

from pathlib import Path

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
