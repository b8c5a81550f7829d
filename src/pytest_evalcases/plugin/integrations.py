"""Hooks for optional plugins, registered only when the plugin is present."""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

import pytest

from pytest_evalcases.plugin.nodes import EvalItem
from pytest_evalcases.plugin.settings import WORKER_INPUT
from pytest_evalcases.plugin.stash import SPEND_FILE_KEY
from pytest_evalcases.session.record import json_metadata
from pytest_evalcases.session.state import EvalSession


class XdistHooks:
    """A crashed worker leaves the run incomplete; the results file says so (what part
    of the suite the workers selected comes back through :class:`SuiteHooks
    <pytest_evalcases.plugin.suite.SuiteHooks>`). Every worker keeps workspaces, and
    records runs, where the controller's results file will be, and replays from the
    results file the controller chose."""

    def __init__(self, state: EvalSession) -> None:
        self.state = state

    def pytest_configure_node(self, node: Any) -> None:
        spend_file = node.config.stash.get(SPEND_FILE_KEY, None)
        handed = self.state.settings.worker_input(spend_file)
        node.workerinput[WORKER_INPUT] = handed.to_json()

    def pytest_handlecrashitem(self, crashitem: str) -> None:
        self.state.incomplete.append(f"a worker crashed while running {crashitem}")

    def pytest_testnodedown(self, node: Any, error: object | None) -> None:
        if error is not None:
            name = getattr(getattr(node, "gateway", None), "id", "?")
            self.state.incomplete.append(f"worker {name} went down: {error}")


class TimeoutHooks:
    """pytest-timeout (2.1 or later): an eval item's time is the plugin's to keep, so
    that the case's own report and the kill of its processes win over pytest-timeout's
    stack dump (its signal method fails the test wherever it is, its thread method ends
    pytest at once and leaves the agent running). Its limit becomes the item's
    :class:`~pytest_evalcases.run.runner.OuterLimit` (docs/agents.md, "pytest-timeout")."""

    # tryfirst: before pytest-timeout's own implementation, which sets the timer.
    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_timeout_set_timer(self, item: pytest.Item, settings: Any) -> bool | None:
        seconds = getattr(settings, "timeout", None)
        if not isinstance(item, EvalItem) or getattr(settings, "func_only", False):
            # func_only times the call phase alone: the agent runs in setup.
            return None
        if not isinstance(seconds, (int, float)) or seconds <= 0:
            return None
        from pytest_evalcases.run.runner import OuterLimit

        item.limit = OuterLimit(end=time.monotonic() + seconds, seconds=float(seconds))
        return True


class JsonReportHooks:
    """pytest-json-report: each eval item's metadata carries its case and usage."""

    # Optional: the hook exists only once --json-report registered the report plugin.
    @pytest.hookimpl(optionalhook=True)
    def pytest_json_runtest_metadata(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> dict[str, Any] | None:
        if not isinstance(item, EvalItem):
            return None
        return json_metadata(item.record())


class MetadataHooks:
    """pytest-metadata, which pytest-json-report brings along, adds a ``metadata: {...}``
    line to the header of every ``-v`` run of the project. It leaves the header unless
    the user asked for it: ``-vv``, or one of pytest-metadata's own options. Only the
    line goes; the metadata itself (the ``metadata`` fixture, JSON and HTML reports) is
    untouched (docs/reference.md, "Header lines")."""

    @pytest.hookimpl(wrapper=True)
    def pytest_report_header(
        self, config: pytest.Config
    ) -> Generator[None, list[str | list[str]], list[str | list[str]]]:
        lines = yield
        if _asked_for_metadata(config):
            return lines
        return [line for line in lines if not _is_metadata_line(line)]


def _asked_for_metadata(config: pytest.Config) -> bool:
    return (
        config.getoption("verbose", 0) > 1
        or bool(config.getoption("metadata", None))
        or config.getoption("metadata_from_json", "{}") not in ("{}", None)
        or bool(config.getoption("metadata_from_json_file", None))
    )


def _is_metadata_line(line: str | list[str]) -> bool:
    return isinstance(line, str) and line.startswith("metadata: ")


class DeepQueues:
    """Under xdist's ``load`` distribution, each worker is sent enough items to keep
    its ``--eval-concurrency`` runs busy: xdist's own scheduler keeps two items queued
    on a worker whose tests take long, which would leave all but two runs idle."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getoption("dist", None) != "load":
            return None
        return deep_load_scheduling(config, log, 2 * self.concurrency)


def deep_load_scheduling(config: pytest.Config, log: Any, depth: int) -> Any:
    """xdist's ``load`` scheduling, with at least ``depth`` items queued on each worker
    while items are left (docs/reference.md, "Concurrency")."""
    from xdist.scheduler import LoadScheduling  # type: ignore[import-untyped]

    class DeepLoadScheduling(LoadScheduling):  # type: ignore[misc]
        def schedule(self) -> None:
            super().schedule()
            for node in self.nodes:
                self.check_schedule(node)

        def check_schedule(self, node: Any, duration: float = 0) -> None:
            if node.shutting_down or not self.pending:
                super().check_schedule(node, duration)
                return
            queued = len(self.node2pending[node])
            if queued < depth:
                self._send_tests(node, min(depth - queued, len(self.pending)))
            if not self.pending:
                for each in self.nodes:
                    if not each.shutting_down:
                        each.shutdown()

    return DeepLoadScheduling(config, log)
