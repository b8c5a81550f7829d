"""The options and ini settings of the plugin, and the frozen :class:`Settings` built
from them in one place: each value read once, every default from
:mod:`pytest_evalcases.defaults` (docs/reference.md lists them)."""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import shlex
import shutil
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_evalcases import defaults
from pytest_evalcases.errors import UsageError
from pytest_evalcases.kinds import (
    AGENT_HOMES,
    SANDBOX_MODES,
    SANDBOX_NETWORKS,
    AgentHome,
    SandboxMode,
    SandboxNetwork,
)
from pytest_evalcases.recording.format import SUFFIX as RECORDING_SUFFIX
from pytest_evalcases.recording.format import RecordPlace
from pytest_evalcases.results import writer as resultsfile
from pytest_evalcases.results.reader import ResultsFileError
from pytest_evalcases.results.skills import SkillLimits
from pytest_evalcases.run import keep, variants
from pytest_evalcases.run.keep import KeepPlace
from pytest_evalcases.run.perturb import PerturbPlan, parse_classes
from pytest_evalcases.run.workspace import Variant, WorkspaceDirs
from pytest_evalcases.session import shard
from pytest_evalcases.session.state import SandboxSettings, Settings
from pytest_evalcases.text import non_negative_int, positive_int

if TYPE_CHECKING:
    from pytest_evalcases.agents.base import AgentSettings
    from pytest_evalcases.recording.source import ReplayPlan
    from pytest_evalcases.session.changed import ChangedFiles

#: The type of numeric ini options: from pytest 9.2 a number or a string, so that native
#: TOML (`eval_timeout = 300`) and INI files both work (the plugin checks the value,
#: naming the option); before, a string (quote numbers in pytest.toml).
_NUMBER: Any = (float | str) if pytest.version_tuple >= (9, 2) else "string"
#: The key of ``workerinput`` by which the controller tells its xdist workers where
#: to keep workspaces: one directory for the session, named after its results file.
KEEP_INPUT = "evalcases_keep"
#: The key of ``workerinput`` by which the controller tells its workers where to record.
RECORD_INPUT = "evalcases_record"
#: The key of ``workerinput`` by which the controller tells its workers which results
#: file ``--eval-regrade`` regrades (the newest when the controller started).
REGRADE_INPUT = "evalcases_regrade"
#: The options that run the agent against a recording: never with ``--eval-regrade``,
#: which runs none (docs/replay.md).
_REPLAY_OPTIONS = {"eval_replay": "--eval-replay", "eval_reuse": "--eval-reuse"}
#: The key of ``workerinput`` by which the controller tells its workers what to replay.
REPLAY_INPUT = "evalcases_replay"


def add_options(parser: pytest.Parser) -> None:
    """The ``--eval-*`` options and ``eval_*`` ini settings.

    Numeric ini defaults are the strings docs/reference.md shows (``600``, ``0.90``).
    """
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
        "--eval-timeout",
        dest="eval_timeout",
        metavar="SECONDS",
        type=_positive_number,
        default=None,
        help="Seconds for one agent run; a case's own timeout: wins (ini: eval_timeout)",
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
    # --eval-config and --eval-variant append to one list, so that the first given of
    # either is the baseline (docs/variants.md).
    group.addoption(
        "--eval-config",
        dest="eval_variant",
        metavar="NAME=SOURCE",
        action="append",
        default=[],
        type=_tagged("--eval-config"),
        help="A configuration variant: a directory, a file, '.' (the working tree's "
        "config files) or git:REF[:PATH]; repeatable, the first is the baseline",
    )
    group.addoption(
        "--eval-variant",
        dest="eval_variant",
        metavar="NAME=KEY:VALUE,...",
        action="append",
        default=[],
        type=_tagged("--eval-variant"),
        help="A variant of any factor, keys agent, model, args, config (a SOURCE as for "
        "--eval-config); keys left out take the session's values; repeatable, the first "
        "is the baseline (ini: eval_variants)",
    )
    group.addoption(
        "--eval-repeat",
        dest="eval_repeat",
        metavar="N",
        type=positive_int,
        default=1,
        help="Run every case N times; verdicts follow each case's min_pass_rate",
    )
    group.addoption(
        "--eval-perturb",
        dest="eval_perturb",
        metavar="CLASS[,CLASS]",
        action="append",
        default=[],
        help="Also run every case with eval_perturb_n perturbations of its prompt per class: "
        "typo, case, whitespace, filler, format (ini: eval_perturb; docs/perturbation.md)",
    )
    group.addoption(
        "--eval-concurrency",
        dest="eval_concurrency",
        metavar="N",
        type=positive_int,
        default=None,
        help="Up to N agent runs at the same time in each pytest process (ini "
        "eval_concurrency, default 1); items are still reported in order",
    )
    group.addoption(
        "--eval-budget",
        dest="eval_budget",
        metavar="USD",
        type=_usd_amount,
        default=None,
        help="Start no agent run once the cost reported so far plus the expected cost of "
        "the next run would exceed USD (ini eval_budget)",
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
        type=non_negative_int,
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
        help="Run only the eval cases whose defends path, case file or fixture changed "
        "since REF (default: the "
        "merge base with origin/HEAD, main or master, else HEAD), uncommitted changes "
        "included; write --eval-changed=REF",
    )
    group.addoption(
        "--eval-regrade",
        dest="eval_regrade",
        metavar="RESULTS_FILE",
        nargs="?",
        const="",
        default=None,
        help="Run no agent: grade each run stored with RESULTS_FILE (default: the newest "
        "in eval_results_dir) again with the current checks; write --eval-regrade=FILE",
    )
    group.addoption(
        "--eval-replay",
        dest="eval_replay",
        metavar="RESULTS_FILE",
        nargs="?",
        const="",
        default=None,
        help="Run every case again with its model requests answered from the recordings "
        "of RESULTS_FILE (default: the newest results file); a request that differs is "
        "an error; write --eval-replay=RESULTS_FILE",
    )
    group.addoption(
        "--eval-reuse",
        dest="eval_reuse",
        metavar="RESULTS_FILE",
        nargs="?",
        const="",
        default=None,
        help="As --eval-replay, but from the first request that differs the run goes live "
        "and is recorded anew; write --eval-reuse=RESULTS_FILE",
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
        "--eval-keep",
        dest="eval_keep",
        metavar="DIR",
        default=None,
        help="Keep the workspaces of failed and errored runs in DIR "
        "(default: beside the results file; ini: eval_keep_dir)",
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
    group.addoption(
        "--eval-sandbox",
        dest="eval_sandbox",
        metavar="MODE",
        choices=SANDBOX_MODES,
        default=None,
        help="Contain each run: auto (bubblewrap where it runs), bwrap, none "
        "(ini: eval_sandbox; docs/sandbox.md)",
    )
    parser.addini("eval_agent", "Agent that runs the cases (claude, codex, gemini, command)")
    parser.addini("eval_agent_command", "Command line of the command agent")
    parser.addini("eval_agent_args", "Extra arguments for the agent CLI", type="args")
    parser.addini("eval_model", "Model passed to the agent")
    parser.addini(
        "eval_agent_home",
        "isolated: a fresh agent home per run (credentials only); inherit: the operator's own",
        default=defaults.AGENT_HOME,
    )
    parser.addini(
        "eval_sandbox",
        "auto: bubblewrap where it runs, else none; bwrap: always (an error where it cannot "
        "run); none: runs are not contained",
        default=defaults.SANDBOX,
    )
    parser.addini(
        "eval_sandbox_network",
        "shared: setups and command checks reach the network; none: they do not "
        "(the agent always does)",
        default=defaults.SANDBOX_NETWORK,
    )
    parser.addini(
        "eval_sandbox_ro", "Paths also visible, read-only, inside the sandbox", type="paths"
    )
    parser.addini("eval_sandbox_rw", "Paths also writable inside the sandbox", type="paths")
    parser.addini(
        "eval_timeout",
        "Default seconds for one agent run",
        type=_NUMBER,
        default=f"{defaults.TIMEOUT:g}",
    )
    parser.addini(
        "eval_concurrency",
        "Agent runs at the same time in each pytest process",
        default=str(defaults.CONCURRENCY),
    )
    parser.addini(
        "eval_budget",
        "USD the session's agent runs may cost, as they report it (unset: no limit)",
        type=_NUMBER,
        default="",
    )
    parser.addini(
        "eval_budget_token_price",
        "USD per million tokens at which the budget counts runs that report tokens but no "
        "cost (unset: not counted)",
        type=_NUMBER,
        default="",
    )
    parser.addini(
        "eval_min_pass_rate",
        "Overall case pass rate below which the gate blocks",
        type=_NUMBER,
        default=f"{defaults.MIN_PASS_RATE:.2f}",
    )
    parser.addini(
        "eval_skill_min_recall",
        "A skill's recall below which the gate blocks (unset: none)",
        default="",
    )
    parser.addini(
        "eval_skill_max_false_trigger",
        "A skill's false-trigger rate above which the gate blocks (unset: none)",
        default="",
    )
    parser.addini(
        "eval_paths", "Directories whose case files are collected, besides evals/", type="paths"
    )
    parser.addini(
        "eval_ignore", "Paths never collected as case files (tests there still are)", type="paths"
    )
    parser.addini("eval_config_root", "Directory that `defends` paths are relative to")
    parser.addini(
        "eval_results_dir", "Directory of the results files", default=str(defaults.RESULTS_DIR)
    )
    parser.addini(
        "eval_keep_dir",
        "Directory (relative to the rootdir) of the kept workspaces of failed and errored "
        "runs; default: the results file's",
    )
    parser.addini(
        "eval_keep_max_mb",
        "Megabytes the kept workspaces take at most, the oldest removed first; 0 keeps none",
        type=_NUMBER,
        default=f"{defaults.KEEP_MAX_MB:g}",
    )
    parser.addini(
        "eval_redact_env",
        "Environment variables whose values are redacted as secrets, besides those named "
        "*KEY*, *TOKEN*, *SECRET*, *PASSWORD*, *CREDENTIAL*",
        type="args",
    )
    parser.addini(
        "eval_record",
        "Record the model traffic of live runs beside the results file (docs/replay.md)",
        type="bool",
        default=defaults.RECORD,
    )
    parser.addini(
        "eval_baseline_tolerance",
        "Percentage points the pass rate may drop below --eval-baseline's",
        type=_NUMBER,
        default=f"{defaults.BASELINE_TOLERANCE:g}",
    )
    parser.addini(
        "eval_variants",
        "NAME=KEY:VALUE,... lines, one variant each, as --eval-variant",
        type="linelist",
    )
    parser.addini(
        "eval_workspaces", "NAME=DIR lines (relative to the rootdir) to grade", type="linelist"
    )
    parser.addini("eval_perturb", "Perturbation classes, comma-separated, as --eval-perturb")
    parser.addini(
        "eval_perturb_n",
        "Perturbations of each prompt per class",
        default=str(defaults.PERTURB_N),
    )
    parser.addini(
        "eval_perturb_seed",
        "Seed of the perturbations (recorded in the pins)",
        default=str(defaults.PERTURB_SEED),
    )
    parser.addini(
        "eval_perturb_blocking",
        "Perturbed runs count in the gate as runs of their case (default: advisory)",
        type="bool",
        default=False,
    )
    parser.addini(
        "eval_perturb_max_delta",
        "Percentage points a perturbation class may drop the pass rate before it is flagged",
        type=_NUMBER,
        default=f"{defaults.PERTURB_MAX_DELTA:g}",
    )
    parser.addini(
        "eval_config_files",
        "Glob patterns of the agent configuration files, relative to the config root",
        type="args",
        default=list(defaults.CONFIG_FILES),
    )


def _tagged(option: str) -> type:
    """An argparse ``type=`` that keeps which option gave the value."""

    def tag(value: str) -> tuple[str, str]:
        return option, value

    return tag  # type: ignore[return-value]


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


def _positive_number(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not math.isfinite(number) or number <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {value!r}")
    return number


def _usd_amount(value: str) -> float:
    from pytest_evalcases.plugin.budget import usd_amount

    return usd_amount(value)


def _agent_home(config: pytest.Config) -> AgentHome:
    value = str(config.getini("eval_agent_home")).strip()
    for home in AGENT_HOMES:
        if value == home:
            return home
    raise UsageError(f"ini option eval_agent_home expects isolated or inherit, got {value!r}")


def _choice(config: pytest.Config, name: str, allowed: tuple[str, ...]) -> str:
    value = str(config.getini(name)).strip()
    if value not in allowed:
        raise UsageError(f"ini option {name} expects {' or '.join(allowed)}, got {value!r}")
    return value


def _sandbox(config: pytest.Config) -> SandboxSettings:
    mode: SandboxMode = config.getoption("eval_sandbox") or _choice(  # type: ignore[assignment]
        config, "eval_sandbox", SANDBOX_MODES
    )
    network: SandboxNetwork = _choice(  # type: ignore[assignment]
        config, "eval_sandbox_network", SANDBOX_NETWORKS
    )
    return SandboxSettings(
        mode=mode,
        network=network,
        read_only=_ini_paths(config, "eval_sandbox_ro"),
        writable=_ini_paths(config, "eval_sandbox_rw"),
    )


def build_settings(config: pytest.Config) -> Settings:
    """The settings of this run, from the options and ini values; :class:`UsageError`
    names a bad one."""
    # Before the stored-run options, which it cannot be combined with, read their files.
    perturb = _perturb(config)
    rootdir = config.rootpath
    given_root = config.getini("eval_config_root")
    config_root = rootdir / given_root if given_root else None
    # `defends` paths, the configuration files and --eval-changed start from here.
    defends_root = config_root or rootdir
    agent_name = config.getoption("eval_agent") or config.getini("eval_agent") or None
    command = config.getoption("eval_agent_command") or config.getini("eval_agent_command")
    if command and not agent_name:
        agent_name = "command"
    agent = None
    session_variants = _variants(config, defends_root)
    wanted = [v for v in session_variants if v.agent or v.model or v.args is not None]
    if agent_name or wanted:
        # The agent's side is imported only for a run that names an agent.
        from pytest_evalcases.agents.base import AgentSettings

        agent = AgentSettings(
            name=agent_name or "",
            args=tuple(config.getini("eval_agent_args")),
            command=command or None,
            model=config.getoption("eval_model") or config.getini("eval_model") or None,
            transcript=config.getoption("eval_transcript"),
            # Replaced inside words after the command line is split, so unquoted
            # (docs/agents.md, "Any command").
            placeholders={"python": sys.executable, "rootdir": str(rootdir)},
        )
    agents = _variant_agents(agent, session_variants)
    return Settings(
        rootdir=rootdir,
        agent=agent if agent_name else None,
        agents=agents,
        # The option beats the ini value; a case's own `timeout:` beats both (docs/reference.md).
        timeout=config.getoption("eval_timeout")
        or _float_ini(config, "eval_timeout", positive=True),
        min_pass_rate=_float_ini(config, "eval_min_pass_rate", unit=True),
        skill_limits=SkillLimits(
            _optional_rate(config, "eval_skill_min_recall"),
            _optional_rate(config, "eval_skill_max_false_trigger"),
        ),
        retries=config.getoption("eval_retry_errors"),
        transcript=config.getoption("eval_transcript"),
        agent_home=_agent_home(config),
        sandbox=_sandbox(config),
        variants=session_variants,
        repeat=config.getoption("eval_repeat"),
        concurrency=_concurrency(config),
        eval_paths=_ini_paths(config, "eval_paths"),
        ignore=_ini_paths(config, "eval_ignore"),
        tags=frozenset(
            t.strip() for arg in config.getoption("eval_tags") for t in arg.split(",") if t.strip()
        ),
        defends=tuple(config.getoption("eval_defends")),
        config_root=config_root,
        # pytest's own retention policy for tmp_path decides for workspaces too.
        keep_workspaces=config.getini("tmp_path_retention_policy") == "all",
        red_first=config.getoption("eval_red_first"),
        changed=_changed(config, defends_root),
        lint=config.getoption("eval_lint"),
        results=_results_settings(config),
        regrade=_regrade(config),
        perturb=perturb,
        redact_env=_redact_env(config),
    )


_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _redact_env(config: pytest.Config) -> tuple[str, ...]:
    """``eval_redact_env``: names of environment variables, each checked."""
    names = tuple(config.getini("eval_redact_env"))
    for name in names:
        if not _VARIABLE_NAME.fullmatch(name):
            raise UsageError(
                f"ini option eval_redact_env expects names of environment variables, got {name!r}"
            )
    return names


def _perturb(config: pytest.Config) -> PerturbPlan | None:
    """``--eval-perturb`` (or ini ``eval_perturb``); ``None`` when neither names a class."""
    given = config.getoption("eval_perturb")
    where = "--eval-perturb" if given else "ini option eval_perturb"
    classes = parse_classes(given or [str(config.getini("eval_perturb"))], where)
    if not classes:
        return None
    # The stored runs are found by case, variant and repetition: a perturbed item would
    # be graded or replayed with its original's run (docs/perturbation.md).
    stored = {"eval_regrade": "--eval-regrade", **_REPLAY_OPTIONS}
    others = [flag for dest, flag in stored.items() if config.getoption(dest) is not None]
    if others:
        raise UsageError(f"{where} and {' and '.join(others)} cannot be combined")
    return PerturbPlan(
        classes,
        n=_int_ini(config, "eval_perturb_n", minimum=1),
        seed=_int_ini(config, "eval_perturb_seed", minimum=0),
        blocking=bool(config.getini("eval_perturb_blocking")),
        max_delta=_float_ini(config, "eval_perturb_max_delta", points=True),
    )


def _int_ini(config: pytest.Config, name: str, *, minimum: int) -> int:
    raw = str(config.getini(name)).strip()
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise UsageError(f"ini option {name} expects a whole number >= {minimum}, got {raw!r}")
    return value


def _concurrency(config: pytest.Config) -> int:
    given: int | None = config.getoption("eval_concurrency")
    if given is not None:
        return given
    raw = str(config.getini("eval_concurrency")).strip()
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"ini option eval_concurrency expects a whole number >= 1, got {raw!r}")
    return value


def _regrade(config: pytest.Config) -> Path | None:
    """``--eval-regrade``'s results file: the one given (relative to the invocation
    directory), else the newest of the results directory; ``None`` without the option.
    An xdist worker regrades the file its controller chose."""
    given: str | None = config.getoption("eval_regrade")
    if given is None:
        return None
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and workerinput.get(REGRADE_INPUT):
        return Path(workerinput[REGRADE_INPUT])
    others = [
        flag
        for dest, flag in _REPLAY_OPTIONS.items()
        if getattr(config.option, dest, None) not in (None, False)
    ]
    if others:
        raise UsageError(f"--eval-regrade and {' and '.join(others)} cannot be combined")
    if config.getoption("eval_workspace") or config.getini("eval_workspaces"):
        raise UsageError(
            "--eval-regrade and --eval-workspace (or eval_workspaces) cannot be combined"
        )
    if given:
        path = config.invocation_params.dir / given
        if not path.is_file():
            raise UsageError(f"--eval-regrade: no such results file: {path}")
        return path
    from pytest_evalcases.recording.recorded import newest_results_file

    try:
        return newest_results_file(config.rootpath / config.getini("eval_results_dir"))
    except ResultsFileError as exc:
        raise UsageError(f"--eval-regrade: {exc}") from None


def _changed(config: pytest.Config, defends_root: Path) -> ChangedFiles | None:
    ref = config.getoption("eval_changed")
    if ref is None:
        return None
    from pytest_evalcases.session.changed import changed_files

    # What the plugin writes never selects a case (docs/writing-cases.md).
    here = config.invocation_params.dir
    written = [config.rootpath / config.getini("eval_results_dir")]
    written += [
        here / p for p in (config.getoption("eval_save"), config.getoption("eval_html")) if p
    ]
    return changed_files(config.rootpath, ref or None, defends_root, exclude=written)


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


def _optional_rate(config: pytest.Config, name: str) -> float | None:
    """A rate from 0 to 1 in ini option ``name``; ``None`` when it is unset."""
    if not str(config.getini(name)).strip():
        return None
    return _float_ini(config, name, unit=True)


def _float_ini(
    config: pytest.Config,
    name: str,
    *,
    positive: bool = False,
    unit: bool = False,
    points: bool = False,
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
    if points and not 0 <= value <= 100:
        raise UsageError(f"ini option {name} expects a number from 0 to 100, got {raw!r}")
    return value


def _variants(config: pytest.Config, config_root: Path) -> tuple[Variant, ...]:
    specs = _variant_specs(config)
    if specs:
        return _config_variants(config, config_root, specs)
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
        return _working_tree_variant(config, config_root)
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


def _variant_agents(
    session: AgentSettings | None, given: tuple[Variant, ...]
) -> dict[str, AgentSettings | None]:
    """Each variant's agent settings: the session's, with what the variant changes
    (docs/variants.md); ``None`` for a variant that runs no agent."""
    from pytest_evalcases.agents import known_agents

    found: dict[str, AgentSettings | None] = {}
    for v in given:
        if v.graded_dir is not None:
            found[v.name] = None
            continue
        name = v.agent or (session.name if session is not None else "")
        if not name:
            if v.model or v.args is not None:
                key = "model" if v.model else "args"
                raise UsageError(
                    f"--eval-variant {v.name}: {key}: given, but no agent to run: add "
                    "agent:NAME to the variant, or --eval-agent / eval_agent"
                )
            found[v.name] = None
            continue
        assert session is not None  # built whenever a variant names a factor
        if v.agent and v.agent not in known_agents():
            raise UsageError(
                f"--eval-variant {v.name}: unknown agent {v.agent!r}; "
                f"known: {', '.join(known_agents())}"
            )
        if name == "command" and not session.command:
            raise UsageError(
                f"--eval-variant {v.name}: agent:command needs --eval-agent-command "
                "(or eval_agent_command)"
            )
        changes: dict[str, Any] = {"name": name}
        if v.model:
            changes["model"] = v.model
        elif v.agent and v.agent != session.name:
            # --eval-model names a model of the session's agent, not of this one.
            changes["model"] = None
        if v.args is not None:
            changes["args"] = v.args
        elif v.agent and v.agent != session.name:
            changes["args"] = ()
        found[v.name] = dataclasses.replace(session, **changes)
    return found


def _variant_specs(config: pytest.Config) -> list[variants.VariantSpec]:
    """``--eval-config`` and ``--eval-variant`` in the order given, else the ini
    ``eval_variants`` lines (docs/variants.md)."""
    given: list[tuple[str, str]] = config.getoption("eval_variant") or []
    if given:
        return [
            variants.parse_spec(value)
            if option == "--eval-config"
            else variants.parse_variant(value)
            for option, value in given
        ]
    if config.getoption("eval_workspace"):
        return []  # graded directories on the command line replace the ini's variants
    return [
        variants.parse_variant(line.strip(), "ini eval_variants")
        for line in config.getini("eval_variants")
        if line.strip()
    ]


def _working_tree_variant(config: pytest.Config, config_root: Path) -> tuple[Variant, ...]:
    """No variant given: every workspace gets the working tree's configuration
    files as they are now (``eval_config_files``), since workspaces live outside the
    repository and the agent would otherwise see none of it."""
    if not variants.config_files(config_root, config.getini("eval_config_files")):
        return (Variant(),)
    return _config_variants(config, config_root, [variants.VariantSpec("", variants.WORKING_TREE)])


def _config_variants(
    config: pytest.Config, config_root: Path, specs: list[variants.VariantSpec]
) -> tuple[Variant, ...]:
    """The variants' configurations, extracted once per process (controller and each
    xdist worker) into a temporary cache that goes when pytest ends."""
    if config.getoption("eval_workspace"):
        raise UsageError(f"{specs[0].option} and --eval-workspace cannot be combined")
    cache = Path(tempfile.mkdtemp(prefix="evalcases-config-"))
    config.add_cleanup(lambda: shutil.rmtree(cache, ignore_errors=True))
    return variants.build_variants(
        specs,
        config_root=config_root,
        invocation_dir=config.invocation_params.dir,
        cache_dir=cache,
        patterns=config.getini("eval_config_files"),
    )


def workspace_dirs(config: pytest.Config) -> WorkspaceDirs:
    """Where this process makes workspaces: in pytest's temporary directory, as
    ``tmp_path`` is (docs/agents.md, "Where workspaces live")."""

    # pytest gives a non-Python item no public way to its tmp_path_factory; the attribute
    # has been on the config since pytest 3. Without it (-p no:tmpdir) the workspaces go
    # in a session directory of our own, kept as pytest's retention count says.
    # Looked up at the first run: pytest's tmpdir plugin sets it in a pytest_configure
    # that runs after ours.
    def mktemp(label: str) -> Path | None:
        factory = getattr(config, "_tmp_path_factory", None)
        return None if factory is None else Path(factory.mktemp(label, numbered=True))

    try:
        keep = int(config.getini("tmp_path_retention_count"))
    except (TypeError, ValueError, KeyError):
        keep = 3
    return WorkspaceDirs(mktemp, keep=max(keep, 1))


def keep_place(config: pytest.Config, settings: Settings, started: datetime) -> KeepPlace | None:
    """Where this session keeps the workspaces of its failed and errored runs: in
    ``<stem>.workspaces`` beside its results file, or below ``--eval-keep`` /
    ``eval_keep_dir`` (docs/agents.md, "Kept workspaces"). ``None`` leaves them in
    pytest's temporary directory: ``eval_keep_max_mb = 0``, or no results file and no
    keep directory given. An xdist worker keeps where its controller says."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and KEEP_INPUT in workerinput:
        given = workerinput[KEEP_INPUT]
        return KeepPlace.from_dict(given) if given else None
    max_mb = _float_ini(config, "eval_keep_max_mb")
    if max_mb < 0:
        raise UsageError(f"ini option eval_keep_max_mb expects a number >= 0, got {max_mb:g}")
    if max_mb == 0:
        return None
    results = settings.results
    replaced = results.save_path if results.save else None
    option, ini = config.getoption("eval_keep"), config.getini("eval_keep_dir")
    if option:
        root = config.invocation_params.dir / option
    elif ini:
        root = config.rootpath / ini
    elif not results.save:
        return None
    elif replaced is not None:
        root = replaced.parent
    else:
        root = results.results_dir or settings.rootdir / defaults.RESULTS_DIR
    stem = replaced.stem if replaced is not None else resultsfile.file_stem(started)
    return KeepPlace(
        root=root,
        directory=root / f"{stem}{keep.SUFFIX}",
        max_bytes=int(max_mb * keep.MB),
        replaces=replaced is not None,
    )


def record_place(
    config: pytest.Config, settings: Settings, started: datetime
) -> RecordPlace | None:
    """Where this session records its live runs: ``<stem>.runs`` beside its results file
    (docs/replay.md, "Recording"). ``None`` with ``eval_record = false`` or without a
    results file (``--eval-no-save``). An xdist worker records where its controller says."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and RECORD_INPUT in workerinput:
        given = workerinput[RECORD_INPUT]
        return RecordPlace.from_dict(given) if given else None
    results = settings.results
    if not config.getini("eval_record") or not results.save or settings.regrade is not None:
        # A regrade runs no agent: its runs name the recordings they were graded from.
        return None
    if results.save_path is not None:
        root, stem = results.save_path.parent, results.save_path.stem
    else:
        root = results.results_dir or settings.rootdir / defaults.RESULTS_DIR
        stem = resultsfile.file_stem(started)
    return RecordPlace(root=root, directory=root / f"{stem}{RECORDING_SUFFIX}")


def replay_plan(
    config: pytest.Config, settings: Settings, record: RecordPlace | None
) -> ReplayPlan | None:
    """What ``--eval-replay`` / ``--eval-reuse`` replay from (docs/replay.md): the
    results file given, else the newest of the results directory, read here once to say
    at the start when it is not one. An xdist worker replays what its controller says."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and REPLAY_INPUT in workerinput:
        given = workerinput[REPLAY_INPUT]
        if not given:
            return None
        from pytest_evalcases.recording.source import ReplayPlan

        return ReplayPlan.from_dict(given)
    replay, reuse = config.getoption("eval_replay"), config.getoption("eval_reuse")
    # (--eval-regrade with either was refused with the settings.)
    if replay is not None and reuse is not None:
        raise UsageError("--eval-replay and --eval-reuse cannot be used together: choose one")
    if replay is None and reuse is None:
        return None
    option = "--eval-replay" if replay is not None else "--eval-reuse"
    if reuse is not None and record is None:
        raise UsageError(
            "--eval-reuse records the runs that go live, and this session records nothing "
            "(--eval-no-save or eval_record = false): use --eval-replay, or record"
        )
    from pytest_evalcases.recording.recorded import load_session, newest_results_file
    from pytest_evalcases.recording.source import ReplayPlan

    given = replay if replay is not None else reuse
    try:
        if given:
            path = config.invocation_params.dir / given
        else:
            path = newest_results_file(
                settings.results.results_dir or settings.rootdir / defaults.RESULTS_DIR
            )
        load_session(path)
    except ResultsFileError as exc:
        raise UsageError(f"{option}: {exc}") from None
    return ReplayPlan(mode="replay" if replay is not None else "reuse", results=path)


def _ini_paths(config: pytest.Config, name: str) -> tuple[Path, ...]:
    """A ``paths`` ini option. pytest 8.0 fails on one given as ``-o NAME=...`` where
    there is no configuration file (an assertion, an INTERNALERROR for the user): the
    override is read then, relative to the invocation directory, as later pytest does."""
    try:
        return tuple(Path(p) for p in config.getini(name))
    except AssertionError:
        if config.inipath is not None:
            raise
    values: list[str] = []
    for item in config.getoption("override_ini") or ():
        key, sep, value = str(item).partition("=")
        if sep and key.strip() == name:
            values = shlex.split(value)
    return tuple(config.invocation_params.dir / v for v in values)
