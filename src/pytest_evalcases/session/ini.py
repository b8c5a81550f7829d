"""The plugin's ini settings, declared as data (docs/reference.md lists them): the
plugin hands each to pytest's ``parser.addini``; what they mean is read once into the
session's settings (:mod:`pytest_evalcases.session.settings`); every default is from
:mod:`pytest_evalcases.defaults`. Numeric defaults are the strings docs/reference.md shows
(``600``, ``0.90``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pytest_evalcases import defaults

#: pytest's ini types, and ``number``: a number or a string, as the running pytest takes
#: it (from pytest 9.2 native TOML numbers too; the settings check the value).
IniType = Literal["string", "args", "linelist", "paths", "bool", "number"]


@dataclass(frozen=True)
class Ini:
    """One ini setting: its name, help text, type and default (``None``: pytest's own
    for the type: an empty string or list)."""

    name: str
    help: str
    type: IniType | None = None
    default: object = None


#: Every ini setting of the plugin, in the order ``pytest --help`` shows them.
SETTINGS: tuple[Ini, ...] = (
    Ini(
        "eval_agent",
        "Agent that runs the cases (claude, codex, gemini, command)",
    ),
    Ini(
        "eval_agent_command",
        "Command line of the command agent",
    ),
    Ini(
        "eval_agent_trajectory",
        "The command agent writes its trajectory in ATIF to $EVALCASES_TRAJECTORY "
        "(docs/trajectories.md)",
        type="bool",
        default=False,
    ),
    Ini(
        "eval_agent_args",
        "Extra arguments for the agent CLI",
        type="args",
    ),
    Ini(
        "eval_model",
        "Model passed to the agent",
    ),
    Ini(
        "eval_agent_home",
        "isolated: a fresh agent home per run (credentials only); inherit: the operator's own",
        default=defaults.AGENT_HOME,
    ),
    Ini(
        "eval_sandbox",
        "auto: bubblewrap where it runs, else none; bwrap: always (an error where it cannot "
        "run); none: runs are not contained",
        default=defaults.SANDBOX,
    ),
    Ini(
        "eval_sandbox_network",
        "shared: setups and command checks reach the network; none: they do not "
        "(the agent always does)",
        default=defaults.SANDBOX_NETWORK,
    ),
    Ini(
        "eval_sandbox_ro",
        "Paths also visible, read-only, inside the sandbox",
        type="paths",
    ),
    Ini(
        "eval_sandbox_rw",
        "Paths also writable inside the sandbox",
        type="paths",
    ),
    Ini(
        "eval_timeout",
        "Default seconds for one agent run",
        type="number",
        default=f"{defaults.TIMEOUT:g}",
    ),
    Ini(
        "eval_concurrency",
        "Agent runs at the same time in each pytest process",
        type="number",
        default=str(defaults.CONCURRENCY),
    ),
    Ini(
        "eval_budget",
        "USD the session's agent runs may cost, as they report it (unset: no limit)",
        type="number",
        default="",
    ),
    Ini(
        "eval_budget_token_price",
        "USD per million tokens at which the budget counts runs that report tokens but no "
        "cost (unset: not counted)",
        type="number",
        default="",
    ),
    Ini(
        "eval_min_pass_rate",
        "Overall case pass rate below which the gate blocks",
        type="number",
        default=f"{defaults.MIN_PASS_RATE:.2f}",
    ),
    Ini(
        "eval_loop_threshold",
        "Repeats of one tool call with one input that make a failed run a loop",
        type="number",
        default=str(defaults.LOOP_THRESHOLD),
    ),
    Ini(
        "eval_judge_agent",
        "Agent that answers the judge checks (default: the session's agent)",
    ),
    Ini(
        "eval_judge_model",
        "Model of the judge (default: the judge agent's model)",
    ),
    Ini(
        "eval_judge_reask",
        "Replayed and regraded runs ask the judge again instead of keeping its stored answer",
        type="bool",
        default=False,
    ),
    Ini(
        "eval_judge_calibration",
        "Labels file of the judge checks' calibration, relative to the rootdir",
    ),
    Ini(
        "eval_skill_min_recall",
        "A skill's recall below which the gate blocks (unset: none)",
        default="",
    ),
    Ini(
        "eval_skill_max_false_trigger",
        "A skill's false-trigger rate above which the gate blocks (unset: none)",
        default="",
    ),
    Ini(
        "eval_paths",
        "Directories whose case files are collected, besides evals/",
        type="paths",
    ),
    Ini(
        "eval_ignore",
        "Paths never collected as case files (tests there still are)",
        type="paths",
    ),
    Ini(
        "eval_config_root",
        "Directory that `defends` paths are relative to",
    ),
    Ini(
        "eval_results_dir",
        "Directory of the results files",
        default=str(defaults.RESULTS_DIR),
    ),
    Ini(
        "eval_keep_dir",
        "Directory (relative to the rootdir) of the kept workspaces of failed and errored "
        "runs; default: the results file's",
    ),
    Ini(
        "eval_keep_max_mb",
        "Megabytes the kept workspaces take at most, the oldest removed first; 0 keeps none",
        type="number",
        default=f"{defaults.KEEP_MAX_MB:g}",
    ),
    Ini(
        "eval_redact_env",
        "Environment variables whose values are redacted as secrets, besides those named "
        "*KEY*, *TOKEN*, *SECRET*, *PASSWORD*, *CREDENTIAL*",
        type="args",
    ),
    Ini(
        "eval_record",
        "Record the model traffic of live runs beside the results file (docs/replay.md)",
        type="bool",
        default=defaults.RECORD,
    ),
    Ini(
        "eval_baseline_tolerance",
        "Percentage points the pass rate may drop below --eval-baseline's",
        type="number",
        default=f"{defaults.BASELINE_TOLERANCE:g}",
    ),
    Ini(
        "eval_variants",
        "NAME=KEY:VALUE,... lines, one variant each, as --eval-variant",
        type="linelist",
    ),
    Ini(
        "eval_workspaces",
        "NAME=DIR lines (relative to the rootdir) to grade",
        type="linelist",
    ),
    Ini(
        "eval_perturb",
        "Perturbation classes, comma-separated, as --eval-perturb",
    ),
    Ini(
        "eval_perturb_n",
        "Perturbations of each prompt per class",
        type="number",
        default=str(defaults.PERTURB_N),
    ),
    Ini(
        "eval_perturb_seed",
        "Seed of the perturbations (recorded in the pins)",
        type="number",
        default=str(defaults.PERTURB_SEED),
    ),
    Ini(
        "eval_perturb_blocking",
        "Perturbed runs count in the gate as runs of their case (default: advisory)",
        type="bool",
        default=False,
    ),
    Ini(
        "eval_perturb_max_delta",
        "Percentage points a perturbation class may drop the pass rate before it is flagged",
        type="number",
        default=f"{defaults.PERTURB_MAX_DELTA:g}",
    ),
    Ini(
        "eval_config_files",
        "Glob patterns of the agent configuration files, relative to the config root",
        type="args",
        default=list(defaults.CONFIG_FILES),
    ),
)
