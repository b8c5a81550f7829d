"""The lint's judgement of one case: which passages of a rule are about what the case
tests (no-negative-check), a case without a prompt (missing-prompt)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_evalcases.authoring import lint

AGENTS = """\
# Project rules

## Style

Use type hints in every function signature.

## Git

- Never force-push to main.
- Write commit subjects in the imperative mood.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "AGENTS.md").write_text(AGENTS)
    (tmp_path / "evals").mkdir()
    return tmp_path


def case_file(project: Path, name: str, text: str) -> Path:
    path = project / "evals" / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def findings(project: Path, *paths: Path) -> list[str]:
    """``code: reason`` of each finding about a case (not the suite's size)."""
    found = lint.lint_files(lint.discover(list(paths)), None, suite_size=False)
    return [f"{f.path.name}:{f.line}: {f.code}: {f.reason}" for f in found]


def test_a_prohibition_away_from_what_the_case_tests_is_not_its_concern(project: Path) -> None:
    # "Never" is in AGENTS.md, but in the Git section; the case tests type hints.
    hints = case_file(
        project,
        "hints",
        """\
        id: hints
        defends: AGENTS.md
        prompt: Add a function that adds two numbers, with type hints.
        checks:
          - type: file_matches
            path: calc.py
            pattern: "def add\\\\(a: int"
        """,
    )

    assert findings(project, hints) == []


def test_a_prohibition_about_what_the_case_tests_wants_a_negative_check(project: Path) -> None:
    push = case_file(
        project,
        "push",
        """\
        id: push
        defends: AGENTS.md
        prompt: Push my change to main.
        checks:
          - type: command_succeeds
            command: git log -1 origin/main
        """,
    )

    assert findings(project, push) == [
        "push.yaml:4: no-negative-check: AGENTS.md says 'Never' where it speaks of what "
        "the case tests ('push': 'Never force-push to main.') but the case has only positive "
        "checks; add one that fails when the forbidden thing happens (command_fails, "
        "file_absent, file_not_contains, file_not_matches, file_unchanged, "
        "hook_not_fired, mcp_not_called, output_not_matches, request_not_matches, "
        "skill_not_used, "
        "tool_blocked, tool_not_blocked, tool_not_called)"
    ]


def test_a_refusal_check_tests_a_prohibition_and_is_not_passed_by_an_idle_agent(
    project: Path,
) -> None:
    push = case_file(
        project,
        "push",
        """\
        id: push
        defends: AGENTS.md
        prompt: Push my change to main.
        checks:
          - type: tool_blocked
            tool: shell
            input: git push --force
        """,
    )

    assert findings(project, push) == []


def test_a_heading_says_what_the_passages_under_it_are_about(project: Path) -> None:
    (project / "AGENTS.md").write_text(
        "## Commit messages\n\n- Never add a Co-authored-by trailer.\n\n## Tests\n\nRun them.\n"
    )
    commit = case_file(
        project,
        "commit",
        """\
        id: commit
        defends: AGENTS.md
        prompt: Commit the staged change.
        checks:
          - type: command_succeeds
            command: git log -1
        """,
    )

    (found,) = findings(project, commit)
    # The passage shares no word with the case; its heading does.
    assert found.startswith(
        "commit.yaml:4: no-negative-check: AGENTS.md says 'Never' where it speaks of what "
        "the case tests ('commit': 'Never add a Co-authored-by trailer.')"
    )


@pytest.mark.parametrize(
    ("prompt", "line", "says"),
    [("", 1, "no `prompt:`"), ('prompt: "  "\n', 3, "an empty `prompt:`")],
)
def test_a_case_without_a_prompt_is_a_warning(
    project: Path, prompt: str, line: int, says: str
) -> None:
    path = case_file(
        project,
        "graded",
        "id: graded\ndefends: AGENTS.md\n"
        + prompt
        + "checks:\n  - {type: output_matches, pattern: done}\n",
    )

    assert findings(project, path) == [
        f"graded.yaml:{line}: missing-prompt: case 'graded' has {says}: an agent cannot run "
        "it, and only --eval-workspace can grade it"
    ]


@pytest.mark.parametrize(("task_md", "says"), [(None, "no task.md"), ("\n", "an empty task.md")])
def test_a_task_directory_without_a_prompt_is_a_warning(
    project: Path, task_md: str | None, says: str
) -> None:
    task = project / "tasks" / "add-service"
    task.mkdir(parents=True)
    (task / "checks.yaml").write_text(
        "defends: AGENTS.md\nchecks:\n  - {id: exists, type: file_exists, path: svc.py}\n"
    )
    if task_md is not None:
        (task / "task.md").write_text(task_md)

    found = findings(project, task / "checks.yaml")

    assert len(found) == 1
    assert found[0].startswith(f"checks.yaml:1: missing-prompt: case 'add-service' has {says}")


def test_a_misspelt_agent_in_agents_is_a_warning(project: Path) -> None:
    path = case_file(
        project,
        "hook",
        "id: hook\ndefends: AGENTS.md\nprompt: go\nagents: [claude, claud]\n"
        "checks:\n  - {type: output_matches, pattern: done}\n",
    )

    said = findings(project, path)

    assert len(said) == 1
    assert said[0].startswith(
        "hook.yaml:4: unknown-agent: agents: 'claud' is no agent this project knows (claude, "
    )
    assert said[0].endswith("so a misspelt name skips it everywhere")


@pytest.mark.parametrize(
    "check",
    [
        "{type: request_not_matches, pattern: force-push}",
        "{type: hook_not_fired, event: PreToolUse}",
        "{type: tool_not_blocked, tool: shell, input: git push}",
        "{type: mcp_not_called, server: github, tool: merge}",
    ],
)
def test_request_hook_and_refusal_negatives_count_as_negative_checks(
    project: Path, check: str
) -> None:
    push = case_file(
        project,
        "push",
        f"id: push\ndefends: AGENTS.md\nprompt: Push my change to main.\nbare: false\n"
        f"checks:\n  - {check}\n",
    )

    said = findings(project, push)

    # A negative check answers the prohibition; alone, it passes an idle agent.
    assert [s.split(": ")[1] for s in said] == ["only-negative-checks"]


HOOKED = """\
id: push
defends: AGENTS.md
prompt: Tidy the readme.
{fields}checks:
  - {{type: output_matches, pattern: tidied}}
  - {check}
"""


@pytest.mark.parametrize(
    "check",
    [
        "{type: hook_fired, event: PreToolUse}",
        "{type: hook_not_fired, event: Stop}",
        "{type: tool_blocked, tool: shell, input: git push, by: hook}",
    ],
)
def test_a_hook_check_on_a_bare_claude_case_is_a_warning(project: Path, check: str) -> None:
    path = case_file(project, "push", HOOKED.format(fields="", check=check))

    said = findings(project, path)

    assert len(said) == 1
    assert said[0].startswith("push.yaml:6: bare-hook-check: checks[1] (")
    assert "Claude Code runs none in a bare run" in said[0]
    assert said[0].endswith("write `bare: false`")


@pytest.mark.parametrize(
    ("fields", "check"),
    [
        ("bare: false\n", "{type: hook_fired, event: PreToolUse}"),
        ("agents: [gemini]\n", "{type: hook_fired, event: BeforeTool}"),
        ("", "{type: tool_blocked, tool: shell, input: git push, by: permission}"),
    ],
    ids=["not-bare", "not-claude", "not-a-hook"],
)
def test_a_hook_check_where_hooks_run_is_no_concern(project: Path, fields: str, check: str) -> None:
    path = case_file(project, "push", HOOKED.format(fields=fields, check=check))

    assert findings(project, path) == []


def test_scripted_cases_sharing_a_prompt_and_a_prohibition_are_no_concern(
    project: Path,
) -> None:
    # The script, not the prompt, is what runs; and its turns are written, so no
    # negative check could catch the model breaking the rule.
    scripted = """\
    id: {id}
    defends: AGENTS.md
    prompt: Push my change to main.
    bare: false
    script:
      - shell: {command}
      - text: done
    checks:
      - {{type: request_matches, pattern: Never force-push}}
    """
    paths = [
        case_file(project, name, scripted.format(id=name, command=command))
        for name, command in (("forced", "git push --force"), ("plain", "git push"))
    ]

    assert findings(project, *paths) == []


JUDGED = """\
id: judged
defends: AGENTS.md
severity: {severity}
prompt: Explain the change.
checks:
{checks}  - id: explains
    type: judge
    question: Does the answer explain the change?
"""


def test_a_case_with_judge_checks_only_has_no_deterministic_check(project: Path) -> None:
    path = case_file(project, "judged", JUDGED.format(severity="normal", checks=""))

    assert findings(project, path) == [
        "judged.yaml:5: no-deterministic-check: no deterministic check: every check is a "
        "judge check, which never blocks until calibrated; add a check a rule can decide "
        "(a file, a pattern, a command)"
    ]


def test_a_judge_check_of_a_critical_case_without_a_calibration_is_a_warning(
    project: Path,
) -> None:
    checks = "  - {type: output_matches, pattern: changed}\n"
    path = case_file(project, "judged", JUDGED.format(severity="critical", checks=checks))
    warning = (
        "judged.yaml:7: uncalibrated-judge: judge check 'explains' of a critical case has no "
        "calibration (eval_judge_calibration, evalcases calibrate): its failures are "
        "reported and never block"
    )

    assert findings(project, path) == [warning]

    # A report that calibrates another check, then one that calibrates this one.
    (project / "pytest.ini").write_text("[pytest]\neval_judge_calibration = labels.yaml\n")
    table = {"yes_yes": 15, "yes_no": 0, "no_yes": 0, "no_no": 15}
    for check, said in (("other", [warning]), ("explains", [])):
        report = {"calibrations": {check: {"confusion": table}}}
        (project / "labels.kappa.json").write_text(json.dumps(report))
        assert findings(project, path) == said
