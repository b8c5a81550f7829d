"""Kept workspaces at the session's end, on the controller (docs/agents.md, "Kept
workspaces"): each item moves its own workspace as it fails (:mod:`.nodes`); what is
left to do once every record arrived is here."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.results import writer as resultsfile
from pytest_evalcases.run import keep
from pytest_evalcases.session.state import EvalSession


class KeepHooks:
    """Registered on the controller when workspaces are kept."""

    def __init__(self, state: EvalSession) -> None:
        self.state = state

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        place = self.state.settings.keep
        if place is None or not resultsfile.executed(self.state.records):
            # No results file was written, nor replaced.
            return
        referenced = {Path(r.workspace) for r in self.state.records if r.workspace}
        keep.forget_others(place, referenced)
