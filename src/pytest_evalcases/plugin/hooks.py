"""The pytest plugin (the ``pytest11`` entry point): the hook functions, each handing
the work to its module: options to :mod:`.options`, settings to :mod:`.settings`,
collection and runs to :mod:`.nodes`, which cases run to
:mod:`pytest_evalcases.session.selection`, reports and the summary to :mod:`.reporting`,
the parse cache to :mod:`.cache`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_evalcases.agents import make_agent
from pytest_evalcases.cases.parsecache import CaseEntry
from pytest_evalcases.errors import CaseFileError, UsageError
from pytest_evalcases.kinds import SEVERITIES
from pytest_evalcases.plugin import (
    cache,
    integrations,
    junit,
    keeping,
    options,
    reporting,
    signals,
    suite,
)
from pytest_evalcases.plugin import hookspecs as newhooks
from pytest_evalcases.plugin.nodes import EvalFile, EvalItem, TaskDirFile, passed_over
from pytest_evalcases.plugin.settings import read as read_settings
from pytest_evalcases.plugin.settings import workspace_dirs
from pytest_evalcases.plugin.stash import SESSION_KEY, is_worker, session_of
from pytest_evalcases.redact import Redactor
from pytest_evalcases.run import keep
from pytest_evalcases.session.selection import Selection
from pytest_evalcases.session.settings import Settings
from pytest_evalcases.session.state import EvalSession

if TYPE_CHECKING:
    from pytest_evalcases.agents.base import Agent, AgentSettings

SEVERITY_HELP = {
    "critical": "eval case whose failure blocks a merge (pytest -m critical is the merge gate)",
    "normal": "eval case whose failure fails the run",
    "advisory": "eval case whose failure is reported as xfailed and never fails the run alone",
}


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(newhooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    for severity in SEVERITIES:
        config.addinivalue_line("markers", f"{severity}: {SEVERITY_HELP[severity]}")
    started = datetime.now(timezone.utc)
    try:
        settings = read_settings(config, started)
        # A regrade runs no agent: no preflight, no version asked (docs/replay.md).
        agents = _agents(settings) if settings.regrade is None else {}
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
    # The proxy, when a run started it, stops with the session (each xdist worker its own).
    config.add_cleanup(state.stop_recording)
    interrupts = signals.Interrupts(on_interrupt=state.interrupt)
    interrupts.install()
    config.add_cleanup(interrupts.restore)
    config.pluginmanager.register(interrupts, "evalcases-interrupts")
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

        worker = is_worker(config)
        asked = not worker and preflight.asked_for_cases(config, state.discovery)
        hooks = preflight.PreflightHooks(config, state, asked=asked, worker=worker)
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


def _agents(settings: Settings) -> dict[str, Agent | None]:
    """Each variant's agent, by variant name, in the variants' order: one driver per
    distinct agent settings (docs/variants.md)."""
    made: list[tuple[AgentSettings, Agent]] = []
    found: dict[str, Agent | None] = {}
    for variant in settings.variants:
        given = settings.agents.get(variant.name, settings.agent)
        if given is None or variant.graded_dir is not None:
            found[variant.name] = None
            continue
        agent = next((a for s, a in made if s == given), None)
        if agent is None:
            agent = make_agent(given)
            made.append((given, agent))
        found[variant.name] = agent
    return found


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    if any(isinstance(item, EvalItem) for item in session.items):
        # Only sessions that run eval cases: no thread for the others.
        from pytest_evalcases.plugin import progress

        progress.install(session.config, len(session.items))


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if session_of(config).discovery.skip_dir(collection_path) or keep.is_kept_dir(collection_path):
        return True
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    found = session_of(parent.config).discovery.case_file(file_path)
    if found is None:
        return None
    node = TaskDirFile if found.kind == "task" else EvalFile
    return node.from_parent(parent, path=file_path, evals_root=found.evals_root)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    if isinstance(collector, pytest.Directory) and report.passed:
        # pytest collects regular files only: a case file that is not one is said here.
        report.result.extend(passed_over(collector))
    return report


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Generator[None, None, None]:
    settings = session_of(config).settings
    selection = Selection.of(settings)
    # Two steps, as two -k would: the filters, then the shard of what is left.
    _deselect(config, items, lambda item: selection.selects(_entry(item), _sources(item)))
    if selection.part is not None:
        ids = [entry.id for entry in map(_entry, items) if entry is not None]
        selection = selection.balanced(ids, settings.results.results_dir)
        _deselect(config, items, lambda item: selection.in_shard(_entry(item)))
    return (yield)


def _deselect(
    config: pytest.Config, items: list[pytest.Item], keep: Callable[[pytest.Item], bool]
) -> None:
    """Keep the items ``keep`` accepts; report the others deselected."""
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (kept if keep(item) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _entry(item: pytest.Item) -> CaseEntry | None:
    """The case of an eval item; ``None`` for a normal test, which every filter keeps."""
    return item.entry if isinstance(item, EvalItem) else None


def _sources(item: pytest.Item) -> Callable[[], Iterator[Path]] | None:
    """The case's own files for ``--eval-changed``: its case file (with a task
    directory's ``task.md``), then its fixture directory."""
    if not isinstance(item, EvalItem):
        return None

    def sources() -> Iterator[Path]:
        yield item.path
        if isinstance(item.parent, TaskDirFile):
            yield item.path.parent / "task.md"
        try:
            # Only now is the file loaded: the index of the parse cache has no fixture.
            fixture = item.case.fixture
        except CaseFileError:
            return  # its error is reported when it runs, as without the option
        if fixture is not None:
            yield fixture

    return sources


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    return (yield from reporting.make_report(item, call))


def pytest_report_header(config: pytest.Config) -> str | None:
    state = config.stash.get(SESSION_KEY, None)
    return reporting.header(state) if state is not None else None
