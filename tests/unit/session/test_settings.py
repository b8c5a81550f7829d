"""The settings of a session built from options and ini values, without pytest: the
defaults, each bad value refused naming its option, the places decided once, and what
an xdist worker takes from its controller."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases import defaults
from pytest_evalcases.errors import UsageError
from pytest_evalcases.recording.source import ReplayPlan
from pytest_evalcases.session.places import WorkerInput
from pytest_evalcases.session.settings import Settings, build
from tests.helpers.given import Given
from tests.unit.results.records import doc, run

STARTED = datetime(2026, 12, 1, 9, 30, tzinfo=timezone.utc)
STEM = "2026-12-01T09-30-00.000Z"


def settings(root: Path, **given: Any) -> Settings:
    return build(Given(root, **given), started=STARTED)


def results_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc([run("alpha", "passed")]).to_dict()), "utf-8")
    return path


def test_the_defaults_and_where_the_session_writes(tmp_path: Path) -> None:
    built = settings(tmp_path)

    assert (built.timeout, built.min_pass_rate, built.concurrency) == (
        defaults.TIMEOUT,
        defaults.MIN_PASS_RATE,
        defaults.CONCURRENCY,
    )
    assert (built.sandbox.mode, built.agent_home, built.agent) == (
        defaults.SANDBOX,
        defaults.AGENT_HOME,
        None,
    )
    results = tmp_path / "evals" / "results"
    assert built.results_dir == results
    assert built.results_file(STARTED) == results / f"{STEM}.json"
    assert built.keep is not None
    assert built.keep.directory == results / f"{STEM}.workspaces"
    assert not built.keep.replaces
    assert built.record is not None
    assert built.record.directory == results / f"{STEM}.runs"
    assert (built.regrade, built.replay, built.budget) == (None, None, None)


def test_the_settings_are_frozen(tmp_path: Path) -> None:
    built = settings(tmp_path)

    with pytest.raises(dataclasses.FrozenInstanceError):
        built.timeout = 1  # type: ignore[misc]


def test_a_saved_file_keeps_and_records_beside_it_and_no_save_neither(tmp_path: Path) -> None:
    saved = settings(tmp_path, option={"eval_save": "out/run.json"})
    unsaved = settings(tmp_path, option={"eval_no_save": True})
    kept_anyway = settings(tmp_path, option={"eval_no_save": True, "eval_keep": "kept"})

    assert saved.keep is not None
    assert saved.record is not None
    assert (saved.keep.directory, saved.keep.replaces) == (
        tmp_path / "out" / "run.workspaces",
        True,
    )
    assert saved.record.directory == tmp_path / "out" / "run.runs"
    assert (unsaved.keep, unsaved.record, unsaved.results_file(STARTED)) == (None, None, None)
    assert kept_anyway.keep is not None
    assert kept_anyway.keep.directory == tmp_path / "kept" / f"{STEM}.workspaces"


@pytest.mark.parametrize(
    ("ini", "said"),
    [
        ({"eval_timeout": "soon"}, "ini option eval_timeout expects a number, got 'soon'"),
        (
            {"eval_min_pass_rate": "90"},
            "ini option eval_min_pass_rate expects a number from 0 to 1, got '90'",
        ),
        (
            {"eval_skill_min_recall": "2"},
            "ini option eval_skill_min_recall expects a number from 0 to 1, got '2'",
        ),
        (
            {"eval_concurrency": "many"},
            "ini option eval_concurrency expects a whole number >= 1, got 'many'",
        ),
        (
            {"eval_agent_home": "shared"},
            "ini option eval_agent_home expects isolated or inherit, got 'shared'",
        ),
        (
            {"eval_sandbox_network": "off"},
            "ini option eval_sandbox_network expects shared or none, got 'off'",
        ),
        (
            {"eval_redact_env": ["NPM-AUTH"]},
            "ini option eval_redact_env expects names of environment variables, got 'NPM-AUTH'",
        ),
        (
            {"eval_keep_max_mb": "-1"},
            "ini option eval_keep_max_mb expects a number >= 0, got -1",
        ),
        (
            {"eval_concurrency": "2.5"},
            "ini option eval_concurrency expects a whole number >= 1, got '2.5'",
        ),
        (
            {"eval_concurrency": 2.5},
            "ini option eval_concurrency expects a whole number >= 1, got '2.5'",
        ),
        (
            {"eval_perturb": "typo", "eval_perturb_n": "0"},
            "ini option eval_perturb_n expects a whole number >= 1, got '0'",
        ),
        (
            {"eval_budget": "lots"},
            "ini option eval_budget expects an amount of USD > 0, got 'lots'",
        ),
        (
            {"eval_budget_token_price": "free"},
            "ini option eval_budget_token_price expects USD per million tokens > 0, got 'free'",
        ),
    ],
)
def test_a_bad_ini_value_is_refused_naming_it(
    tmp_path: Path, ini: dict[str, Any], said: str
) -> None:
    with pytest.raises(UsageError) as caught:
        settings(tmp_path, ini=ini)

    assert str(caught.value) == said


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (
            {"eval_regrade": "", "eval_replay": ""},
            "--eval-regrade and --eval-replay cannot be combined",
        ),
        (
            {"eval_replay": "", "eval_reuse": ""},
            "--eval-replay and --eval-reuse cannot be used together: choose one",
        ),
        (
            {"eval_reuse": "", "eval_no_save": True},
            "--eval-reuse records the runs that go live, and this session records nothing "
            "(--eval-no-save or eval_record = false): use --eval-replay, or record",
        ),
        (
            {"eval_perturb": ["typo"], "eval_reuse": ""},
            "--eval-perturb and --eval-reuse cannot be combined",
        ),
        (
            {"eval_variant": [("--eval-config", "a=.")], "eval_workspace": [("", "out")]},
            "--eval-config and --eval-workspace cannot be combined",
        ),
        ({"eval_regrade": "missing.json"}, "--eval-regrade: no such results file: {root}"),
    ],
)
def test_options_that_cannot_go_together_are_refused(
    tmp_path: Path, option: dict[str, Any], said: str
) -> None:
    with pytest.raises(UsageError) as caught:
        settings(tmp_path, option=option)

    assert str(caught.value) == said.format(root=tmp_path / "missing.json")


def test_the_newest_results_file_is_regraded_or_replayed(tmp_path: Path) -> None:
    stored = results_file(tmp_path / "evals" / "results" / "old.json")

    regraded = settings(tmp_path, option={"eval_regrade": ""})
    replayed = settings(tmp_path, option={"eval_replay": ""})

    assert regraded.regrade is not None
    assert regraded.regrade.path == stored
    assert regraded.regrade.find("alpha", "", 0) is not None
    # A regrade runs no agent: nothing is recorded.
    assert regraded.record is None
    assert replayed.replay == ReplayPlan(mode="replay", results=stored)


def test_a_worker_takes_what_its_controller_decided(tmp_path: Path) -> None:
    stored = results_file(tmp_path / "stored" / "chosen.json")
    controller = settings(tmp_path, option={"eval_regrade": "stored/chosen.json"})
    handed = WorkerInput.from_json(controller.worker_input().to_json())
    # A newer results file, and a later start: the worker still takes the controller's.
    results_file(tmp_path / "evals" / "results" / "newer.json")

    worker = build(
        Given(tmp_path, option={"eval_regrade": ""}),
        started=STARTED.replace(hour=10),
        worker=handed,
    )

    assert handed == controller.worker_input()
    assert worker.regrade is not None
    assert worker.regrade.path == stored
    assert (worker.keep, worker.record) == (controller.keep, controller.record)


def test_the_hand_off_carries_every_place(tmp_path: Path) -> None:
    results_file(tmp_path / "evals" / "results" / "old.json")
    controller = settings(tmp_path, option={"eval_reuse": "", "eval_keep": "kept"})
    handed = controller.worker_input()

    assert handed.keep is not None
    assert handed.record is not None
    assert handed.replay is not None
    assert WorkerInput.from_json(handed.to_json()) == handed
    assert WorkerInput.from_json(WorkerInput().to_json()) == WorkerInput()


def test_a_worker_reads_the_budget_account_its_controller_keeps(tmp_path: Path) -> None:
    controller = settings(tmp_path, option={"eval_budget": 2.0})
    account = tmp_path / "spend.json"
    handed = WorkerInput.from_json(controller.worker_input(account).to_json())

    worker = build(Given(tmp_path, option={"eval_budget": 2.0}), started=STARTED, worker=handed)

    assert handed.spend_file == account
    assert worker.spend_file == account
    # The controller keeps the account; it reads no one's.
    assert controller.spend_file is None
