"""action/run.sh, the steps of the GitHub Action, run as the runner runs them: in bash,
inputs in the environment, a fake GITHUB_* environment and fake ``pip``, ``npm``,
``pytest``, ``evalcases`` and ``gh`` on PATH that log how they were called."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "action" / "run.sh"
MARKER = "<!-- pytest-evalcases -->"

#: One program of the fake PATH: logs its argv (and the file a ``-F body=@FILE`` names)
#: as one JSON line, then does what its name's part of the script below says.
FAKE = """\
#!{python}
import json, os, sys
from pathlib import Path

name, args = Path(sys.argv[0]).name, sys.argv[1:]
entry = {{"program": name, "args": args}}
for arg in args:
    if arg.startswith("body=@"):
        entry["body"] = Path(arg[len("body=@"):]).read_text()
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(entry) + "\\n")
if name == "pytest":
    if "--eval-save" in args and os.environ.get("FAKE_PYTEST_WRITES", "1") == "1":
        Path(args[args.index("--eval-save") + 1]).write_text("{{}}")
    sys.exit(int(os.environ.get("FAKE_PYTEST_STATUS", "0")))
if name == "evalcases":
    sys.stdout.write(os.environ.get("FAKE_COMMENT", "{marker}\\n## eval gate: BLOCKED\\n"))
if name == "gh":
    if "--method" not in args:
        sys.stdout.write(Path(os.environ["FAKE_GH_COMMENTS"]).read_text())
        sys.exit(int(os.environ.get("FAKE_GH_STATUS", "0")))
    sys.exit(int(os.environ.get("FAKE_GH_WRITE_STATUS", "0")))
"""


@dataclass
class Result:
    status: int
    stdout: str
    calls: list[dict[str, Any]]
    outputs: dict[str, str]

    def programs(self, name: str) -> list[list[str]]:
        return [c["args"] for c in self.calls if c["program"] == name]


class Runner:
    """Runs a phase of run.sh in a fake runner under ``tmp``."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.bin = tmp / "bin"
        self.bin.mkdir()
        for name in ("pytest", "pip", "npm", "evalcases", "gh", "apt-get", "sudo"):
            self.fake(name)
        self.log = tmp / "calls.jsonl"
        self.output = tmp / "github_output"
        self.workspace = tmp / "workspace"
        self.workspace.mkdir()
        self.comments = tmp / "comments.json"
        self.comments.write_text("[]")
        self.env: dict[str, str] = {
            "PATH": f"{self.bin}:{Path(sys.executable).parent}:/usr/bin:/bin",
            "HOME": str(tmp),
            "FAKE_LOG": str(self.log),
            "FAKE_GH_COMMENTS": str(self.comments),
            "GITHUB_ACTIONS": "true",
            "GITHUB_OUTPUT": str(self.output),
            "GITHUB_STEP_SUMMARY": str(tmp / "step_summary.md"),
            "GITHUB_REPOSITORY": "acme/shop",
            "RUNNER_TEMP": str(tmp),
        }
        if "PYTHONPATH" in os.environ:
            self.env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        self.event("pull_request", fork=False)

    def fake(self, name: str) -> None:
        path = self.bin / name
        path.write_text(FAKE.format(python=sys.executable, marker=MARKER))
        path.chmod(0o755)

    def event(self, name: str, *, fork: bool, number: int | None = 7) -> None:
        base = {"repo": {"full_name": "acme/shop"}}
        head = {"repo": {"full_name": "someone/shop" if fork else "acme/shop"}}
        payload: dict[str, Any] = {}
        if number is not None:
            payload["pull_request"] = {"number": number, "base": base, "head": head}
        path = self.tmp / "event.json"
        path.write_text(json.dumps(payload))
        self.env.update(GITHUB_EVENT_NAME=name, GITHUB_EVENT_PATH=str(path))

    def __call__(self, phase: str, **inputs: str) -> Result:
        self.log.write_text("")
        return self.shell(["bash", str(SCRIPT), phase], **inputs)

    def shell(self, command: list[str], **inputs: str) -> Result:
        """Runs ``command`` as a step; its calls are those since the last phase began."""
        self.output.write_text("")
        proc = subprocess.run(
            command,
            cwd=self.workspace,
            env={**self.env, **inputs},
            capture_output=True,
            text=True,
            timeout=60,
        )
        calls = [json.loads(line) for line in self.log.read_text().splitlines()]
        outputs = dict(
            line.split("=", 1) for line in self.output.read_text().splitlines() if "=" in line
        )
        return Result(proc.returncode, proc.stdout + proc.stderr, calls, outputs)

    def results_file(self) -> Path:
        path = self.workspace / "evals" / "results" / "evalcases.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
        return path


@pytest.fixture
def runner(tmp_path: Path) -> Runner:
    return Runner(tmp_path)


# --- test: pytest's arguments and exit status ------------------------------------------


def test_pytest_args_are_split_like_a_shell_but_never_expanded(runner: Runner) -> None:
    result = runner(
        "test",
        INPUT_PYTEST_ARGS="evals/ -m 'critical and not slow' $(touch pwned) * --eval-tags=\"a b\"",
    )

    assert result.status == 0, result.stdout
    assert result.programs("pytest") == [
        [
            "evals/",
            "-m",
            "critical and not slow",
            "$(touch",
            "pwned)",
            "*",
            "--eval-tags=a b",
            "--eval-save",
            "evals/results/evalcases.json",
        ]
    ]
    assert not (runner.workspace / "pwned").exists()


def test_an_unclosed_quote_is_an_error_before_pytest_runs(runner: Runner) -> None:
    result = runner("test", INPUT_PYTEST_ARGS="evals/ -m 'critical")

    assert result.status == 1
    assert "pytest-args: No closing quotation" in result.stdout
    assert result.programs("pytest") == []


@pytest.mark.parametrize("status", [0, 1, 2, 4])
def test_pytest_status_goes_to_the_outputs_and_finish_exits_with_it(
    runner: Runner, status: int
) -> None:
    result = runner("test", FAKE_PYTEST_STATUS=str(status))

    assert result.status == 0, "the step itself passes, so that comment and upload run"
    assert result.outputs == {
        "status": str(status),
        "results-file": "evals/results/evalcases.json",
    }
    assert runner("finish", EVALCASES_STATUS=result.outputs["status"]).status == status


def test_finish_fails_when_pytest_never_ran(runner: Runner) -> None:
    result = runner("finish", EVALCASES_STATUS="")

    assert result.status == 1
    assert "::error title=pytest-evalcases action::pytest did not run" in result.stdout


def test_no_results_file_is_said(runner: Runner) -> None:
    result = runner("test", FAKE_PYTEST_STATUS="4", FAKE_PYTEST_WRITES="0")

    assert result.outputs["status"] == "4"
    assert "pytest exited with status 4 and wrote no results file" in result.stdout


def test_results_dir_input(runner: Runner) -> None:
    result = runner("test", INPUT_RESULTS_DIR="out/evals")

    assert result.programs("pytest")[0][-2:] == ["--eval-save", "out/evals/evalcases.json"]
    assert (runner.workspace / "out" / "evals" / "evalcases.json").is_file()


def test_the_agent_input_runs_the_cases_with_it(runner: Runner) -> None:
    result = runner("test", INPUT_AGENT="codex", INPUT_PYTEST_ARGS="evals/ -m critical")

    assert result.programs("pytest")[0][:5] == [
        "evals/",
        "-m",
        "critical",
        "--eval-agent",
        "codex",
    ]


@pytest.mark.parametrize("named", [["--eval-agent", "claude"], ["--eval-agent=claude"]])
def test_pytest_args_that_name_an_agent_win(runner: Runner, named: list[str]) -> None:
    result = runner("test", INPUT_AGENT="codex", INPUT_PYTEST_ARGS=" ".join(["evals/", *named]))

    assert result.programs("pytest")[0][:-2] == ["evals/", *named]


def test_a_baseline_that_exists_gates_the_run(runner: Runner) -> None:
    (runner.workspace / "main.json").write_text("{}")

    result = runner("test", INPUT_BASELINE="main.json")

    assert result.programs("pytest")[0][1:3] == ["--eval-baseline", "main.json"]


def test_a_missing_baseline_is_a_warning(runner: Runner) -> None:
    result = runner("test", INPUT_BASELINE="baseline/merged.json")

    assert "--eval-baseline" not in result.programs("pytest")[0]
    assert "::warning title=pytest-evalcases action::baseline: no file baseline/merged.json" in (
        result.stdout
    )


# --- comment: created, updated, skipped -----------------------------------------------


def comment_inputs(runner: Runner, **more: str) -> dict[str, str]:
    return {"EVALCASES_RESULTS": str(runner.results_file()), "GH_TOKEN": "t", **more}


def test_a_comment_is_created_when_none_is_marked(runner: Runner) -> None:
    runner.comments.write_text(json.dumps([{"id": 1, "body": f"LGTM, but see {MARKER}"}]))

    result = runner("comment", **comment_inputs(runner))

    assert result.status == 0, result.stdout
    results = str(runner.workspace / "evals/results/evalcases.json")
    assert result.programs("evalcases") == [["report", "--format", "github-comment", results]]
    gh = [c for c in result.calls if c["program"] == "gh"]
    assert [c["args"] for c in gh] == [
        ["api", "--paginate", "repos/acme/shop/issues/7/comments?per_page=100"],
        [
            "api",
            "--method",
            "POST",
            "repos/acme/shop/issues/7/comments",
            "-F",
            f"body=@{runner.tmp}/evalcases-comment.md",
        ],
    ]
    assert gh[1]["body"] == f"{MARKER}\n## eval gate: BLOCKED\n"
    assert result.outputs == {"comment-file": f"{runner.tmp}/evalcases-comment.md"}


def test_the_marked_comment_is_updated(runner: Runner) -> None:
    # gh api --paginate prints one JSON array per page.
    page1 = [{"id": 11, "body": "first!"}, {"id": 12, "body": None}]
    page2 = [{"id": 13, "body": f"{MARKER}\nold results"}, {"id": 14, "body": f"{MARKER}\n"}]
    runner.comments.write_text(json.dumps(page1) + "\n" + json.dumps(page2) + "\n")

    result = runner("comment", **comment_inputs(runner))

    writes = [c for c in result.programs("gh") if "--method" in c]
    assert writes == [
        [
            "api",
            "--method",
            "PATCH",
            "repos/acme/shop/issues/comments/13",
            "-F",
            f"body=@{runner.tmp}/evalcases-comment.md",
        ]
    ]


def test_a_baseline_reaches_the_report(runner: Runner) -> None:
    (runner.workspace / "main.json").write_text("{}")

    result = runner("comment", **comment_inputs(runner, INPUT_BASELINE="main.json"))

    assert result.programs("evalcases")[0][-2:] == ["--baseline", "main.json"]


def test_a_pull_request_from_a_fork_gets_no_comment(runner: Runner) -> None:
    runner.event("pull_request", fork=True)

    result = runner("comment", **comment_inputs(runner))

    assert result.status == 0
    assert result.programs("gh") == []
    assert "comes from a fork" in result.stdout
    assert "the job summary has the results" in result.stdout
    assert result.outputs == {"comment-file": f"{runner.tmp}/evalcases-comment.md"}


def test_pull_request_target_from_a_fork_may_comment(runner: Runner) -> None:
    runner.event("pull_request_target", fork=True)

    result = runner("comment", **comment_inputs(runner))

    assert [c[2] for c in result.programs("gh") if "--method" in c] == ["POST"]


def test_a_run_that_is_no_pull_request_gets_no_comment(runner: Runner) -> None:
    runner.event("schedule", fork=False, number=None)

    result = runner("comment", **comment_inputs(runner))

    assert result.status == 0
    assert result.programs("gh") == []
    assert "not a pull request (schedule)" in result.stdout


def test_comment_false_writes_the_body_but_posts_nothing(runner: Runner) -> None:
    result = runner("comment", **comment_inputs(runner, INPUT_COMMENT="false"))

    assert result.programs("gh") == []
    assert (runner.tmp / "evalcases-comment.md").read_text().startswith(MARKER)


def test_a_token_that_cannot_read_is_a_warning_not_a_failure(runner: Runner) -> None:
    result = runner("comment", **comment_inputs(runner, FAKE_GH_STATUS="1"))

    assert result.status == 0
    assert "::warning title=pytest-evalcases action::could not read the comments" in result.stdout
    assert [c for c in result.programs("gh") if "--method" in c] == []


def test_a_token_that_cannot_write_is_a_warning_not_a_failure(runner: Runner) -> None:
    result = runner("comment", **comment_inputs(runner, FAKE_GH_WRITE_STATUS="1"))

    assert result.status == 0
    assert (
        "::warning title=pytest-evalcases action::could not comment on pull request #7"
        " (does the workflow grant pull-requests: write?)"
    ) in result.stdout


def test_a_body_without_the_marker_is_not_posted(runner: Runner) -> None:
    result = runner("comment", **comment_inputs(runner, FAKE_COMMENT="## results\n"))

    assert result.status == 0
    assert result.programs("gh") == []
    assert f"does not start with {MARKER}" in result.stdout


def test_no_results_file_no_comment(runner: Runner) -> None:
    result = runner("comment", EVALCASES_RESULTS="evals/results/evalcases.json")

    assert result.status == 0
    assert result.calls == []
    assert "no results file" in result.stdout


# --- install: the plugin, the pinned CLI, bubblewrap ----------------------------------


def test_install_from_pypi_with_the_pinned_cli(runner: Runner) -> None:
    result = runner("install", INPUT_AGENT="claude", INPUT_SANDBOX="false")

    assert result.status == 0, result.stdout
    assert result.programs("pip") == [["install", "pytest-evalcases"]]
    assert result.programs("npm") == [
        ["install", "-g", "--no-audit", "--no-fund", "@anthropic-ai/claude-code@2.1.197"]
    ]


def test_install_from_the_actions_checkout_and_another_version(runner: Runner) -> None:
    result = runner(
        "install",
        INPUT_SOURCE="action",
        INPUT_AGENT="gemini",
        INPUT_AGENT_VERSION="latest",
        INPUT_SANDBOX="false",
        GITHUB_ACTION_PATH=str(ROOT),
    )

    assert result.programs("pip") == [["install", str(ROOT)]]
    assert result.programs("npm")[0][-1] == "@google/gemini-cli@latest"


def test_no_agent_installs_no_cli(runner: Runner) -> None:
    result = runner("install", INPUT_SOURCE="pytest-evalcases==0.1.0")

    assert result.programs("pip") == [["install", "pytest-evalcases==0.1.0"]]
    assert result.programs("npm") == []


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"INPUT_AGENT": "cursor"}, "agent: 'cursor' is not one of claude, codex, gemini, none"),
        (
            {"INPUT_AGENT": "codex", "INPUT_AGENT_VERSION": "1.0 --registry=http://evil"},
            "agent-version: '1.0 --registry=http://evil' is not an npm version or tag",
        ),
        ({"INPUT_SOURCE": "--index-url=http://evil"}, "source: '--index-url=http://evil'"),
    ],
)
def test_bad_inputs_are_refused(runner: Runner, inputs: dict[str, str], message: str) -> None:
    result = runner("install", INPUT_SANDBOX="false", **inputs)

    assert result.status == 1
    assert message in result.stdout
    assert result.programs("npm") == []


def without_bwrap(runner: Runner) -> str:
    """A PATH of the system's programs but bubblewrap."""
    system = runner.tmp / "system"
    system.mkdir()
    for directory in ("/usr/bin", "/bin"):
        for program in Path(directory).iterdir():
            link = system / program.name
            if program.name != "bwrap" and not link.exists():
                link.symlink_to(program)
    return f"{runner.bin}:{Path(sys.executable).parent}:{system}"


def test_bubblewrap_is_installed_for_an_agent(runner: Runner) -> None:
    result = runner("install", INPUT_AGENT="codex", PATH=without_bwrap(runner))

    installs = result.programs("apt-get") + [a[1:] for a in result.programs("sudo")]
    assert installs == [["install", "-y", "-qq", "bubblewrap"]]
    assert runner("install", INPUT_AGENT="codex", INPUT_SANDBOX="false").programs("apt-get") == []


def test_a_failed_bubblewrap_install_is_a_warning(runner: Runner) -> None:
    for name in ("apt-get", "sudo"):
        (runner.bin / name).write_text("#!/bin/sh\nexit 100\n")

    result = runner("install", INPUT_AGENT="codex", PATH=without_bwrap(runner))

    assert result.status == 0
    assert "could not install bubblewrap: the agent's runs will not be sandboxed" in result.stdout


def test_the_pinned_clis_are_those_ci_tests() -> None:
    """The versions the action installs by default are those .ci/run tests the plugin with."""
    ci = (ROOT / ".ci" / "run").read_text()
    tested = re.search(r"^AGENT_CLIS=\((.*)\)$", ci, re.MULTILINE)
    assert tested is not None
    pinned = re.findall(r'^\s+\w+\) echo "(\S+) (\S+)" ;;$', SCRIPT.read_text(), re.MULTILINE)
    assert sorted(f"{p}@{v}" for p, v in pinned) == sorted(tested.group(1).split())


# --- with the real pytest and, where it exists, the real `evalcases report` ------------


def test_the_drift_demo_through_the_action(runner: Runner) -> None:
    """The real pytest on the README's demo: BLOCKED reaches the step's outputs and
    finish's exit status, and the results file is where the upload step looks."""
    for name in ("pytest", "evalcases"):
        (runner.bin / name).unlink()
    shutil.copytree(
        ROOT / "example_cases" / "drift-demo",
        runner.workspace / "drift-demo",
        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "results"),
    )

    result = runner(
        "test", INPUT_PYTEST_ARGS="drift-demo -p no:cacheprovider", INPUT_RESULTS_DIR="results"
    )

    assert result.outputs["status"] == "1", result.stdout
    saved = json.loads((runner.workspace / "results" / "evalcases.json").read_text())
    assert saved["verdict"] == "BLOCKED"
    assert runner("finish", EVALCASES_STATUS=result.outputs["status"]).status == 1
    commented = runner("comment", EVALCASES_RESULTS="results/evalcases.json", GH_TOKEN="t")
    posted = [c for c in commented.calls if c["program"] == "gh" and "--method" in c["args"]]
    assert len(posted) == 1, commented.stdout
    assert posted[0]["body"].startswith(MARKER + "\n")
    assert "BLOCKED" in posted[0]["body"]
