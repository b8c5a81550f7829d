"""The pytest plugin: options, ini settings, markers and hook wiring.

Everything of substance is delegated: collection to :mod:`.nodes`, runs to
:mod:`.runner`, the verdict to :mod:`.gate`, the summary to :mod:`.summary`.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases import __version__
from pytest_evalcases.agents import make_agent
from pytest_evalcases.agents.base import AgentSettings
from pytest_evalcases.cases.parsecache import ParseCache
from pytest_evalcases.errors import UsageError
from pytest_evalcases.kinds import SEVERITIES, Outcome
from pytest_evalcases.plugin import hookspecs as newhooks
from pytest_evalcases.plugin import integrations
from pytest_evalcases.plugin.nodes import (
    SESSION_KEY,
    BrokenFileItem,
    EvalFile,
    EvalItem,
    TaskDirFile,
    as_reason,
    session_of,
)
from pytest_evalcases.report import html as html_report
from pytest_evalcases.report import summary
from pytest_evalcases.results import files as resultsfile
from pytest_evalcases.results.record import RunRecord
from pytest_evalcases.run import variants
from pytest_evalcases.run.workspace import Variant
from pytest_evalcases.session import finish as recording
from pytest_evalcases.session import shard
from pytest_evalcases.session.changed import ChangedFiles, changed_files
from pytest_evalcases.session.state import EvalSession, Settings

SEVERITY_HELP = {
    "critical": "eval case whose failure blocks a merge (pytest -m critical is the merge gate)",
    "normal": "eval case whose failure fails the run",
    "advisory": "eval case whose failure is reported as xfailed and never fails the run alone",
}


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(newhooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evalcases", "eval cases for coding-agent configuration")
    group.addoption(
        "--eval-agent",
        dest="eval_agent",
        metavar="NAME",
        default=None,
        help="Agent that runs the cases: claude, codex, gemini, command (ini: eval_agent)",
    )
    group.addoption(
        "--eval-agent-command",
        dest="eval_agent_command",
        metavar="CMD",
        default=None,
        help="Command line of the command agent; {prompt} is one argument, else stdin "
        "(ini: eval_agent_command)",
    )
    group.addoption(
        "--eval-model",
        dest="eval_model",
        metavar="MODEL",
        default=None,
        help="Model passed to the agent (ini: eval_model)",
    )
    group.addoption(
        "--eval-workspace",
        dest="eval_workspace",
        metavar="[NAME=]DIR",
        action="append",
        default=[],
        type=_name_value("--eval-workspace"),
        help="Grade an existing directory instead of running an agent; repeatable, "
        "one item per directory (ini: eval_workspaces)",
    )
    group.addoption(
        "--eval-config",
        dest="eval_config",
        metavar="NAME=SOURCE",
        action="append",
        default=[],
        help="A configuration variant: a directory, a file, '.' (the working tree's "
        "config files) or git:REF[:PATH]; repeatable, the first is the baseline",
    )
    group.addoption(
        "--eval-repeat",
        dest="eval_repeat",
        metavar="N",
        type=_positive_int,
        default=1,
        help="Run every case N times; verdicts follow each case's min_pass_rate",
    )
    group.addoption(
        "--eval-html",
        dest="eval_html",
        metavar="PATH",
        default=None,
        help="Write a self-contained HTML report (case x variant matrix, trend) to PATH",
    )
    group.addoption(
        "--eval-transcript",
        dest="eval_transcript",
        action="store_true",
        default=False,
        help="Ask the agent for a transcript of tool calls even without tool checks",
    )
    group.addoption(
        "--eval-retry-errors",
        dest="eval_retry_errors",
        metavar="N",
        type=_non_negative_int,
        default=0,
        help="Retry errored runs up to N times, each in a fresh workspace",
    )
    group.addoption(
        "--eval-tags",
        dest="eval_tags",
        metavar="TAG[,TAG]",
        action="append",
        default=[],
        help="Run only the eval cases that carry one of these tags",
    )
    group.addoption(
        "--eval-defends",
        dest="eval_defends",
        metavar="PATH",
        action="append",
        default=[],
        help="Run only the eval cases that defend PATH (a file, or a directory prefix)",
    )
    group.addoption(
        "--eval-red-first",
        dest="eval_red_first",
        action="store_true",
        default=False,
        help="Authoring: a case that passes is reported failed (it tests nothing), one "
        "that fails is reported passed",
    )
    group.addoption(
        "--eval-changed",
        dest="eval_changed",
        metavar="REF",
        nargs="?",
        const="",
        default=None,
        help="Run only the eval cases whose defends path changed since REF (default: the "
        "merge base with origin/HEAD, main or master, else HEAD), uncommitted changes "
        "included; write --eval-changed=REF",
    )
    group.addoption(
        "--eval-lint",
        dest="eval_lint",
        action="store_true",
        default=False,
        help="Lint the collected case files too (evalcases lint); lint errors fail the run",
    )
    group.addoption(
        "--eval-save",
        dest="eval_save",
        metavar="PATH",
        default=None,
        help="Write the results file to PATH instead of eval_results_dir",
    )
    group.addoption(
        "--eval-no-save",
        dest="eval_no_save",
        action="store_true",
        default=False,
        help="Write no results file",
    )
    group.addoption(
        "--eval-baseline",
        dest="eval_baseline",
        metavar="FILE",
        default=None,
        help="Block when this run falls behind a stored results file "
        "(the tolerance: ini eval_baseline_tolerance)",
    )
    group.addoption(
        "--eval-shard",
        dest="eval_shard",
        metavar="K/N",
        type=shard.parse,
        default=None,
        help="Run only the K-th of N shards of the eval cases (merge with evalcases merge)",
    )
    parser.addini("eval_agent", "Agent that runs the cases (claude, codex, gemini, command)")
    parser.addini("eval_agent_command", "Command line of the command agent")
    parser.addini("eval_agent_args", "Extra arguments for the agent CLI", type="args")
    parser.addini("eval_model", "Model passed to the agent")
    parser.addini("eval_timeout", "Default seconds for one agent run", type=_NUMBER, default="600")
    parser.addini(
        "eval_min_pass_rate",
        "Overall case pass rate below which the gate blocks",
        type=_NUMBER,
        default="0.90",
    )
    parser.addini(
        "eval_paths", "Directories whose case files are collected, besides evals/", type="paths"
    )
    parser.addini(
        "eval_ignore", "Paths never collected as case files (tests there still are)", type="paths"
    )
    parser.addini("eval_config_root", "Directory that `defends` paths are relative to")
    parser.addini(
        "eval_results_dir", "Directory of the results files", default=str(resultsfile.DEFAULT_DIR)
    )
    parser.addini(
        "eval_baseline_tolerance",
        "Percentage points the pass rate may drop below --eval-baseline's",
        type=_NUMBER,
        default="3",
    )
    parser.addini(
        "eval_workspaces", "NAME=DIR lines (relative to the rootdir) to grade", type="linelist"
    )
    parser.addini(
        "eval_config_files",
        "Glob patterns of the agent configuration files, relative to the config root",
        type="args",
        default=list(variants.DEFAULT_CONFIG_FILES),
    )


def _name_value(option: str) -> type:
    """An argparse ``type=`` for ``[NAME=]VALUE``, quoting the bad value."""

    def parse(value: str) -> tuple[str, str]:
        name, sep, rest = value.partition("=")
        if not sep:
            return "", value
        if not name or not rest:
            raise argparse.ArgumentTypeError(f"{option} expects [NAME=]VALUE, got {value!r}")
        return name, rest

    return parse  # type: ignore[return-value]


def _non_negative_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {value!r}")
    return number


def _positive_int(value: str) -> int:
    number = _non_negative_int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value!r}")
    return number


def pytest_configure(config: pytest.Config) -> None:
    for severity in SEVERITIES:
        config.addinivalue_line("markers", f"{severity}: {SEVERITY_HELP[severity]}")
    try:
        settings = _settings(config)
        agent = make_agent(settings.agent) if settings.agent is not None else None
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    state = EvalSession(
        settings=settings,
        agent=agent,
        register_checks=lambda registry: config.hook.pytest_evalcases_register_checks(
            registry=registry
        ),
    )
    state.parse_cache = _load_parse_cache(config)
    config.stash[SESSION_KEY] = state
    config.pluginmanager.register(_SessionHooks(config, state), "evalcases-session")
    html = config.getoption("eval_html")
    if html and not hasattr(config, "workerinput"):
        # Registered after the session hooks: among trylast hooks pluggy calls the
        # earlier registered first, so this run's results file exists for the trend.
        path = config.invocation_params.dir / html
        config.pluginmanager.register(_HtmlHooks(config, state, path), "evalcases-html")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(integrations.XdistHooks(state), "evalcases-xdist")
    if config.pluginmanager.hasplugin("pytest_jsonreport"):
        config.pluginmanager.register(integrations.JsonReportHooks(), "evalcases-json-report")
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
    if baseline is not None and not hasattr(config, "workerinput"):
        try:
            state.baseline_doc = resultsfile.load(baseline)
        except resultsfile.ResultsFileError as exc:
            raise pytest.UsageError(f"--eval-baseline: {exc}") from None


def _settings(config: pytest.Config) -> Settings:
    rootdir = config.rootpath
    agent_name = config.getoption("eval_agent") or config.getini("eval_agent") or None
    command = config.getoption("eval_agent_command") or config.getini("eval_agent_command")
    if command and not agent_name:
        agent_name = "command"
    agent = None
    if agent_name:
        agent = AgentSettings(
            name=agent_name,
            args=tuple(config.getini("eval_agent_args")),
            command=command or None,
            model=config.getoption("eval_model") or config.getini("eval_model") or None,
            transcript=config.getoption("eval_transcript"),
            placeholders={"python": shlex.quote(sys.executable), "rootdir": str(rootdir)},
        )
    config_root = config.getini("eval_config_root")
    return Settings(
        rootdir=rootdir,
        agent=agent,
        timeout=_float_ini(config, "eval_timeout", positive=True),
        min_pass_rate=_float_ini(config, "eval_min_pass_rate", unit=True),
        retries=config.getoption("eval_retry_errors"),
        transcript=config.getoption("eval_transcript"),
        variants=_variants(config),
        repeat=config.getoption("eval_repeat"),
        eval_paths=tuple(Path(p) for p in config.getini("eval_paths")),
        ignore=tuple(Path(p) for p in config.getini("eval_ignore")),
        tags=frozenset(
            t.strip() for arg in config.getoption("eval_tags") for t in arg.split(",") if t.strip()
        ),
        defends=tuple(config.getoption("eval_defends")),
        config_root=(rootdir / config_root) if config_root else None,
        # pytest's own retention policy for tmp_path decides for workspaces too.
        keep_workspaces=config.getini("tmp_path_retention_policy") == "all",
        red_first=config.getoption("eval_red_first"),
        changed=_changed(config, (rootdir / config_root) if config_root else rootdir),
        lint=config.getoption("eval_lint"),
        results=_results_settings(config),
    )


def _changed(config: pytest.Config, defends_root: Path) -> ChangedFiles | None:
    ref = config.getoption("eval_changed")
    if ref is None:
        return None
    return changed_files(config.rootpath, ref or None, defends_root)


def _results_settings(config: pytest.Config) -> resultsfile.ResultsSettings:
    here = config.invocation_params.dir
    save, baseline = config.getoption("eval_save"), config.getoption("eval_baseline")
    tolerance = _float_ini(config, "eval_baseline_tolerance")
    if tolerance < 0:
        raise UsageError(f"ini option eval_baseline_tolerance expects a number >= 0: {tolerance}")
    return resultsfile.ResultsSettings(
        save=not config.getoption("eval_no_save"),
        results_dir=config.rootpath / config.getini("eval_results_dir"),
        save_path=here / save if save else None,
        baseline=here / baseline if baseline else None,
        tolerance=tolerance,
        config_patterns=tuple(config.getini("eval_config_files")),
        shard=config.getoption("eval_shard"),
    )


#: The type of numeric ini options: from pytest 9.2 a number or a string, so that native
#: TOML (`eval_timeout = 300`) and INI files both work (the plugin checks the value,
#: naming the option); before, a string (quote numbers in pytest.toml).
_NUMBER: Any = (float | str) if pytest.version_tuple >= (9, 2) else "string"


def _float_ini(
    config: pytest.Config, name: str, *, positive: bool = False, unit: bool = False
) -> float:
    raw = config.getini(name)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise UsageError(f"ini option {name} expects a number, got {raw!r}") from None
    if positive and value <= 0:
        raise UsageError(f"ini option {name} expects a number > 0, got {raw!r}")
    if unit and not 0 <= value <= 1:
        raise UsageError(f"ini option {name} expects a number from 0 to 1, got {raw!r}")
    return value


def _variants(config: pytest.Config) -> tuple[Variant, ...]:
    if config.getoption("eval_config"):
        return _config_variants(config)
    given: list[tuple[str, Path, str]] = []
    for line in config.getini("eval_workspaces"):
        name, _, rest = line.rpartition("=") if "=" in line else ("", "", line)
        given.append((name, config.rootpath / rest.strip(), f"{line} (ini eval_workspaces)"))
    if config.getoption("eval_workspace"):
        given = [
            (name, config.invocation_params.dir / path, f"--eval-workspace {path}")
            for name, path in config.getoption("eval_workspace")
        ]
    if not given:
        return _working_tree_variant(config)
    variants: list[Variant] = []
    for name, path, origin in given:
        name = name.strip() or path.name
        if not path.is_dir():
            raise UsageError(f"{origin}: directory {path} does not exist")
        if any(v.name == name for v in variants):
            raise UsageError(f"{origin}: the name {name!r} is given twice; use NAME=DIR")
        variants.append(Variant(name=name, graded_dir=path.resolve(), source=str(path)))
    if len(variants) == 1 and not given[0][0]:
        variants = [Variant(graded_dir=variants[0].graded_dir, source=variants[0].source)]
    return tuple(variants)


def _working_tree_variant(config: pytest.Config) -> tuple[Variant, ...]:
    """No ``--eval-config``: every workspace gets the working tree's configuration
    files as they are now (``eval_config_files``), since workspaces live outside the
    repository and the agent would otherwise see none of it."""
    config_root = config.getini("eval_config_root")
    root = config.rootpath / config_root if config_root else config.rootpath
    if not variants.config_files(root, config.getini("eval_config_files")):
        return (Variant(),)
    return _config_variants(config, [variants.ConfigSpec("", variants.WORKING_TREE)])


def _config_variants(
    config: pytest.Config, specs: list[variants.ConfigSpec] | None = None
) -> tuple[Variant, ...]:
    """``--eval-config``: extracted once per process (controller and each xdist worker)
    into a temporary cache that goes when pytest ends."""
    if config.getoption("eval_workspace"):
        raise UsageError("--eval-config and --eval-workspace cannot be combined")
    if specs is None:
        specs = [variants.parse_spec(value) for value in config.getoption("eval_config")]
    cache = Path(tempfile.mkdtemp(prefix="evalcases-config-"))
    config.add_cleanup(lambda: shutil.rmtree(cache, ignore_errors=True))
    config_root = config.getini("eval_config_root")
    return variants.build_variants(
        specs,
        config_root=config.rootpath / config_root if config_root else config.rootpath,
        invocation_dir=config.invocation_params.dir,
        cache_dir=cache,
        patterns=config.getini("eval_config_files"),
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return True if session_of(config).discovery.skip_dir(collection_path) else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    found = session_of(parent.config).discovery.case_file(file_path)
    if found is None:
        return None
    node = TaskDirFile if found.kind == "task" else EvalFile
    return node.from_parent(parent, path=file_path, evals_root=found.evals_root)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Generator[None, None, None]:
    # A broken case file is reported whatever -m, -k or --eval-* would select.
    broken = [item for item in items if isinstance(item, BrokenFileItem)]
    if broken:
        items[:] = [item for item in items if not isinstance(item, BrokenFileItem)]
    _select(config, items)
    _shard(config, items)
    try:
        return (yield)
    finally:
        items[:0] = broken


def _shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    part = session_of(config).settings.results.shard
    if part is None:
        return
    # Only eval items are split: normal tests run in every shard, as without the option.
    _deselect(
        config, items, lambda i: not isinstance(i, EvalItem) or shard.in_shard(i.entry.id, part)
    )


def _deselect(
    config: pytest.Config, items: list[pytest.Item], keep: Callable[[pytest.Item], bool]
) -> None:
    """Keep the items ``keep`` accepts; report the others deselected, as ``-k`` does."""
    dropped = [item for item in items if not keep(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if keep(item)]


def _select(config: pytest.Config, items: list[pytest.Item]) -> None:
    settings = session_of(config).settings
    if not settings.tags and not settings.defends and settings.changed is None:
        return
    wanted = [Path(d).as_posix().rstrip("/") for d in settings.defends]

    def keep(item: pytest.Item) -> bool:
        if not isinstance(item, EvalItem):
            return True
        case = item.entry
        if settings.tags and not settings.tags.intersection(case.tags):
            return False
        if wanted:
            defended = Path(case.defends).as_posix()
            if not any(defended == w or defended.startswith(w + "/") for w in wanted):
                return False
        return settings.changed is None or settings.changed.selects(case.defends)

    _deselect(config, items, keep)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    excinfo = call.excinfo
    if (
        isinstance(item, (EvalItem, BrokenFileItem))
        and report.when == "setup"
        and report.failed
        and excinfo is not None
        and isinstance(excinfo.value, pytest.fail.Exception)
    ):
        # The reason without the "Failed: " of the pytest.fail that made it an error.
        as_reason(report.longrepr, item, excinfo.value.msg or "")
    if isinstance(item, EvalItem) and report.skipped and isinstance(report.longrepr, tuple):
        # Point skip reasons at the case, not at the plugin line that skipped it.
        report.longrepr = (str(item.path), item.entry.line + 1, report.longrepr[2])
    if isinstance(item, (EvalItem, BrokenFileItem)):
        outcome = _outcome(report)
        if outcome is not None:
            record = item.record(outcome) if isinstance(item, EvalItem) else item.record()
            # A plain dict: xdist sends report attributes from workers to the controller.
            report.evalcases = record.to_dict()  # type: ignore[attr-defined]
    return report


def _outcome(report: pytest.TestReport) -> Outcome | None:
    if report.when == "setup":
        if report.failed:
            return "error"
        return "skipped" if report.skipped else None
    if report.when == "call":
        if hasattr(report, "wasxfail"):
            return "xfailed"
        return "passed" if report.passed else "failed"
    return None


PARSE_CACHE_KEY = "evalcases/parsed"


def _parse_cache_version() -> str:
    """The plugin's version and the modification times of the modules that decide
    whether a case file is valid: an upgrade, or an edit of an editable install,
    invalidates what earlier runs cached."""
    here = Path(__file__).parent.parent
    stamps = []
    for name in (
        "cases/schema.py",
        "cases/registry.py",
        "cases/diagnostics.py",
        "run/checks.py",
        "cases/loading.py",
        "cases/parsecache.py",
    ):
        try:
            stamps.append(str((here / name).stat().st_mtime_ns))
        except OSError:
            stamps.append("-")
    return ":".join([__version__, *stamps])


def _load_parse_cache(config: pytest.Config) -> ParseCache | None:
    """The case files parsed by earlier runs, from pytest's cache (``-p no:cacheprovider``
    and ``--cache-clear`` do without)."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return None
    stored = cache.get(PARSE_CACHE_KEY, None)
    if isinstance(stored, dict) and stored.get("version") == _parse_cache_version():
        files = stored.get("files")
        return ParseCache(files if isinstance(files, dict) else None)
    return ParseCache()


def _save_parse_cache(config: pytest.Config, parse_cache: ParseCache | None) -> None:
    cache = getattr(config, "cache", None)
    if cache is None or parse_cache is None or not parse_cache.changed:
        return
    # Under xdist every worker collects the same files: one of them writes.
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or workerinput.get("workerid") == "gw0":
        cache.set(PARSE_CACHE_KEY, {"version": _parse_cache_version(), "files": parse_cache.files})


class _SessionHooks:
    """The hooks that feed and read the session object; registered per config."""

    def __init__(self, config: pytest.Config, state: EvalSession) -> None:
        self.config = config
        self.state = state
        self.is_worker = hasattr(config, "workerinput")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "evalcases", None)
        if data is not None:
            self.state.records.append(RunRecord.from_dict(data))
        elif report.failed:
            # Setup, call or teardown of a normal test: pytest counts each as a failure.
            self.state.other_failures += 1

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # A module that does not import fails the run, whatever the gate says.
        if report.failed:
            self.state.other_failures += 1

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        _save_parse_cache(self.config, self.state.parse_cache)
        if self.is_worker or not self.state.records:
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            self.state.incomplete.append("interrupted")
        elif session.shouldfail or session.shouldstop:
            stopped = session.shouldfail or session.shouldstop
            self.state.incomplete.append(f"stopped early: {stopped}")
        recording.finish(self.state, self.config.invocation_params.dir)
        session.exitstatus = self.state.exit_status(int(exitstatus))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.is_worker or not self.state.records:
            return
        hint = ""
        if self.state.agent is None:
            hint = "no agent configured: --eval-agent, or --eval-workspace to grade directories"
        terminalreporter.section("eval gate")
        for line in summary.lines(self.state.report(), hint):
            terminalreporter.write_line(line)
        if self.state.results_line:
            terminalreporter.write_line(self.state.results_line)


class _HtmlHooks:
    """``--eval-html``: the controller writes the report when the session ends."""

    def __init__(self, config: pytest.Config, state: EvalSession, path: Path) -> None:
        self.config = config
        self.state = state
        self.path = path
        self.line = ""

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        results = self.state.settings.results
        results_dir = results.results_dir or self.config.rootpath / resultsfile.DEFAULT_DIR
        try:
            html_report.write(
                self.path,
                self.state.report(),
                html_report.read_trend(results_dir),
                title=f"eval gate: {self.config.rootpath.name}",
            )
        except OSError as exc:
            self.line = f"html report not written: {self.path}: {exc}"
        else:
            self.line = f"html report: {self.path}"

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.line:
            terminalreporter.write_line(self.line)


def pytest_report_header(config: pytest.Config) -> str | None:
    state = config.stash.get(SESSION_KEY, None)
    if state is None:
        return None
    settings = state.settings
    agent = settings.agent.name if settings.agent else "none"
    graded = [v.name or v.source for v in settings.variants if v.graded_dir is not None]
    if graded:
        return f"evalcases: grading {', '.join(graded)}"
    configs = [f"{v.name} ({v.source})" for v in settings.variants if v.name]
    if configs:
        return f"evalcases: agent {agent}; configurations {', '.join(configs)}"
    if settings.variants[0].overlays:
        return f"evalcases: agent {agent}; configuration from the working tree"
    return f"evalcases: agent {agent}"
