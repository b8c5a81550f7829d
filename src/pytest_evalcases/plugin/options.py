"""The options and ini settings of the plugin, declared (docs/reference.md lists them);
the ``type=`` callables that check an option's value as pytest parses it are
:mod:`pytest_evalcases.text`'s. What they
mean is read once into the session's settings (:mod:`pytest_evalcases.session.settings`);
every default is from :mod:`pytest_evalcases.defaults`."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_evalcases import defaults, text
from pytest_evalcases.kinds import SANDBOX_MODES
from pytest_evalcases.session import shard
from pytest_evalcases.text import non_negative_int, positive_int, usd_amount

#: The type of numeric ini options: from pytest 9.2 a number or a string, so that native
#: TOML (`eval_timeout = 300`) and INI files both work (the plugin checks the value,
#: naming the option); before, a string (quote numbers in pytest.toml).
_NUMBER: Any = (float | str) if pytest.version_tuple >= (9, 2) else "string"


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
        type=text.positive_seconds,
        default=None,
        help="Seconds for one agent run; a case's own timeout: wins (ini: eval_timeout)",
    )
    group.addoption(
        "--eval-workspace",
        dest="eval_workspace",
        metavar="[NAME=]DIR",
        action="append",
        default=[],
        type=text.name_value("--eval-workspace"),
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
        type=text.tagged("--eval-config"),
        help="A configuration variant: a directory, a file, '.' (the working tree's "
        "config files) or git:REF[:PATH]; repeatable, the first is the baseline",
    )
    group.addoption(
        "--eval-variant",
        dest="eval_variant",
        metavar="NAME=KEY:VALUE,...",
        action="append",
        default=[],
        type=text.tagged("--eval-variant"),
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
        "typo, case, whitespace, filler, format, paraphrase (ini: eval_perturb; "
        "docs/perturbation.md)",
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
        type=usd_amount,
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
        "--eval-override",
        dest="eval_override",
        metavar="RATIONALE",
        default=None,
        help="Turn a verdict BLOCKED only by normal cases or the baseline gate into PASS, "
        "recorded with RATIONALE in the results file; never a failing critical case",
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
    parser.addini(
        "eval_agent_trajectory",
        "The command agent writes its trajectory in ATIF to $EVALCASES_TRAJECTORY "
        "(docs/trajectories.md)",
        type="bool",
        default=False,
    )
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
        "eval_loop_threshold",
        "Repeats of one tool call with one input that make a failed run a loop",
        default=str(defaults.LOOP_THRESHOLD),
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
