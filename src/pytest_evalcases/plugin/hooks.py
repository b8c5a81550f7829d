"""The pytest plugin (the ``pytest11`` entry point).

Every pytest session of a project that has the plugin installed imports this module,
and most of them run no eval case (a team's unit tests, each xdist worker of one): it
imports only what the option declarations need. ``pytest_configure`` starts the plugin's
session (:mod:`.session_setup`: settings, agents, the hooks that run cases) only when
this session may run a case: an ``--eval-*`` option given, or a path collected that is
or holds a case file (docs/reference.md, "Sessions without eval cases"). The collection
and report hooks below hand the work to that session's :class:`.collection.Collection`
and do nothing without one.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_evalcases.cases.discovery import Discovery
from pytest_evalcases.kinds import SEVERITIES
from pytest_evalcases.plugin import hookspecs, options
from pytest_evalcases.session import start

if TYPE_CHECKING:
    # Named for the type checker only: a session without eval cases never imports it.
    from pytest_evalcases.plugin.collection import Collection

SEVERITY_HELP = {
    "critical": "eval case whose failure blocks a merge (pytest -m critical is the merge gate)",
    "normal": "eval case whose failure fails the run",
    "advisory": "eval case whose failure is reported as xfailed and never fails the run alone",
}


#: Where the plugin keeps what its collection and report hooks hand the work to.
COLLECTION_KEY: pytest.StashKey[Collection] = pytest.StashKey()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    for severity in SEVERITIES:
        config.addinivalue_line("markers", f"{severity}: {SEVERITY_HELP[severity]}")
    starts = may_run_cases(config)
    if starts or _sets_ini(config):
        # Imported only now, with everything a session that runs cases needs: it keeps
        # the start-up cost of the other sessions down.
        from pytest_evalcases.plugin import session_setup

        if starts:
            config.stash[COLLECTION_KEY] = session_setup.start(config)
        else:
            # No case to run: only the settings, so that a bad ini value is said.
            session_setup.check_settings(config)


def collection_of(config: pytest.Config) -> Collection | None:
    """The collection hooks' work of this pytest run; ``None`` in a session the plugin
    did not start, which collects no case file."""
    return config.stash.get(COLLECTION_KEY, None)


def may_run_cases(config: pytest.Config) -> bool:
    """Whether this session may run an eval case: an ``--eval-*`` option was given, or
    a path it collects is, or holds, a case file (an evals directory, an ``eval_paths``
    entry, a task directory's ``checks.yaml``), walked as pytest walks it."""
    if _eval_option_given(config) or config.getoption("pyargs", False):
        return True
    try:
        eval_paths = tuple(Path(p) for p in config.getini("eval_paths"))
    except AssertionError:
        # pytest 8.0 with ``-o eval_paths=...`` and no configuration file: the session
        # reads it its own way (and says what is wrong with it).
        return True
    norecurse = tuple(config.getini("norecursedirs"))
    paths = [config.invocation_params.dir / arg.partition("::")[0] for arg in config.args]
    discovery = Discovery(config.rootpath, eval_paths)
    return discovery.may_hold_cases(
        paths, skip_dir=lambda name: any(fnmatch.fnmatch(name, p) for p in norecurse)
    )


def _eval_option_given(config: pytest.Config) -> bool:
    """Whether an ``--eval-*`` option is on the command line, in ``PYTEST_ADDOPTS`` or
    in the ini's ``addopts``."""
    return start.eval_option_given([*config.invocation_params.args, *config.getini("addopts")])


def _sets_ini(config: pytest.Config) -> bool:
    """Whether the configuration file, or ``-o``, may set an ``eval_*`` value."""
    return start.sets_ini(config.getoption("override_ini") or (), config.inipath)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    collection = collection_of(session.config)
    if collection is not None:
        collection.collected(session)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    collection = collection_of(config)
    if collection is not None and collection.ignores(collection_path):
        return True
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    collection = collection_of(parent.config)
    return collection.collect_file(file_path, parent) if collection is not None else None


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    collection = collection_of(collector.config)
    if collection is not None and report.passed:
        # pytest collects regular files only: a case file that is not one is said here.
        report.result.extend(collection.passed_over(collector))
    return report


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Generator[None, None, None]:
    collection = collection_of(config)
    if collection is not None:
        collection.select(items)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    collection = collection_of(item.config)
    if collection is None:
        return (yield)
    return (yield from collection.make_report(item, call))


def pytest_report_header(config: pytest.Config) -> str | None:
    collection = collection_of(config)
    return collection.header() if collection is not None else None
