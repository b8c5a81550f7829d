"""The skill checks in a session (docs/skills.md): the fake ``claude`` printing a
stream-json transcript with a ``Skill`` tool call (tests/plugin/samples/
claude-stream-skill.jsonl), the fake ``gemini`` one whose JSON counts an
``activate_skill`` call without saying which skill."""

from __future__ import annotations

import html
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.helpers.agents import FAKES, SAMPLES, fake_credentials
from tests.helpers.results import only_results

#: A Claude Code stream-json transcript whose model loads a skill first: the
#: claude-stream.jsonl sample of tests/agent_samples with a ``Skill`` tool call.
SKILL_SAMPLE = Path(__file__).parent / "samples" / "claude-stream-skill.jsonl"

CASES = {
    "fires": "checks:\n  - {type: skill_used, skill: todo-triage}\n",
    "stays-quiet": "checks:\n  - {type: skill_not_used, skill: release-notes}\n",
    "wrong-skill": "checks:\n  - {type: skill_used, skill: release-notes}\n",
}


def gemini_sample() -> str:
    data = json.loads((SAMPLES / "gemini-json-success.json").read_text("utf-8"))
    data["stats"]["tools"]["byName"]["activate_skill"] = {"count": 1, "success": 1}
    return json.dumps(data) + "\n"


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    fake_credentials(monkeypatch)
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
    monkeypatch.delenv("FAKE_AGENT_SAMPLE", raising=False)
    # Copied into the rootdir, which the sandbox shows the agent.
    claude = shutil.copy(SKILL_SAMPLE, pytester.path / SKILL_SAMPLE.name)
    monkeypatch.setenv("FAKE_AGENT_SAMPLE_CLAUDE", str(claude))
    gemini = pytester.path / "gemini.json"
    gemini.write_text(gemini_sample(), "utf-8")
    monkeypatch.setenv("FAKE_AGENT_SAMPLE_GEMINI", str(gemini))
    pytester.makeini(f"[pytest]\neval_sandbox_rw = {pytester.path}\neval_sandbox_ro = {SAMPLES}\n")
    (pytester.path / "evals").mkdir()
    for case_id, checks in CASES.items():
        text = f"id: {case_id}\ndefends: .claude/skills/todo-triage\nprompt: Triage the TODOs\n"
        (pytester.path / "evals" / f"{case_id}.yaml").write_text(text + checks, "utf-8")
    return pytester


def test_claude_skill_tool_calls_pass_and_fail_the_skill_checks(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-p", "no:cacheprovider", "--eval-agent", "claude")

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*skill 'release-notes' not loaded (skills loaded: todo-triage)*"])
    by_id = {c["id"]: c for c in only_results(suite.path)["cases"]}
    assert by_id["fires"]["checks"][0]["message"] == "skill 'todo-triage' loaded 1 time(s)"
    assert by_id["stays-quiet"]["outcome"] == "passed"
    assert by_id["wrong-skill"]["outcome"] == "failed"


def test_gemini_counts_of_skill_activations_are_an_error_naming_the_agent(
    suite: pytest.Pytester,
) -> None:
    """The fake prints Gemini CLI's plain JSON, which counts `activate_skill` calls
    without naming the skill, where the driver asked for its transcript."""
    result = suite.runpytest("-p", "no:cacheprovider", "--eval-agent", "gemini")

    result.assert_outcomes(errors=3)
    records = only_results(suite.path)["cases"]
    assert {r["error_kind"] for r in records} == {"no-transcript"}
    assert all("the gemini agent gave none" in r["error"] for r in records)
    result.stdout.fnmatch_lines(["*eval gate: INCONCLUSIVE*"])


@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_the_gate_section_and_the_results_file_give_trigger_scores(
    suite: pytest.Pytester, xdist: tuple[str, ...]
) -> None:
    result = suite.runpytest(
        "-p", "no:cacheprovider", "--eval-agent", "claude", "--eval-repeat", "2", *xdist
    )

    # todo-triage fired in both runs of its positive case; release-notes fired in none
    # of its positive case's runs and none of its negative case's.
    result.stdout.fnmatch_lines(
        [
            "*skill release-notes: recall 0/2 (0%, 95% CI 0%–66%) · "
            "false triggers 0/2 (0%, 95% CI 0%–66%)",
            "*skill todo-triage: recall 2/2 (100%, 95% CI 34%–100%) · "
            "false triggers n/a (no negative case)",
            "*eval gate: BLOCKED*",
        ]
    )
    skills = {s["skill"]: s for s in only_results(suite.path)["skills"]}
    assert skills["todo-triage"]["recall"] == 1.0
    assert skills["release-notes"]["false_trigger_rate"] == 0.0
    assert skills["release-notes"]["recall"] == 0.0


@pytest.mark.slow
def test_runs_that_reached_no_verdict_give_no_scores(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-p", "no:cacheprovider", "--eval-agent", "gemini")

    assert "skill todo-triage" not in result.stdout.str()
    assert only_results(suite.path)["skills"] == []


ADVISORY_NEGATIVE = (
    "id: quiet\ndefends: .claude/skills/todo-triage\nseverity: advisory\n"
    "prompt: Rename parse_args\nchecks:\n  - {type: skill_not_used, skill: todo-triage}\n"
)


@pytest.mark.parametrize(
    ("ini", "status", "reason"),
    [
        ("", 0, "eval gate: PASS"),
        (
            "eval_skill_max_false_trigger = 0.5\n",
            1,
            "eval gate: BLOCKED (skill todo-triage: false-trigger rate 100% above "
            "eval_skill_max_false_trigger 50%)",
        ),
        ("eval_skill_min_recall = 1\n", 0, "eval gate: PASS"),
    ],
)
def test_skill_limits_block_a_run_the_cases_alone_pass(
    suite: pytest.Pytester, ini: str, status: int, reason: str
) -> None:
    # The skill fires in its advisory negative case too: an xfail that blocks nothing,
    # unless the false-trigger rate is limited.
    for path in (suite.path / "evals").glob("*.yaml"):
        if path.stem != "fires":
            path.unlink()
    (suite.path / "evals" / "quiet.yaml").write_text(ADVISORY_NEGATIVE, "utf-8")
    ini_file = suite.path / "tox.ini"
    ini_file.write_text(ini_file.read_text("utf-8") + "\neval_min_pass_rate = 0\n" + ini)

    result = suite.runpytest("-p", "no:cacheprovider", "--eval-agent", "claude")

    assert result.ret == status
    result.stdout.fnmatch_lines([reason])
    saved = only_results(suite.path)
    assert f"eval gate: {saved['verdict']}" == reason.split(" (")[0]
    if status:
        assert "skill todo-triage" in saved["verdict_reason"]


def test_a_skill_limit_outside_0_to_1_is_a_usage_error(suite: pytest.Pytester) -> None:
    ini_file = suite.path / "tox.ini"
    ini_file.write_text(ini_file.read_text("utf-8") + "\neval_skill_min_recall = 90\n")

    result = suite.runpytest("-p", "no:cacheprovider", "--eval-agent", "claude")

    result.stderr.fnmatch_lines(["*eval_skill_min_recall expects a number from 0 to 1, got '90'*"])


def test_regrade_reads_the_stored_transcript_as_its_agent_wrote_it(
    suite: pytest.Pytester,
) -> None:
    suite.runpytest("-p", "no:cacheprovider", "--eval-agent", "claude").assert_outcomes(
        passed=2, failed=1
    )
    fires = suite.path / "evals" / "fires.yaml"
    fires.write_text(fires.read_text("utf-8").replace("skill_used", "skill_not_used"), "utf-8")

    result = suite.runpytest("-p", "no:cacheprovider", "--eval-regrade", "-k", "fires")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*skill 'todo-triage' must not be loaded; loaded 1 time(s)*"])


def test_the_html_report_shows_the_trigger_scores(suite: pytest.Pytester) -> None:
    result = suite.runpytest(
        "-p", "no:cacheprovider", "--eval-agent", "claude", "--eval-html", "report.html"
    )

    result.assert_outcomes(passed=2, failed=1)
    page = (suite.path / "report.html").read_text("utf-8")
    section = page.split('<ul class="notes" id="skills">', 1)[1].split("</ul>", 1)[0]
    shown = [line for line in result.stdout.lines if line.startswith("skill ")]
    assert len(shown) == 2
    assert section == "".join(f"<li>{html.escape(line, quote=True)}</li>" for line in shown)
