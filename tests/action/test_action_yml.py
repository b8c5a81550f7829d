"""action.yml: the inputs docs/ci.md names, steps that hand every input to action/run.sh in
the environment (never in the text a shell parses), and workflow examples in the docs that
use only inputs the action has."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.action.test_run_script import Runner
from tests.docs.test_docs_examples import BLOCKS, Block, parse

ROOT = Path(__file__).resolve().parents[2]
ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
SCRIPT = (ROOT / "action" / "run.sh").read_text(encoding="utf-8")
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def steps() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ACTION["runs"]["steps"]
    return found


def test_the_inputs() -> None:
    inputs = ACTION["inputs"]
    assert list(inputs) == [
        "pytest-args",
        "agent",
        "agent-version",
        "baseline",
        "python-version",
        "comment",
        "results-dir",
        "artifact-name",
        "sandbox",
        "source",
        "token",
    ]
    assert all(spec.get("description") for spec in inputs.values())
    assert not any(spec.get("required") for spec in inputs.values())
    defaults = {name: spec["default"] for name, spec in inputs.items()}
    assert defaults["pytest-args"] == "evals/"
    assert defaults["agent"] == "none"
    assert defaults["agent-version"] == "pinned"
    assert defaults["comment"] == "true"
    assert defaults["results-dir"] == "evals/results"
    assert defaults["source"] == "pypi"


def test_the_steps_in_order() -> None:
    assert ACTION["runs"]["using"] == "composite"
    names = [step.get("uses") or step["run"] for step in steps()]
    assert names == [
        "actions/setup-python@v5",
        '"$GITHUB_ACTION_PATH/action/run.sh" install',
        '"$GITHUB_ACTION_PATH/action/run.sh" test',
        '"$GITHUB_ACTION_PATH/action/run.sh" comment',
        "actions/upload-artifact@v4",
        '"$GITHUB_ACTION_PATH/action/run.sh" finish',
    ]
    # The upload and pytest's status come whatever happened before them.
    assert [step.get("if") for step in steps()[-2:]] == ["always()", "always()"]
    assert steps()[4]["with"]["path"] == "${{ inputs.results-dir }}"


def test_no_expression_in_the_text_a_shell_parses() -> None:
    for step in steps():
        if "run" in step:
            assert step["shell"] == "bash"
            assert "${{" not in step["run"], step["run"]


def test_every_expression_names_an_input_or_an_earlier_step() -> None:
    ids = {step["id"] for step in steps() if "id" in step}
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    for expression in EXPRESSION.findall(text):
        if expression.startswith("inputs."):
            assert expression.removeprefix("inputs.") in ACTION["inputs"], expression
        elif expression.startswith("steps."):
            assert expression.split(".")[1] in ids, expression
        else:
            assert expression == "github.token", expression


def test_the_script_reads_what_the_steps_give_it() -> None:
    """Each INPUT_X variable the script reads is given by some step as inputs.x, and
    every step's variables are read by the script."""
    given: dict[str, str] = {}
    for step in steps():
        for name, value in (step.get("env") or {}).items():
            given[name] = value
            assert name in SCRIPT, f"{name} is given but never read"
    for name in set(re.findall(r"\bINPUT_[A-Z_]+\b", SCRIPT)):
        expected = "${{ inputs." + name.removeprefix("INPUT_").lower().replace("_", "-") + " }}"
        assert given.get(name) == expected, name


def test_the_outputs_come_from_the_steps() -> None:
    assert ACTION["outputs"]["status"]["value"] == "${{ steps.evals.outputs.status }}"
    for name in ("status", "results-file", "comment-file"):
        assert f"output {name} " in SCRIPT, f"run.sh never writes the output {name}"


def action_uses(block: Block) -> list[dict[str, Any]]:
    """The workflow steps of a docs block that use this action."""
    data = parse(block)
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
        return []
    return [
        step
        for job in data["jobs"].values()
        for step in job.get("steps", [])
        if str(step.get("uses", "")).startswith("pytest-evalcases/pytest-evalcases@")
    ]


USES = [(block, step) for block in BLOCKS for step in action_uses(block)]


def test_docs_ci_uses_the_action() -> None:
    assert any(block.file.name == "ci.md" for block, _ in USES)


@pytest.mark.parametrize(("block", "step"), USES, ids=[b.label for b, _ in USES])
def test_documented_uses_of_the_action_give_only_its_inputs(
    block: Block, step: dict[str, Any]
) -> None:
    given = set(step.get("with") or {})
    assert given <= set(ACTION["inputs"]), given - set(ACTION["inputs"])
    agent = (step.get("with") or {}).get("agent", "none")
    assert agent in ("none", "claude", "codex", "gemini")


# --- the steps run in order, as the runner runs a composite action ----------------------


def run_action(runner: Runner, **given: str) -> Job:
    """Runs action.yml's steps in order with ``given`` inputs: expressions evaluated, a
    step that failed skipping those without ``if: always()``, ``run:`` under the
    runner's bash options. The steps that use other actions are only noted. Returns the
    job's exit status, the steps that ran (the other actions with their inputs), each
    step's outputs by id and the fake programs' calls."""
    inputs = {name: spec["default"] for name, spec in ACTION["inputs"].items()} | given
    outputs: dict[str, dict[str, str]] = {}

    def evaluate(text: str) -> str:
        def value(match: re.Match[str]) -> str:
            words = match.group(1).split(".")
            if words[0] == "inputs":
                return inputs[words[1]]
            if words[0] == "steps":
                return outputs.get(words[1], {}).get(words[3], "")
            assert words == ["github", "token"]
            return "the-token"

        return EXPRESSION.sub(value, text)

    failed, ran, status = False, [], 0
    result = None
    for step in steps():
        if failed and step.get("if") != "always()":
            continue
        label = step.get("uses") or step["run"].split()[-1]
        ran.append(label)
        if "uses" in step:
            for name, text in (step.get("with") or {}).items():
                ran.append(f"  {name}={evaluate(str(text))}")
            continue
        env = {name: evaluate(str(text)) for name, text in (step.get("env") or {}).items()}
        result = runner.shell(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            GITHUB_ACTION_PATH=str(ROOT),
            **env,
        )
        outputs[step.get("id", label)] = result.outputs
        if result.status != 0:
            failed, status = True, result.status
    assert result is not None
    return Job(status, ran, outputs, result.calls)


@dataclass
class Job:
    status: int
    ran: list[str]
    outputs: dict[str, dict[str, str]]
    calls: list[dict[str, Any]]

    def programs(self, name: str) -> list[list[str]]:
        return [c["args"] for c in self.calls if c["program"] == name]


@pytest.fixture
def runner(tmp_path: Path) -> Runner:
    runner = Runner(tmp_path)
    runner.log.write_text("")
    return runner


def test_an_inconclusive_pull_request(runner: Runner) -> None:
    """pytest's status 2 reaches the last step through the outputs, after the comment
    was posted and the results were uploaded."""
    runner.env["FAKE_PYTEST_STATUS"] = "2"

    job = run_action(
        runner, **{"pytest-args": "evals/ -m critical", "agent": "claude", "sandbox": "false"}
    )

    assert job.status == 2
    assert job.ran == [
        "actions/setup-python@v5",
        "  python-version=3.12",
        "install",
        "test",
        "comment",
        "actions/upload-artifact@v4",
        "  name=eval-results",
        "  path=evals/results",
        "  if-no-files-found=warn",
        "finish",
    ]
    assert job.outputs["evals"] == {"status": "2", "results-file": "evals/results/evalcases.json"}
    assert (runner.workspace / "evals" / "results" / "evalcases.json").is_file()
    assert job.programs("pytest") == [
        [
            "evals/",
            "-m",
            "critical",
            "--eval-agent",
            "claude",
            "--eval-save",
            "evals/results/evalcases.json",
        ]
    ]
    assert [c[:3] for c in job.programs("gh") if "--method" in c] == [["api", "--method", "POST"]]


def test_a_failed_install_skips_to_the_upload(runner: Runner) -> None:
    (runner.bin / "pip").write_text("#!/bin/sh\nexit 1\n")

    job = run_action(runner)

    assert job.status == 1
    assert [r for r in job.ran if not r.startswith(" ")] == [
        "actions/setup-python@v5",
        "install",
        "actions/upload-artifact@v4",
        "finish",
    ]
    assert job.programs("pytest") == []
