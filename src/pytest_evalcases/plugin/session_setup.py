"""The start of a session that may run eval cases: what ``pytest_configure`` does once
:mod:`.hooks` found a reason (docs/reference.md, "Sessions without eval cases").

Everything the plugin needs to run cases is imported from here, by this module or the
hook objects it registers: :mod:`.hooks` imports it only when a session needs it.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

import pytest

from pytest_evalcases.errors import UsageError
from pytest_evalcases.plugin import (
    cache,
    integrations,
    junit,
    keeping,
    reporting,
    signals,
    suite,
)
from pytest_evalcases.plugin.collection import Collection
from pytest_evalcases.plugin.settings import read as read_settings
from pytest_evalcases.plugin.settings import workspace_dirs
from pytest_evalcases.plugin.stash import SESSION_KEY, is_worker
from pytest_evalcases.redact import Redactor
from pytest_evalcases.session.interrupts import Interrupts
from pytest_evalcases.session.settings import make_agents
from pytest_evalcases.session.state import EvalSession

if TYPE_CHECKING:
    pass


def check_settings(config: pytest.Config) -> None:
    """Read and check the settings of a session that runs no case but whose ini file
    sets the plugin's values: a bad one is a usage error there too. Nothing else starts."""
    try:
        read_settings(config, datetime.now(timezone.utc))
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None


def start(config: pytest.Config) -> Collection:
    """Build the session of a pytest run that may run eval cases: its settings (a bad
    option or ini value is a usage error), its agents and the session object, kept in
    the stash, and register the hooks it needs; what the collection and report hooks
    hand their work to."""
    started = datetime.now(timezone.utc)
    try:
        settings = read_settings(config, started)
        # A regrade runs no agent: no preflight, no version asked (docs/replay.md).
        agents = make_agents(settings) if settings.regrade is None else {}
        agent = next((a for a in agents.values() if a is not None), None)
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    state = EvalSession(
        settings=settings,
        agent=agent,
        agents=agents,
        register_checks=lambda registry: config.hook.pytest_evalcases_register_checks(
            registry=registry
        ),
        parse_cache=cache.load(config),
        started=started,
        workspaces=workspace_dirs(config),
        redact=Redactor(names=settings.redact_env),
    )
    config.stash[SESSION_KEY] = state
    collection = Collection(config, state)
    # The proxy, when a run started it, stops with the session (each xdist worker its own).
    config.add_cleanup(state.stop_recording)
    interrupts = Interrupts(on_interrupt=state.interrupt)
    interrupts.install()
    config.add_cleanup(interrupts.restore)
    config.pluginmanager.register(signals.InterruptHooks(interrupts), "evalcases-interrupts")
    config.pluginmanager.register(
        reporting.SessionHooks(config, state, interrupts), "evalcases-session"
    )
    config.pluginmanager.register(suite.SuiteHooks(config, state), "evalcases-suite")
    from pytest_evalcases.plugin import budget

    budget.register(config, state)
    if settings.concurrency > 1 and settings.regrade is None:
        # Registered after the session hooks, so that its sessionfinish runs first.
        from pytest_evalcases.plugin import ahead

        config.pluginmanager.register(ahead.AheadHooks(config), "evalcases-ahead")
        if config.pluginmanager.hasplugin("xdist") and not is_worker(config):
            queues = integrations.DeepQueues(settings.concurrency)
            config.pluginmanager.register(queues, "evalcases-ahead-xdist")
    if agent is not None:
        # The controller checks the agent once for the session, before the first case;
        # a worker looks again only to skip its items when the agent cannot run.
        from pytest_evalcases.plugin import preflight
        from pytest_evalcases.session.preflight import SessionPreflight

        worker = is_worker(config)
        asked = not worker and preflight.asked_for_cases(config, state.discovery)
        checks = SessionPreflight(state, asked=asked, worker=worker)
        hooks = preflight.PreflightHooks(config, checks)
        config.pluginmanager.register(hooks, "evalcases-preflight")
    html = config.getoption("eval_html")
    if html and not is_worker(config):
        # Its trylast sessionfinish runs after the session hooks' wrapper wrote this
        # run's results file, which the trend reads.
        path = config.invocation_params.dir / html
        config.pluginmanager.register(reporting.HtmlHooks(config, state, path), "evalcases-html")
    xmlpath = config.getoption("xmlpath", None)
    if xmlpath and not is_worker(config):
        config.pluginmanager.register(junit.JunitHooks(config, xmlpath), "evalcases-junit")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(integrations.XdistHooks(state), "evalcases-xdist")
    if settings.keep is not None and not is_worker(config):
        config.pluginmanager.register(keeping.KeepHooks(state), "evalcases-keep")
    if hasattr(config.pluginmanager.hook, "pytest_timeout_set_timer"):
        # pytest-timeout 2.1 or later: its hook lets the plugin time eval items itself.
        config.pluginmanager.register(integrations.TimeoutHooks(), "evalcases-timeout")
    if config.pluginmanager.hasplugin("pytest_jsonreport"):
        config.pluginmanager.register(integrations.JsonReportHooks(), "evalcases-json-report")
    if config.pluginmanager.hasplugin("metadata"):
        config.pluginmanager.register(integrations.MetadataHooks(), "evalcases-metadata")
    if settings.lint or settings.red_first or settings.changed is not None:
        # The authoring hooks bring the linter (and pydantic) along: only when asked for.
        from pytest_evalcases.plugin import authoring
    if settings.lint:
        config.pluginmanager.register(authoring.LintHooks(), "evalcases-lint")
    if settings.red_first:
        config.pluginmanager.register(authoring.RedFirstHooks(config), "evalcases-red-first")
    if settings.changed is not None:
        config.pluginmanager.register(authoring.ChangedHooks(settings.changed), "evalcases-changed")
    baseline = settings.results.baseline
    if baseline is not None and not is_worker(config):
        from pytest_evalcases.results import reader as resultsfile

        try:
            state.baseline_doc = resultsfile.load_baseline(baseline)
        except resultsfile.ResultsFileError as exc:
            raise pytest.UsageError(f"--eval-baseline: {exc}") from None
    return collection
