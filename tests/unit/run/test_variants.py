"""The session's variants as resolved from what was given (docs/variants.md): graded
directories, the working tree's configuration, and each variant's agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.agents.base import AgentSettings
from pytest_evalcases.errors import UsageError
from pytest_evalcases.run.variants import GradedDir, session_variants, variant_agents
from pytest_evalcases.run.workspace import Variant


def resolve(root: Path, *graded: GradedDir) -> tuple[Variant, ...]:
    return session_variants(
        [], graded, config_root=root, invocation_dir=root, cache_dir=lambda: root / "cache"
    )


def test_one_unnamed_graded_directory_is_the_unnamed_variant(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()

    (only,) = resolve(tmp_path, GradedDir("", tmp_path / "out", "--eval-workspace out"))

    assert (only.name, only.graded_dir) == (Variant().name, (tmp_path / "out").resolve())


def test_graded_directories_are_named_and_checked(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()

    named = resolve(
        tmp_path, GradedDir("", tmp_path / "a", "x"), GradedDir("", tmp_path / "b", "y")
    )

    assert [v.name for v in named] == ["a", "b"]
    with pytest.raises(UsageError, match=r"^y: the name 'a' is given twice; use NAME=DIR$"):
        resolve(tmp_path, GradedDir("", tmp_path / "a", "x"), GradedDir("a", tmp_path / "b", "y"))
    with pytest.raises(UsageError, match=r"^z: directory .*missing does not exist$"):
        resolve(tmp_path, GradedDir("", tmp_path / "missing", "z"))


def test_without_configuration_files_the_one_variant_is_empty(tmp_path: Path) -> None:
    assert resolve(tmp_path) == (Variant(),)


def test_each_variant_runs_the_session_agent_with_its_changes() -> None:
    session = AgentSettings(name="claude", model="opus", args=("--x",))
    given = (Variant(name="a"), Variant(name="b", model="haiku"), Variant(name="c", agent="codex"))

    found = variant_agents(session, given)

    assert found["a"] == session
    assert found["b"] == AgentSettings(name="claude", model="haiku", args=("--x",))
    # Another agent does not take the session agent's model and arguments.
    assert found["c"] == AgentSettings(name="codex", model=None, args=())


def test_a_variant_that_changes_the_model_needs_an_agent() -> None:
    with pytest.raises(UsageError) as caught:
        variant_agents(None, [Variant(name="a", model="m")])

    assert str(caught.value) == (
        "--eval-variant a: model: given, but no agent to run: add agent:NAME to the "
        "variant, or --eval-agent / eval_agent"
    )
