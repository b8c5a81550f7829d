"""Every default of an option or ini setting, defined once (docs/reference.md lists them).

The pytest options, the ``evalcases`` commands and the plain core all read their
defaults from here, so that a command run offline agrees with the pytest run it reads.
"""

from __future__ import annotations

from pathlib import Path

from pytest_evalcases.kinds import AgentHome, SandboxMode, SandboxNetwork

#: ``eval_timeout``: seconds for one agent run.
TIMEOUT = 600.0
#: ``eval_min_pass_rate``: the overall case pass rate below which the gate blocks.
MIN_PASS_RATE = 0.9
#: ``eval_baseline_tolerance``: percentage points the pass rate may drop below a baseline.
BASELINE_TOLERANCE = 3.0
#: A run whose tokens exceed this many times the mean of every run of its results file
#: is a runaway (docs/results.md, "Metrics"); ``evalcases trend`` holds a run to its
#: case's other runs by the same factor.
RUNAWAY_FACTOR = 3.0
#: ``eval_agent_home``: every run gets a fresh, empty agent home.
AGENT_HOME: AgentHome = "isolated"
#: ``eval_results_dir``, relative to the rootdir.
RESULTS_DIR = Path("evals") / "results"
#: ``eval_keep_max_mb``: megabytes the kept workspaces of failed runs take at most.
KEEP_MAX_MB = 1000.0
#: A case's ``min_pass_rate``: with repeats, the share of runs that must pass.
CASE_MIN_PASS_RATE = 1.0
#: A command check's ``timeout``, in seconds.
COMMAND_TIMEOUT = 120.0
#: Seconds every built-in check but a command may take: its regular expressions, glob
#: walks and file reads (docs/case-format.md, "Time limits").
CHECK_TIMEOUT = 30.0
#: Bytes of one file that a check reads; a bigger file fails the check that searches it.
CHECK_READ_LIMIT = 64 * 1024 * 1024
#: Seconds a case's ``setup`` may take.
SETUP_TIMEOUT = 300.0
#: ``eval_config_files``: what counts as agent configuration, relative to the config root.
CONFIG_FILES: tuple[str, ...] = (
    "AGENTS.md",
    "CLAUDE.md",
    "GEMINI.md",
    ".claude/**",
    ".codex/**",
    ".gemini/**",
    "rules/**",
    "skills/**",
    "hooks/**",
)

#: ``eval_sandbox``: bubblewrap where it runs, else none (docs/sandbox.md).
SANDBOX: SandboxMode = "auto"
#: ``eval_sandbox_network``: setups and command checks share the network.
SANDBOX_NETWORK: SandboxNetwork = "shared"
#: ``eval_concurrency``: agent runs at the same time in one pytest process.
CONCURRENCY = 1
#: Seconds of the first pause after a rate limit whose agent named no delay; each
#: further rate limit in a row doubles it, up to :data:`RATE_LIMIT_MAX_PAUSE`.
RATE_LIMIT_PAUSE = 5.0
#: The longest pause after a rate limit, also for a longer delay the agent named.
RATE_LIMIT_MAX_PAUSE = 120.0
#: ``eval_record``: live runs of HTTP agents record their model traffic.
RECORD = True
#: Bytes of request and response bodies a run's recording holds at most
#: (docs/replay.md, "Recording"): past it, exchanges are listed without their bodies.
RECORDING_MAX_BYTES = 50 * 1000 * 1000
#: A run's recording larger than this many bytes is stored gzip-compressed.
RECORDING_GZIP_BYTES = 256 * 1000
#: Bytes of file content a run's stored workspace changes hold at most (docs/replay.md,
#: "What else is stored"): past it, the remaining files are listed without their content.
CHANGES_MAX_BYTES = 50 * 1000 * 1000
#: Files, directories and links a kept workspace holds at most (docs/agents.md, "Kept
#: workspaces"): keeping walks, copies and redacts each, some 0.1 ms apiece.
KEEP_MAX_ENTRIES = 50_000
#: Bytes of a kept workspace's files searched for secrets (docs/agents.md, "Kept
#: workspaces"), smallest first: minified JavaScript is searched at about a megabyte a
#: second. The files past it are removed, unsearched.
KEEP_REDACT_MAX_BYTES = 10 * 1000 * 1000
#: Entries of a workspace that the plugin walks after a run, to store its changes and to
#: tell whether it did nothing (docs/replay.md, "What else is stored"); past it, no
#: change is stored.
WORKSPACE_MAX_ENTRIES = 50_000
#: Changed files, links and directories a run's stored changes hold at most; past it,
#: the rest are listed as left out.
CHANGES_MAX_ENTRIES = 10_000
#: When the commits of a run's ``setup`` and agent are made, unless the environment says
#: (``GIT_AUTHOR_DATE``, ``GIT_COMMITTER_DATE``): the same on every run, so that their
#: ids are too (docs/agents.md, "How every agent runs").
COMMIT_DATE = "2001-01-01T00:00:00+0000"
#: ``eval_perturb_n``: perturbations of each prompt per class (docs/perturbation.md).
PERTURB_N = 5
#: ``eval_perturb_seed``: the seed of the perturbations, so that a rerun perturbs alike.
PERTURB_SEED = 0
#: ``eval_perturb_max_delta``: percentage points a class may drop the pass rate unflagged.
PERTURB_MAX_DELTA = 15.0
#: ``eval_loop_threshold``: a failed run whose transcript holds the same tool call with
#: the same input this many times or more is classified ``loop`` (docs/results.md,
#: "Failure modes").
LOOP_THRESHOLD = 5
#: The baseline gate's failure-mode rule (docs/results.md, "The baseline gate"): a mode
#: under this share of the baseline's failures ...
BASELINE_MODE_RARE = 0.05
#: ... and over this share of the run's failures blocks ...
BASELINE_MODE_NEW = 0.15
#: ... when at least this many failed runs of the run are of that mode.
BASELINE_MODE_MIN_FAILURES = 3
#: ``evalcases trend --alert`` (docs/results.md, "Drift alerts"): percentage points the
#: pass rate may fall below the baseline's on each of the last DRIFT_RUNS whole-suite
#: runs of a series before it fires.
DRIFT_PASS_RATE_DROP = 10.0
DRIFT_RUNS = 2
#: ... and the mean cost per case over the last DRIFT_COST_DAYS days (by the files'
#: dates) above this factor of the baseline's.
DRIFT_COST_FACTOR = 1.5
DRIFT_COST_DAYS = 7
#: A judge check blocks only with a calibration (docs/judge.md): Cohen's kappa of the
#: judge against human labels at least JUDGE_MIN_KAPPA ...
JUDGE_MIN_KAPPA = 0.6
#: ... on at least this many labels of the check.
JUDGE_MIN_LABELS = 30
#: The share of a results file's judged runs listed for a human spot check (at least one).
JUDGE_SPOT_SHARE = 0.10
#: Characters of the workspace's changes the judge is shown (the rest is cut, and says so).
JUDGE_DIFF_CHARS = 20_000
#: Seconds the judge may take to answer.
JUDGE_TIMEOUT = 300.0
