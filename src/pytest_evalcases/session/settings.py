"""The settings of a session: every option and ini value that shapes collection and
runs, read once (:func:`build`) into one frozen :class:`Settings`, each default from
:mod:`pytest_evalcases.defaults` (docs/reference.md lists them). Plain Python: the plugin
gives pytest's options and ini values as a :class:`~.given.Given`, and turns
:class:`~pytest_evalcases.errors.UsageError` into ``pytest.UsageError``."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_evalcases import defaults, text
from pytest_evalcases.agents import make_agent
from pytest_evalcases.errors import UsageError
from pytest_evalcases.kinds import (
    AGENT_HOMES,
    SANDBOX_MODES,
    SANDBOX_NETWORKS,
    AgentHome,
    SandboxMode,
    SandboxNetwork,
)
from pytest_evalcases.results import skills
from pytest_evalcases.results import writer as resultsfile
from pytest_evalcases.run import variants
from pytest_evalcases.run.perturb import PerturbPlan, parse_classes
from pytest_evalcases.run.workspace import Variant
from pytest_evalcases.session import places
from pytest_evalcases.session.given import Given, choice, number, optional_rate, paths, whole
from pytest_evalcases.session.places import WorkerInput

if TYPE_CHECKING:
    from pytest_evalcases.agents.base import Agent, AgentSettings
    from pytest_evalcases.recording.format import RecordPlace
    from pytest_evalcases.recording.recorded import RecordedSession
    from pytest_evalcases.recording.source import ReplayPlan
    from pytest_evalcases.run.keep import KeepPlace
    from pytest_evalcases.session.changed import ChangedFiles


@dataclass(frozen=True)
class SandboxSettings:
    """``eval_sandbox`` and its companions, as given (docs/sandbox.md)."""

    mode: SandboxMode = defaults.SANDBOX
    network: SandboxNetwork = defaults.SANDBOX_NETWORK
    read_only: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Settings:
    """Every option and ini value that shapes collection and runs."""

    rootdir: Path
    #: The session's agent (``--eval-agent``, ``--eval-model``, ``eval_agent_args``).
    agent: AgentSettings | None = None
    #: Each variant's agent, by variant name: the session's with what ``--eval-variant``
    #: changes (docs/variants.md); a variant not named here runs the session's.
    agents: Mapping[str, AgentSettings | None] = field(default_factory=dict)
    timeout: float = defaults.TIMEOUT
    min_pass_rate: float = defaults.MIN_PASS_RATE
    #: ``eval_skill_min_recall`` / ``eval_skill_max_false_trigger`` (docs/skills.md).
    skill_limits: skills.SkillLimits = field(default_factory=skills.SkillLimits)
    retries: int = 0
    transcript: bool = False
    #: ``eval_agent_home``: a fresh agent home per run, or the operator's own.
    agent_home: AgentHome = defaults.AGENT_HOME
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    variants: tuple[Variant, ...] = (Variant(),)
    repeat: int = 1
    #: ``--eval-concurrency``: agent runs at the same time in this process.
    concurrency: int = defaults.CONCURRENCY
    eval_paths: tuple[Path, ...] = ()
    ignore: tuple[Path, ...] = ()
    tags: frozenset[str] = frozenset()
    defends: tuple[str, ...] = ()
    config_root: Path | None = None
    keep_workspaces: bool = True
    #: --eval-red-first: a case that passes is the failure (it tests nothing).
    red_first: bool = False
    #: --eval-override: the rationale that lifts a block of normal cases or the
    #: baseline gate (docs/results.md, "Overrides and quarantines").
    override: str | None = None
    #: --eval-changed: the files changed since the ref; only cases defending one run.
    changed: ChangedFiles | None = None
    #: --eval-lint: lint the collected case files in the same run.
    lint: bool = False
    results: resultsfile.ResultsSettings = field(default_factory=resultsfile.ResultsSettings)
    #: --eval-regrade: the stored runs of the results file graded again, no agent run.
    regrade: RecordedSession | None = None
    #: --eval-replay / --eval-reuse: the results file runs replay from.
    replay: ReplayPlan | None = None
    #: Where the workspaces of failed and errored runs are kept; ``None``: in pytest's
    #: temporary directory, as it keeps them.
    keep: KeepPlace | None = None
    #: Where live runs record their model traffic (``eval_record``); ``None``: nowhere.
    record: RecordPlace | None = None
    #: ``--eval-budget`` / ``eval_budget``: USD the agent runs may cost; ``None``: no limit.
    budget: float | None = None
    #: On an xdist worker: the file in which the controller keeps the budget's account
    #: (docs/budget.md); ``None`` on the controller and without a budget.
    spend_file: Path | None = None
    #: ``eval_budget_token_price``: USD per million tokens (docs/budget.md).
    token_price: float | None = None
    #: --eval-perturb: perturbed runs of every case's prompt (docs/perturbation.md).
    perturb: PerturbPlan | None = None
    #: ``eval_redact_env``: more variables whose values are secrets (docs/results.md).
    redact_env: tuple[str, ...] = ()
    #: ``eval_loop_threshold``: repeats of one tool call that make a failed run a
    #: ``loop`` (docs/results.md, "Failure modes").
    loop_threshold: int = defaults.LOOP_THRESHOLD
    #: ``eval_judge_agent`` and ``eval_judge_model`` (docs/judge.md); ``None``: the
    #: session's agent and model judge.
    judge_agent: str | None = None
    judge_model: str | None = None
    #: ``eval_judge_calibration``: the labels file, absolute; ``None``: no judge check
    #: is calibrated.
    judge_calibration: Path | None = None
    #: ``eval_judge_reask``: a replay or regrade asks the judge again.
    judge_reask: bool = False

    @property
    def results_dir(self) -> Path:
        """``eval_results_dir``, absolute (docs/results.md)."""
        return self.results.results_dir or self.rootdir / defaults.RESULTS_DIR

    def results_file(self, started: datetime) -> Path | None:
        """The results file of a session that started at ``started``
        (:func:`~.places.results_file`)."""
        return places.results_file(self.results, self.results_dir, started)

    def worker_input(self, spend_file: Path | None = None) -> WorkerInput:
        """What the controller decided that its xdist workers take as it is, with the
        file in which it keeps the budget's account (``spend_file``), if it keeps one."""
        return WorkerInput(
            keep=self.keep,
            record=self.record,
            regrade=self.regrade.path if self.regrade is not None else None,
            replay=self.replay,
            spend_file=spend_file,
        )


def build(given: Given, *, started: datetime, worker: WorkerInput | None = None) -> Settings:
    """The settings of a session that started at ``started``, from the options and ini
    values ``given``; :class:`UsageError` names a bad one. An xdist worker takes what
    its controller decided (``worker``)."""
    # Before the stored-run options, which it cannot be combined with, read their files.
    perturb = _perturb(given)
    rootdir = given.rootdir
    config_root = rootdir / given.ini("eval_config_root") if given.ini("eval_config_root") else None
    # `defends` paths, the configuration files and --eval-changed start from here.
    defends_root = config_root or rootdir
    agent_name = given.option("eval_agent") or given.ini("eval_agent") or None
    command = given.option("eval_agent_command") or given.ini("eval_agent_command")
    if command and not agent_name:
        agent_name = "command"
    agent = None
    session_variants = variants.session_variants(
        _variant_specs(given),
        _graded_dirs(given),
        config_root=defends_root,
        invocation_dir=given.invocation_dir,
        cache_dir=lambda: given.session_dir("evalcases-config-"),
        patterns=given.ini("eval_config_files"),
    )
    wanted = [v for v in session_variants if v.agent or v.model or v.args is not None]
    if agent_name or wanted:
        # The agent's side is imported only for a run that names an agent.
        from pytest_evalcases.agents.base import AgentSettings

        agent = AgentSettings(
            name=agent_name or "",
            args=tuple(given.ini("eval_agent_args")),
            command=command or None,
            model=given.option("eval_model") or given.ini("eval_model") or None,
            transcript=given.option("eval_transcript"),
            trajectory=bool(given.ini("eval_agent_trajectory")),
            # Replaced inside words after the command line is split, so unquoted
            # (docs/agents.md, "Any command").
            placeholders={"python": sys.executable, "rootdir": str(rootdir)},
        )
    agents = variants.variant_agents(agent, session_variants)
    results_dir = rootdir / given.ini("eval_results_dir")
    results = _results_settings(given, results_dir)
    decided = worker or places.decide(given, results, results_dir, started)
    return Settings(
        rootdir=rootdir,
        agent=agent if agent_name else None,
        agents=agents,
        # The option beats the ini value; a case's own `timeout:` beats both (docs/reference.md).
        timeout=given.option("eval_timeout") or number(given, "eval_timeout", positive=True),
        min_pass_rate=number(given, "eval_min_pass_rate", unit=True),
        skill_limits=skills.SkillLimits(
            optional_rate(given, "eval_skill_min_recall"),
            optional_rate(given, "eval_skill_max_false_trigger"),
        ),
        retries=given.option("eval_retry_errors"),
        transcript=given.option("eval_transcript"),
        agent_home=_agent_home(given),
        sandbox=_sandbox(given),
        variants=session_variants,
        repeat=given.option("eval_repeat"),
        concurrency=given.option("eval_concurrency") or whole(given, "eval_concurrency", minimum=1),
        eval_paths=paths(given, "eval_paths"),
        ignore=paths(given, "eval_ignore"),
        tags=frozenset(
            t.strip() for arg in given.option("eval_tags") for t in arg.split(",") if t.strip()
        ),
        defends=tuple(given.option("eval_defends")),
        config_root=config_root,
        # pytest's own retention policy for tmp_path decides for workspaces too.
        keep_workspaces=given.ini("tmp_path_retention_policy") == "all",
        red_first=given.option("eval_red_first"),
        override=_override(given),
        changed=_changed(given, defends_root, results_dir),
        lint=given.option("eval_lint"),
        results=results,
        regrade=places.regrading(decided.regrade) if decided.regrade is not None else None,
        replay=decided.replay,
        keep=decided.keep,
        record=decided.record,
        perturb=perturb,
        redact_env=_redact_env(given),
        loop_threshold=whole(given, "eval_loop_threshold", minimum=2),
        judge_agent=given.ini("eval_judge_agent") or None,
        judge_model=given.ini("eval_judge_model") or None,
        judge_reask=bool(given.ini("eval_judge_reask")),
        judge_calibration=rootdir / given.ini("eval_judge_calibration")
        if given.ini("eval_judge_calibration")
        else None,
        budget=_budget(given),
        token_price=_usd_ini(given, "eval_budget_token_price", "USD per million tokens > 0"),
        spend_file=decided.spend_file,
    )


def _variant_specs(given: Given) -> list[variants.VariantSpec]:
    """``--eval-config`` and ``--eval-variant`` in the order given, else the ini
    ``eval_variants`` lines (docs/variants.md)."""
    tagged: list[tuple[str, str]] = given.option("eval_variant") or []
    if tagged:
        specs = [
            variants.parse_spec(value)
            if option == "--eval-config"
            else variants.parse_variant(value)
            for option, value in tagged
        ]
        if given.option("eval_workspace"):
            raise UsageError(f"{specs[0].option} and --eval-workspace cannot be combined")
        return specs
    if given.option("eval_workspace"):
        return []  # graded directories on the command line replace the ini's variants
    return [
        variants.parse_variant(line.strip(), "ini eval_variants")
        for line in given.ini("eval_variants")
        if line.strip()
    ]


def _graded_dirs(given: Given) -> list[variants.GradedDir]:
    """``--eval-workspace``, else the ini ``eval_workspaces`` lines."""
    if given.option("eval_workspace"):
        return [
            variants.GradedDir(name, given.invocation_dir / path, f"--eval-workspace {path}")
            for name, path in given.option("eval_workspace")
        ]
    graded: list[variants.GradedDir] = []
    for line in given.ini("eval_workspaces"):
        name, _, rest = line.rpartition("=") if "=" in line else ("", "", line)
        origin = f"{line} (ini eval_workspaces)"
        graded.append(variants.GradedDir(name, given.rootdir / rest.strip(), origin))
    return graded


def _agent_home(given: Given) -> AgentHome:
    value = str(given.ini("eval_agent_home")).strip()
    for home in AGENT_HOMES:
        if value == home:
            return home
    raise UsageError(f"ini option eval_agent_home expects isolated or inherit, got {value!r}")


def _sandbox(given: Given) -> SandboxSettings:
    mode: SandboxMode = given.option("eval_sandbox") or choice(  # type: ignore[assignment]
        given, "eval_sandbox", SANDBOX_MODES
    )
    network: SandboxNetwork = choice(  # type: ignore[assignment]
        given, "eval_sandbox_network", SANDBOX_NETWORKS
    )
    return SandboxSettings(
        mode=mode,
        network=network,
        read_only=paths(given, "eval_sandbox_ro"),
        writable=paths(given, "eval_sandbox_rw"),
    )


_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _redact_env(given: Given) -> tuple[str, ...]:
    """``eval_redact_env``: names of environment variables, each checked."""
    names = tuple(given.ini("eval_redact_env"))
    for name in names:
        if not _VARIABLE_NAME.fullmatch(name):
            raise UsageError(
                f"ini option eval_redact_env expects names of environment variables, got {name!r}"
            )
    return names


def _perturb(given: Given) -> PerturbPlan | None:
    """``--eval-perturb`` (or ini ``eval_perturb``); ``None`` when neither names a class."""
    option = given.option("eval_perturb")
    where = "--eval-perturb" if option else "ini option eval_perturb"
    classes = parse_classes(option or [str(given.ini("eval_perturb"))], where)
    if not classes:
        return None
    # The stored runs are found by case, variant and repetition: a perturbed item would
    # be graded or replayed with its original's run (docs/perturbation.md).
    stored = {"eval_regrade": "--eval-regrade", **places.REPLAY_OPTIONS}
    others = [flag for dest, flag in stored.items() if given.option(dest) is not None]
    if others:
        raise UsageError(f"{where} and {' and '.join(others)} cannot be combined")
    return PerturbPlan(
        classes,
        n=whole(given, "eval_perturb_n", minimum=1),
        seed=whole(given, "eval_perturb_seed", minimum=0),
        blocking=bool(given.ini("eval_perturb_blocking")),
        max_delta=number(given, "eval_perturb_max_delta", points=True),
    )


def _override(given: Given) -> str | None:
    """``--eval-override``'s rationale; an override must say why and be on record."""
    rationale: str | None = given.option("eval_override")
    if rationale is None:
        return None
    if not rationale.strip():
        raise UsageError("--eval-override needs a rationale: say why the block is overridden")
    for dest, flag, why in (
        ("eval_red_first", "--eval-red-first", "an authoring run has no verdict to override"),
        ("eval_no_save", "--eval-no-save", "an override must be on record in the results file"),
    ):
        if given.option(dest):
            raise UsageError(f"--eval-override and {flag} cannot be combined: {why}")
    return rationale.strip()


def _changed(given: Given, defends_root: Path, results_dir: Path) -> ChangedFiles | None:
    ref = given.option("eval_changed")
    if ref is None:
        return None
    from pytest_evalcases.session.changed import changed_files

    # What the plugin writes never selects a case (docs/writing-cases.md).
    here = given.invocation_dir
    written = [results_dir]
    written += [here / p for p in (given.option("eval_save"), given.option("eval_html")) if p]
    return changed_files(given.rootdir, ref or None, defends_root, exclude=written)


def _results_settings(given: Given, results_dir: Path) -> resultsfile.ResultsSettings:
    here = given.invocation_dir
    save, baseline = given.option("eval_save"), given.option("eval_baseline")
    tolerance = number(given, "eval_baseline_tolerance")
    if tolerance < 0:
        raise UsageError(f"ini option eval_baseline_tolerance expects a number >= 0: {tolerance}")
    return resultsfile.ResultsSettings(
        save=not given.option("eval_no_save"),
        results_dir=results_dir,
        save_path=here / save if save else None,
        baseline=here / baseline if baseline else None,
        tolerance=tolerance,
        config_patterns=tuple(given.ini("eval_config_files")),
        shard=given.option("eval_shard"),
    )


def _budget(given: Given) -> float | None:
    """The session's budget in USD: the option, else the ini value; ``None``: none."""
    option: float | None = given.option("eval_budget")
    if option is not None:
        return option
    return _usd_ini(given, "eval_budget", "an amount of USD > 0")


def _usd_ini(given: Given, name: str, expected: str) -> float | None:
    """An amount of USD in ini setting ``name``; ``None``: unset."""
    raw = str(given.ini(name) or "").strip()
    if not raw:
        return None
    try:
        return text.usd_amount(raw)
    except argparse.ArgumentTypeError:
        raise UsageError(f"ini option {name} expects {expected}, got {raw!r}") from None


def make_agents(settings: Settings) -> dict[str, Agent | None]:
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
