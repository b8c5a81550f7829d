"""Variants of any factor (docs/variants.md): ``--eval-variant NAME=KEY:VALUE,...`` with
agents and models as the variable, run by the fake ``claude``, ``codex`` and ``gemini``
CLIs of tests/fake_agents, each printing its real output format (tests/agent_samples)
with an answer of its own.

The answers are known in advance, so the paired comparison is too: the cases check for
sentences, and each agent's answer has some of them (:data:`ANSWERS`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases import cli
from tests.helpers.agents import FAKES, SAMPLES, fake_credentials, recorded_calls
from tests.helpers.results import without_metrics

#: Each case checks for sentences of the answer, one check each.
CASES = {
    "tests-run": {"ran-tests": "Ran the tests"},
    "changelog": {"changelog": "Updated the changelog", "api": "Kept the API"},
    "signed": {"signed": "Signed the commit"},
}

#: What each fake CLI answers: claude passes tests-run and changelog; codex only
#: tests-run (changelog regresses, both its checks); gemini all three (signed improves).
ANSWERS = {
    "claude": "Ran the tests. Updated the changelog. Kept the API.",
    "codex": "Ran the tests.",
    "gemini": "Ran the tests. Updated the changelog. Kept the API. Signed the commit.",
}

MATRIX = ("--eval-variant", "cc=agent:claude", "--eval-variant", "cx=agent:codex")
GEMINI = ("--eval-variant", "gm=agent:gemini")


def claude_sample(text: str, model: str = "claude-sonnet-4-5-20250929") -> str:
    """The real ``claude -p --output-format json`` answer, saying ``text`` as ``model``."""
    data = json.loads((SAMPLES / "claude-json-success.json").read_text("utf-8"))
    data["result"] = text
    data["modelUsage"] = {model: data["modelUsage"]["claude-sonnet-4-5-20250929"]}
    return json.dumps(data) + "\n"


def codex_sample(text: str) -> str:
    """The real ``codex exec --json`` stream, its last ``agent_message`` saying ``text``."""
    lines = (SAMPLES / "codex-exec.jsonl").read_text("utf-8").splitlines()
    out = []
    for line in lines:
        if '"agent_message"' in line:
            event = json.loads(line)
            event["item"]["text"] = text
            line = json.dumps(event)
        out.append(line)
    return "\n".join(out) + "\n"


def gemini_sample(text: str, model: str = "gemini-2.5-pro") -> str:
    """The real ``gemini -p --output-format json`` answer, saying ``text`` as ``model``."""
    data = json.loads((SAMPLES / "gemini-json-success.json").read_text("utf-8"))
    data["response"] = text
    data["stats"]["models"] = {model: data["stats"]["models"]["gemini-2.5-pro"]}
    return json.dumps(data) + "\n"


#: The model each CLI says it used when asked for ``{}`` (codex's stream says none).
REPORTED = {"claude": "{}-20260101", "codex": "{}", "gemini": "{}-001"}

SAMPLE_OF = {"claude": claude_sample, "codex": codex_sample, "gemini": gemini_sample}


def case_text(case_id: str, checks: dict[str, str], extra: str = "") -> str:
    lines = [f"id: {case_id}", "defends: AGENTS.md", f"prompt: Do {case_id}", extra, "checks:"]
    for check_id, sentence in checks.items():
        lines += [f"  - id: {check_id}", "    type: output_matches", f"    pattern: {sentence}"]
    return "\n".join(line for line in lines if line) + "\n"


class Suite:
    """The cases in a pytester directory, the fakes first on PATH answering
    :data:`ANSWERS`, each call recorded."""

    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pytester = pytester
        self.monkeypatch = monkeypatch
        self.root = pytester.path
        self.record = self.root / "record.jsonl"
        self.samples = self.root / "samples"
        self.samples.mkdir()
        fake_credentials(monkeypatch)
        monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
        monkeypatch.setenv("FAKE_AGENT_RECORD", str(self.record))
        for name in ("FAKE_AGENT_SAMPLE", "FAKE_AGENT_MODEL_SAMPLES"):
            monkeypatch.delenv(name, raising=False)
        for program, text in ANSWERS.items():
            self.answer(program, text)
        (self.root / "AGENTS.md").write_text("Say what you did.\n", "utf-8")
        self.ini()
        for case_id, checks in CASES.items():
            self.case(case_id, checks)

    def ini(self, extra: str = "") -> None:
        # The fakes keep their record in the rootdir and read their samples from it.
        self.pytester.makeini(f"[pytest]\neval_sandbox_rw = {self.root}\n{extra}")

    def case(self, case_id: str, checks: dict[str, str], extra: str = "") -> None:
        path = self.root / "evals" / f"{case_id}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(case_text(case_id, checks, extra), "utf-8")

    def answer(self, program: str, text: str) -> None:
        """Make the fake ``program`` answer ``text`` in its own format."""
        sample = self.samples / f"{program}.out"
        sample.write_text(SAMPLE_OF[program](text), "utf-8")
        self.monkeypatch.setenv(f"FAKE_AGENT_SAMPLE_{program.upper()}", str(sample))

    def model_answers(self, program: str, answers: dict[str, str]) -> None:
        """Make the fake ``program`` answer by the model it is asked for, saying it
        used that model's full name (:data:`REPORTED`)."""
        directory = self.samples / "by-model"
        directory.mkdir(exist_ok=True)
        for model, text in answers.items():
            reported = REPORTED[program].format(model)
            if program == "claude":
                out = claude_sample(text, reported)
            elif program == "gemini":
                out = gemini_sample(text, reported)
            else:
                out = codex_sample(text)
            (directory / model).write_text(out, "utf-8")
        self.monkeypatch.setenv("FAKE_AGENT_MODEL_SAMPLES", str(directory))

    def run(self, *args: str) -> pytest.RunResult:
        return self.pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly", *args)

    def calls(self) -> list[dict[str, Any]]:
        return recorded_calls(self.record) if self.record.exists() else []

    def results(self, name: str = "") -> dict[str, Any]:
        if name:
            path = self.root / name
        else:
            (path,) = (self.root / "evals" / "results").glob("*.json")
        doc: dict[str, Any] = json.loads(path.read_text("utf-8"))
        return doc


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Suite:
    return Suite(pytester, monkeypatch)


#: The summary of the three-agent run (tests-run, changelog and signed on each).
MATRIX_SUMMARY = [
    "cc (claude): 2/3 cases passed · Score: 3/4 (75%) · 0 errors · normal 2/3",
    "  tokens 1,278 (426 per run) · cost $0.1255 ($0.0418 per run)",
    "cx (codex): 1/3 cases passed · Score: 1/4 (25%) · 0 errors · normal 1/3",
    "  tokens 76,155 (25,385 per run) · cost not reported",
    "gm (gemini): 3/3 cases passed · Score: 4/4 (100%) · 0 errors · normal 3/3",
    "  tokens 58,302 (19,434 per run) · cost not reported",
    "cx vs cc (agent): 2 checks regressed, 0 improved; cases 1 regressed, 0 improved "
    "(McNemar exact p=1: 1 case passed only in cc, 0 only in cx)",
    "  regressed: changelog / api",
    "  regressed: changelog / changelog",
    "gm vs cc (agent): 0 checks regressed, 1 improved; cases 0 regressed, 1 improved "
    "(McNemar exact p=1: 0 cases passed only in cc, 1 only in gm)",
    "  improved: signed / signed",
    "all variants: tokens 135,735 (15,082 per run) · cost $0.1255 ($0.0418 per run; "
    "3 of 9 runs reported it)",
    "eval gate: BLOCKED (cc: 1 normal case failed: signed)",
]

#: Each variant's case outcomes in the three-agent run.
MATRIX_OUTCOMES = {
    "cc": {"changelog": "passed", "signed": "failed", "tests-run": "passed"},
    "cx": {"changelog": "failed", "signed": "failed", "tests-run": "passed"},
    "gm": {"changelog": "passed", "signed": "passed", "tests-run": "passed"},
}

#: The comparisons of the three-agent run as the results file has them.
MATRIX_COMPARISONS = [
    {
        "baseline": "cc",
        "variant": "cx",
        "differ": ["agent"],
        "regressed_cases": ["changelog"],
        "improved_cases": [],
        "regressed_checks": [["changelog", "api"], ["changelog", "changelog"]],
        "improved_checks": [],
    },
    {
        "baseline": "cc",
        "variant": "gm",
        "differ": ["agent"],
        "regressed_cases": [],
        "improved_cases": ["signed"],
        "regressed_checks": [],
        "improved_checks": [["signed", "signed"]],
    },
]


def gate_lines(result: pytest.RunResult) -> list[str]:
    """The summary's lines from the first variant's to the verdict, without the metrics
    lines (wall times vary; tests/plugin/test_metrics.py tests them)."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "eval gate" in line and "=" in line)
    end = next(i for i, line in enumerate(lines) if line.startswith("eval gate: "))
    return without_metrics(lines[start + 1 : end + 1])


def outcomes(doc: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {v["name"]: {c["id"]: c["outcome"] for c in v["cases"]} for v in doc["variants"]}


def comparisons(doc: dict[str, Any]) -> list[dict[str, Any]]:
    keys = ("baseline", "variant", "differ", "regressed_cases", "improved_cases")
    keys += ("regressed_checks", "improved_checks")
    return [{k: c[k] for k in keys} for c in doc["comparisons"]]


def test_an_agent_matrix_compares_each_agent_with_the_baseline(suite: Suite) -> None:
    result = suite.run(*MATRIX, *GEMINI)

    result.assert_outcomes(passed=6, failed=3)
    result.stdout.fnmatch_lines(
        [
            "evalcases: agents claude, codex, gemini; "
            "variants cc (claude), cx (codex), gm (gemini); sandbox *"
        ]
    )
    assert gate_lines(result) == MATRIX_SUMMARY
    # Each program ran its own variant's items, one per case.
    ran = sorted((c["program"], c["env"]["EVALCASES_VARIANT"]) for c in suite.calls())
    assert ran == [("claude", "cc")] * 3 + [("codex", "cx")] * 3 + [("gemini", "gm")] * 3
    doc = suite.results()
    assert outcomes(doc) == MATRIX_OUTCOMES
    assert comparisons(doc) == MATRIX_COMPARISONS
    factors = {v["name"]: v["factors"] for v in doc["variants"]}
    assert factors == {
        name: {"agent": agent, "model": None, "args": [], "config": "."}
        for name, agent in (("cc", "claude"), ("cx", "codex"), ("gm", "gemini"))
    }
    usage = {v["name"]: v["usage"] for v in doc["variants"]}
    assert usage["cc"]["tokens_total"] == 1278
    assert usage["cc"]["runs_with_cost"] == 3
    assert usage["cc"]["cost_total"] == pytest.approx(3 * 0.04182)
    assert usage["cx"]["tokens_total"] == 76155
    assert usage["cx"]["runs_with_cost"] == usage["gm"]["runs_with_cost"] == 0
    assert usage["gm"]["tokens_total"] == 58302
    pins = doc["pins"]
    variants = pins["variants"]
    assert sorted(variants) == ["cc", "cx", "gm"]
    for name, agent in (("cc", "claude"), ("cx", "codex"), ("gm", "gemini")):
        assert variants[name]["agent"] == agent
        assert variants[name]["agent_version"] == f"{agent} 0.0.0 (fake)"
        assert variants[name]["model"] is None
    # What the CLIs reported using: codex's stream names no model.
    assert variants["cc"]["models"] == ["claude-sonnet-4-5-20250929"]
    assert variants["cx"]["models"] == []
    assert variants["gm"]["models"] == ["gemini-2.5-pro"]
    # Each agent's own default permissions.
    assert variants["cc"]["args"] == ["--permission-mode", "acceptEdits", "--allowedTools", "Bash"]
    assert variants["cx"]["args"] == ["-s", "workspace-write"]
    assert variants["gm"]["args"] == ["--approval-mode", "yolo"]
    assert len({v["config_fingerprint"] for v in variants.values()}) == 1
    # The session's own pins are the baseline's agent's, its sandbox included.
    assert pins["agent"] == "claude"
    assert pins["agent_version"] == "claude 0.0.0 (fake)"
    assert pins["sandbox"] is not None
    # The version of each CLI was asked once.
    versions = [c for c in json_lines(suite.record) if c["argv"] == ["--version"]]
    assert sorted(c["program"] for c in versions) == ["claude", "codex", "gemini"]


def json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def model_of(argv: list[str]) -> str | None:
    for flag in ("--model", "-m"):
        if flag in argv:
            return argv[argv.index(flag) + 1]
    return None


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_a_model_matrix_gives_each_run_its_variants_model(suite: Suite, agent: str) -> None:
    # m2 forgets the changelog: the changelog case regresses from a to b.
    suite.model_answers(agent, {"m1": ANSWERS["gemini"], "m2": "Ran the tests. Signed the commit."})

    result = suite.run(
        "--eval-agent", agent, "--eval-variant", "a=model:m1", "--eval-variant", "b=model:m2"
    )

    result.assert_outcomes(passed=5, failed=1)
    calls = suite.calls()
    assert len(calls) == 6
    for call in calls:
        assert call["program"] == agent
        assert model_of(call["argv"]) == {"a": "m1", "b": "m2"}[call["env"]["EVALCASES_VARIANT"]]
    lines = gate_lines(result)
    assert lines[0].startswith(f"a ({agent}, model m1): 3/3 cases passed")
    assert (
        "b vs a (model): 2 checks regressed, 0 improved; cases 1 regressed, 0 improved "
        "(McNemar exact p=1: 1 case passed only in a, 0 only in b)"
    ) in lines
    doc = suite.results()
    assert [c["differ"] for c in doc["comparisons"]] == [["model"]]
    assert [v["factors"]["model"] for v in doc["variants"]] == ["m1", "m2"]
    pinned = doc["pins"]["variants"]
    assert {name: pinned[name]["model"] for name in pinned} == {"a": "m1", "b": "m2"}
    # The model each CLI reported using (codex's stream says none: the one asked for).
    assert pinned["a"]["models"] == [REPORTED[agent].format("m1")]
    assert pinned["b"]["models"] == [REPORTED[agent].format("m2")]
    assert pinned["a"]["agent_version"] == pinned["b"]["agent_version"] == f"{agent} 0.0.0 (fake)"
    # One agent, one version asked.
    assert [c["argv"] for c in json_lines(suite.record)].count(["--version"]) == 1


def test_a_single_model_variant_says_its_model_in_the_header_and_its_line(suite: Suite) -> None:
    result = suite.run("--eval-agent", "claude", "--eval-variant", "opus=model:m1")

    result.stdout.fnmatch_lines(["evalcases: agent claude; variants opus (claude, model m1)*"])
    assert "configurations" not in result.stdout.str()
    assert gate_lines(result)[0].startswith("opus (claude, model m1): ")


def test_a_comparison_where_agent_and_model_differ_says_it_is_confounded(suite: Suite) -> None:
    result = suite.run(
        "--eval-variant", "cc=agent:claude", "--eval-variant", "gm=agent:gemini,model:flash"
    )

    lines = gate_lines(result)
    assert lines[0].startswith("cc (claude): 2/3 cases passed")
    assert lines[2].startswith("gm (gemini, model flash): 3/3 cases passed")
    assert (
        "gm vs cc (confounded: agent and model differ): 0 checks regressed, 1 improved; "
        "cases 0 regressed, 1 improved (McNemar exact p=1: 0 cases passed only in cc, 1 only in gm)"
    ) in lines
    assert [c["differ"] for c in suite.results()["comparisons"]] == [["agent", "model"]]


def test_an_args_variant_passes_its_arguments_shell_split(suite: Suite) -> None:
    result = suite.run(
        "--eval-agent",
        "claude",
        "--eval-variant",
        "plain=model:m1",
        "--eval-variant",
        "tuned=model:m1,args:--effort 'very high'",
    )

    for call in suite.calls():
        extra = ["--effort", "very high"] if call["env"]["EVALCASES_VARIANT"] == "tuned" else []
        assert [a for a in call["argv"] if a in ("--effort", "very high")] == extra
    lines = gate_lines(result)
    assert lines[2].startswith("tuned (claude, model m1, args --effort very high): 2/3 cases")
    assert "tuned vs plain (args): 0 checks regressed, 0 improved; " in lines[4]
    doc = suite.results()
    assert doc["variants"][1]["factors"]["args"] == ["--effort", "very high"]
    # The driver's default permissions follow the variant's own arguments.
    assert doc["pins"]["variants"]["tuned"]["args"][:2] == ["--effort", "very high"]
    assert "--effort" not in doc["pins"]["variants"]["plain"]["args"]


@pytest.mark.slow
def test_a_case_for_one_agent_is_skipped_on_the_others_and_counts_in_no_comparison(
    suite: Suite,
) -> None:
    # Codex would fail it (its answer has no changelog): a regression, were it counted.
    suite.case("claude-hook", {"hook": "Updated the changelog"}, "agents: [claude]")

    result = suite.run(*MATRIX, "-rs")

    result.assert_outcomes(passed=4, failed=3, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] evals/claude-hook.yaml*: "
            "for claude only (agents:); this variant runs codex"
        ]
    )
    assert not [
        c
        for c in suite.calls()
        if "claude-hook" in c["env"]["EVALCASES_CASE_ID"] and c["program"] == "codex"
    ]
    lines = gate_lines(result)
    assert lines[0] == "cc (claude): 3/4 cases passed · Score: 4/5 (80%) · 0 errors · normal 3/4"
    assert lines[2].startswith("cx (codex): 1/3 cases passed · Score: 1/4 (25%) · 0 errors")
    assert "1 skipped" in lines[2]
    assert (
        "cx vs cc (agent): 2 checks regressed, 0 improved; cases 1 regressed, 0 improved "
        "(McNemar exact p=1: 1 case passed only in cc, 0 only in cx)"
    ) in lines
    assert "claude-hook" not in "\n".join(lines[4:])
    (cmp,) = suite.results()["comparisons"]
    assert cmp["regressed_cases"] == ["changelog"]
    assert cmp["improved_cases"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--eval-variant", "x=agent:claude,colour:red"],
            "--eval-variant 'x=agent:claude,colour:red': unknown key 'colour' "
            "(the keys are agent, model, args, config)",
        ),
        (
            ["--eval-variant", "x=agent:cursor"],
            "--eval-variant x: unknown agent 'cursor'; known: ",
        ),
        (
            ["--eval-variant", "a=agent:claude", "--eval-variant", "a=agent:codex"],
            "--eval-variant a=agent:codex: the name 'a' is given twice",
        ),
        (
            ["--eval-config", "a=.", "--eval-variant", "a=agent:codex"],
            "--eval-variant a=agent:codex: the name 'a' is given twice",
        ),
        (
            ["--eval-variant", "a=agent:codex", "--eval-config", "a=."],
            "--eval-config a=.: the name 'a' is given twice",
        ),
        (
            ["--eval-variant", "x=claude"],
            "--eval-variant 'x=claude': expected KEY:VALUE, got 'claude'",
        ),
        (
            ["--eval-variant", "agent:claude"],
            "--eval-variant expects NAME=KEY:VALUE[,KEY:VALUE...], got 'agent:claude'",
        ),
        (
            ["--eval-variant", "x=model:m1"],
            "--eval-variant x: model: given, but no agent to run: add agent:NAME to the "
            "variant, or --eval-agent / eval_agent",
        ),
        (
            ["--eval-variant", "x=agent:"],
            "--eval-variant 'x=agent:': agent: needs a value",
        ),
        (
            ["--eval-variant", "x=agent:claude,model:"],
            "--eval-variant 'x=agent:claude,model:': model: needs a value",
        ),
        (
            ["--eval-variant", "x=agent:claude,agent:codex"],
            "--eval-variant 'x=agent:claude,agent:codex': the key 'agent' is given twice",
        ),
    ],
    ids=[
        "unknown-key",
        "unknown-agent",
        "duplicate-name",
        "duplicate-across-options",
        "duplicate-across-options-reversed",
        "malformed-pair",
        "no-name",
        "model-without-agent",
        "empty-agent",
        "empty-model",
        "duplicate-key",
    ],
)
def test_bad_variants_are_usage_errors_quoting_the_option(
    suite: Suite, args: list[str], message: str
) -> None:
    result = suite.run(*args)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"ERROR: {message}" in result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    assert suite.calls() == []


@pytest.mark.slow
def test_the_ini_gives_one_variant_per_line_and_the_options_replace_it(suite: Suite) -> None:
    suite.ini("eval_variants =\n    cc=agent:claude\n    cx=agent:codex\n    gm=agent:gemini\n")

    from_ini = suite.run()
    replaced = suite.run("--eval-variant", "gm=agent:gemini", "--eval-variant", "cx=agent:codex")

    assert gate_lines(from_ini) == MATRIX_SUMMARY
    lines = gate_lines(replaced)
    assert [line.split(":")[0] for line in lines if not line.startswith(" ")][:2] == [
        "gm (gemini)",
        "cx (codex)",
    ]
    assert not [line for line in lines if line.startswith("cc")]
    assert lines[4].startswith("cx vs gm (agent): 3 checks regressed, 0 improved;")


def test_a_bad_ini_line_is_a_usage_error_naming_the_ini(suite: Suite) -> None:
    suite.ini("eval_variants =\n    cc=agent:claude\n    cx=agent:codex,colour:red\n")

    result = suite.run()

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ERROR: ini eval_variants 'cx=agent:codex,colour:red': unknown key 'colour'" in (
        result.stderr.str()
    )


@pytest.mark.parametrize(
    ("args", "first"),
    [
        (["--eval-config", "cc=.", "--eval-variant", "cx=agent:codex"], "cc"),
        (["--eval-variant", "cx=agent:codex", "--eval-config", "cc=."], "cx"),
    ],
    ids=["config-first", "variant-first"],
)
def test_eval_config_and_eval_variant_together_the_first_given_is_the_baseline(
    suite: Suite, args: list[str], first: str
) -> None:
    result = suite.run("--eval-agent", "claude", *args)

    other = {"cc": "cx", "cx": "cc"}[first]
    lines = gate_lines(result)
    assert lines[0].startswith(f"{first} (")
    assert any(line.startswith(f"{other} vs {first} (agent): ") for line in lines)
    (cmp,) = suite.results()["comparisons"]
    assert (cmp["baseline"], cmp["variant"], cmp["differ"]) == (first, other, ["agent"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [["-n", "2"], ["--eval-concurrency", "2"], ["--eval-repeat", "2"]],
    ids=["xdist", "concurrency", "repeat"],
)
def test_an_agent_matrix_composes_with_the_ways_to_run(suite: Suite, args: list[str]) -> None:
    result = suite.run(*MATRIX, *GEMINI, *args, "-v")

    doc = suite.results()
    assert outcomes(doc) == MATRIX_OUTCOMES
    assert comparisons(doc) == MATRIX_COMPARISONS
    repeats = 2 if "--eval-repeat" in args else 1
    lines = gate_lines(result)
    for expected in MATRIX_SUMMARY:
        # Repeated, each variant's totals double and its cases are listed.
        if repeats == 1 or not expected.startswith(("  tokens", "cc", "cx", "gm", "all")):
            assert expected in lines
    assert len(suite.calls()) == 9 * repeats
    if repeats == 2:
        result.stdout.fnmatch_lines(["*evals/changelog.yaml::changelog[[]cx-r1[]] FAILED*"])


@pytest.mark.slow
def test_shards_of_an_agent_matrix_merge_with_factors_usage_and_comparisons(
    suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    for k in (1, 2):
        suite.run(*MATRIX, *GEMINI, f"--eval-shard={k}/2", "--eval-save", f"s{k}.json")
    capsys.readouterr()

    status = cli.main(
        [
            "merge",
            str(suite.root / "s1.json"),
            str(suite.root / "s2.json"),
            "-o",
            str(suite.root / "merged.json"),
        ]
    )

    assert status == 1
    merged = suite.results("merged.json")
    shards = [suite.results(f"s{k}.json") for k in (1, 2)]
    # Both shards ran cases (else the merge is not tested).
    assert all(s["counts"]["total"] for s in shards)
    assert outcomes(merged) == MATRIX_OUTCOMES
    assert comparisons(merged) == MATRIX_COMPARISONS
    assert {v["name"]: v["factors"]["agent"] for v in merged["variants"]} == {
        "cc": "claude",
        "cx": "codex",
        "gm": "gemini",
    }
    usage = {v["name"]: v["usage"] for v in merged["variants"]}
    assert usage["cc"]["tokens_total"] == 1278
    assert usage["cx"]["tokens_total"] == 76155
    assert usage["gm"]["tokens_total"] == 58302
    assert sorted(merged["pins"]["variants"]) == ["cc", "cx", "gm"]


def test_a_variant_whose_cli_is_missing_stops_the_session(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_claude_on_path(suite, monkeypatch)

    result = suite.run(*MATRIX)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.stderr.lines if line.startswith("ERROR:")] == [
        "ERROR: agent 'codex': program 'codex' not found on PATH; install it with "
        "`npm install -g @openai/codex`, or put it on PATH"
    ]
    assert suite.calls() == []


def test_a_regrade_grades_each_variants_own_stored_runs(suite: Suite) -> None:
    suite.run(*MATRIX, "--eval-save", "first.json")
    # Now every answer passes `signed`: Ran the tests.
    suite.case("signed", {"signed": "Ran the tests"})

    result = suite.run(*MATRIX, "--eval-regrade", "first.json", "--eval-save", "again.json")

    lines = gate_lines(result)
    assert lines[0] == "cc (claude): 3/3 cases passed · Score: 4/4 (100%) · 0 errors · normal 3/3"
    assert lines[2] == "cx (codex): 2/3 cases passed · Score: 2/4 (50%) · 0 errors · normal 2/3"
    assert lines[4].startswith("cx vs cc (agent): 2 checks regressed, 0 improved;")
    # No agent ran again: the CLIs were called for the first run only.
    assert len(suite.calls()) == 6
    doc = suite.results("again.json")
    assert [c["differ"] for c in doc["comparisons"]] == [["agent"]]
    # A regrade spent nothing; each run keeps what its variant's stored run reported.
    assert {v["name"]: v["usage"]["tokens_total"] for v in doc["variants"]} == {"cc": 0, "cx": 0}
    recorded: dict[str, int] = {}
    for case in doc["cases"]:
        assert case["tokens_in"] is None
        spent = case["recorded_tokens_in"] + case["recorded_tokens_out"]
        recorded[case["variant"]] = recorded.get(case["variant"], 0) + spent
    assert recorded == {"cc": 1278, "cx": 76155}


def only_claude_on_path(suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH: the fake ``claude`` and this Python, no ``codex`` nor ``gemini``."""
    only_claude = suite.root / "bin"
    only_claude.mkdir()
    (only_claude / "claude").symlink_to(FAKES / "claude")
    monkeypatch.setenv("PATH", f"{only_claude}{os.pathsep}{os.path.dirname(sys.executable)}")


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_variant_whose_every_case_is_for_other_agents_needs_no_preflight(
    suite: Suite, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    for case_id, checks in CASES.items():
        suite.case(case_id, checks, "agents: [claude]")
    only_claude_on_path(suite, monkeypatch)

    result = suite.run(*MATRIX, "-rs", *workers)

    result.assert_outcomes(passed=2, failed=1, skipped=3)
    assert {c["program"] for c in suite.calls()} == {"claude"}
    result.stdout.fnmatch_lines(["*for claude only (agents:); this variant runs codex"])
