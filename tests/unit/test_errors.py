"""errors.py and the error kinds of kinds.py: an immutable RunError whose kind is one of
the documented words."""

from __future__ import annotations

import dataclasses
import pickle
import re
from pathlib import Path

import pytest

from pytest_evalcases.agents.output import agent_error
from pytest_evalcases.errors import AgentError, RunError
from pytest_evalcases.kinds import ERROR_KINDS, Spent, error_kind
from pytest_evalcases.run.budget import BudgetSpent
from pytest_evalcases.run.failfast import NotStarted, Unreachable

DOCS = Path(__file__).parents[2] / "docs"


def test_a_run_error_cannot_be_changed() -> None:
    error = RunError("refused", kind="authentication", spent=Spent(1, 2, 0.5))

    for name, value in [
        ("kind", "timeout"),
        ("spent", None),
        ("workspace", "/tmp/ws"),
        ("args", ("other",)),
    ]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(error, name, value)
    assert (error.kind, str(error), error.spent) == ("authentication", "refused", Spent(1, 2, 0.5))


def test_what_the_raiser_knows_is_given_when_it_is_made() -> None:
    error = agent_error("claude", "rate-limit", "429: retry after 30 seconds", spent=Spent(3))

    assert isinstance(error, AgentError)
    assert (error.kind, error.retry_after, error.spent) == ("rate-limit", 30.0, Spent(3))
    assert RunError("x").kind == "error"
    assert AgentError("x").kind == "agent"


def test_reworded_keeps_the_class_and_the_facts() -> None:
    error = Unreachable("no route", denials=("Bash: rm",), retry_after=2.0)

    again = error.reworded("no route (after 2 attempts)")

    assert type(again) is Unreachable
    assert (again.kind, again.denials, again.retry_after) == ("server", ("Bash: rm",), 2.0)
    assert str(again) == "no route (after 2 attempts)"
    assert str(error) == "no route"


def test_an_error_survives_pickling_and_raising() -> None:
    error = NotStarted("not started: an earlier run failed", kind="authentication")

    copy = pickle.loads(pickle.dumps(error))

    assert (type(copy), copy.kind, str(copy)) == (NotStarted, "authentication", str(error))
    with pytest.raises(NotStarted) as caught:
        raise copy from None
    assert caught.value.__traceback__ is not None


def test_a_run_never_started_made_no_attempt() -> None:
    assert not BudgetSpent("budget spent").attempted
    assert not NotStarted("x", kind="server").attempted
    assert RunError("x").attempted


def test_the_error_kinds_are_the_documented_ones() -> None:
    text = (DOCS / "agents.md").read_text("utf-8")
    table = text.split("| kind | when |", 1)[1].split("\n\n", 1)[0]
    documented = set()
    for row in table.splitlines()[2:]:
        documented.update(re.findall(r"`([a-z-]+)`", row.split("|")[1]))
    # "case" (a case without a prompt run live) and the default "error" are not listed.
    assert documented == ERROR_KINDS - {"case", "error"}


def test_a_stored_kind_is_read_back_as_a_kind() -> None:
    assert error_kind("replay-diverged") == "replay-diverged"
    assert error_kind("no-such-kind") == "error"
