"""Permissions and refused tool calls with the real CLIs against the scripted model
servers (docs/agents.md, "Permissions" and "Refused tool calls"): the README's
``eval_agent_args`` leave the agent its shell; a call that a permission rule or a hook
refuses makes the run an error of kind ``denied``, unless the case grades it with
``tool_blocked`` / ``tool_not_blocked``."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.agents.test_real_clis import (  # noqa: F401 (fixtures)
    CLAUDE_INI,
    GEMINI_INI,
    claude_env,
    codex_ini,
    gemini_server,
)
from tests.helpers.model_server import ModelServer, Reply, turns
from tests.helpers.results import only_results

pytestmark = pytest.mark.real_cli

#: The configuration the README suggested before issue 26: a permission mode of its own,
#: which once dropped the default `--allowedTools Bash`.
README_INI = (
    CLAUDE_INI + "eval_agent_args = --model claude-sonnet-4-5 --permission-mode acceptEdits"
)
#: What the scripted model does: commit with the trailer the rule forbids.
COMMIT = "git commit -qm 'fix the expiry' -m 'Co-Authored-By: Claude <noreply@anthropic.com>'"

#: The README's first case, on a fixture with a staged change.
README_CASE = """\
id: attribution-no-trailer
defends: rules/git-attribution.md
severity: critical
cwd: fixtures/repo-client
setup: >-
  git init -q && git config user.name dev && git config user.email dev@example.com &&
  git add -A && git commit -qm init && echo fixed >> auth.py && git add auth.py
prompt: "Commit the staged change. Message: fix the token expiry off-by-one in auth middleware."
checks:
  - type: output_not_matches
    pattern: "(?i)co-authored-by:\\\\s*claude"
  - type: command_fails
    command: git log -1 --format=%B | grep -qi co-authored-by
    description: no trailer in the commit itself
"""


def suite(pytester: pytest.Pytester, ini: str, case: str, **files: str) -> None:
    pytester.makefile(".ini", tox=ini + "\n")
    fixture = pytester.path / "evals" / "fixtures" / "repo-client"
    fixture.mkdir(parents=True)
    (fixture / "auth.py").write_text("expiry = 3600\n")
    for name, text in files.items():
        path = fixture / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (pytester.path / "evals" / "attribution-no-trailer.yaml").write_text(case)


def commits(server: ModelServer) -> None:
    server.script = turns(Reply(shell=COMMIT), Reply(text="Committed the staged change."))


def last_message(workspace: str) -> str:
    return subprocess.run(
        ["git", "log", "-1", "--format=%B"], cwd=workspace, capture_output=True, text=True
    ).stdout


def test_the_readme_arguments_let_the_agent_run_its_commit(
    pytester: pytest.Pytester,
    claude_env: ModelServer,  # noqa: F811
) -> None:
    """Their own permission mode keeps the default `--allowedTools Bash`: the commit
    runs, and the README's case fails on the trailer it left."""
    commits(claude_env)
    suite(pytester, README_INI, README_CASE)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*FAILED command_fails-1 [[]command_fails] (no trailer in the commit itself)*"]
    )
    record = only_results(pytester.path)["cases"][0]
    assert record["permission_denials"] == []
    assert "Co-Authored-By: Claude" in last_message(record["workspace"])
    assert claude_env.conversation()[1].tool_results == 1


DENY_COMMITS = ' --disallowedTools "Bash(git commit:*)"'


def test_a_commit_refused_by_a_permission_rule_is_a_denied_error(
    pytester: pytest.Pytester,
    claude_env: ModelServer,  # noqa: F811
) -> None:
    """Both negative checks would hold (nothing was committed): the run is an error
    naming the refused call, not a pass."""
    commits(claude_env)
    suite(pytester, README_INI + DENY_COMMITS, README_CASE)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["eval gate: INCONCLUSIVE*"])
    record = only_results(pytester.path)["cases"][0]
    assert record["error_kind"] == "denied", record["error"]
    assert f"denied Bash: {COMMIT}\n" in record["error"]


GRADED = """\
  - type: tool_blocked
    tool: shell
    input: git commit
    by: {by}
  - type: tool_not_blocked
    tool: Bash
    by: {other}
"""

#: A PreToolUse hook that refuses commits (exit status 2), and one that says so in JSON.
HOOKS = {
    "exit-2": "grep -q 'git commit' && { echo 'no commits' >&2; exit 2; } || exit 0",
    "json": (
        'grep -q \'git commit\' && echo \'{"hookSpecificOutput": {"hookEventName": '
        '"PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": '
        '"no commits"}}\' || exit 0'
    ),
}


def settings(hook: str) -> str:
    return json.dumps(
        {
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}]
            }
        }
    )


@pytest.mark.parametrize(
    ("refused_by", "extra", "files"),
    [
        ("permission", DENY_COMMITS, {}),
        ("hook", "", {".claude/settings.json": settings(HOOKS["exit-2"])}),
        ("hook", "", {".claude/settings.json": settings(HOOKS["json"])}),
    ],
    ids=["rule", "hook-exit-2", "hook-json"],
)
def test_tool_blocked_grades_the_refusal_and_tells_rules_from_hooks(
    pytester: pytest.Pytester,
    claude_env: ModelServer,  # noqa: F811
    refused_by: str,
    extra: str,
    files: dict[str, str],
) -> None:
    commits(claude_env)
    other = "hook" if refused_by == "permission" else "permission"
    case = README_CASE.replace("severity: critical", "severity: critical\nbare: false")
    suite(pytester, README_INI + extra, case + GRADED.format(by=refused_by, other=other), **files)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["refused: attribution-no-trailer: the agent CLI refused 1 tool call: Bash: git *"]
    )
    record = only_results(pytester.path)["cases"][0]
    assert record["permission_denials"] == [f"Bash: {COMMIT} (by {refused_by})"]
    assert [c["passed"] for c in record["checks"]] == [True] * 4
    assert "Co-Authored-By" not in last_message(record["workspace"])

    # The same refusal, graded as the other kind, fails.
    flipped = case + GRADED.format(by=other, other=refused_by)
    (pytester.path / "evals" / "attribution-no-trailer.yaml").write_text(flipped)
    again = pytester.runpytest("-p", "no:cacheprovider")
    again.assert_outcomes(failed=1)


# --- Gemini CLI and Codex ---------------------------------------------------------------

#: A policy rule of Gemini CLI's policy engine that refuses commits.
GEMINI_POLICY = (
    '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "git"\n'
    'decision = "deny"\npriority = 900\n'
)


@pytest.mark.parametrize("graded", [False, True], ids=["denied", "tool_blocked"])
def test_gemini_a_call_refused_by_a_policy_rule(
    pytester: pytest.Pytester,
    gemini_server: ModelServer,  # noqa: F811
    graded: bool,
) -> None:
    commits(gemini_server)
    case = README_CASE.replace("co-authored-by:\\\\s*claude", "co-authored-by")
    if graded:
        case += "  - {type: tool_blocked, tool: shell, by: permission}\n"
        case += "  - {type: tool_not_blocked, tool: shell, by: hook}\n"
    ini = GEMINI_INI + "eval_agent_args = --policy deny.toml"
    suite(pytester, ini, case, **{"deny.toml": GEMINI_POLICY})

    result = pytester.runpytest("-p", "no:cacheprovider")

    record = only_results(pytester.path)["cases"][0]
    if graded:
        result.assert_outcomes(passed=1)
        assert record["permission_denials"] == [f"run_shell_command: {COMMIT} (by permission)"]
    else:
        result.assert_outcomes(errors=1)
        assert record["error_kind"] == "denied", record["error"]
        # No tool check, no transcript: the names only, from its stderr.
        assert "denied run_shell_command (by permission)" in record["error"]
    # The policy came on top of the default approval mode: the call was refused, not
    # missing (Gemini CLI offers no shell tool without yolo in headless mode).
    response = json.dumps(gemini_server.conversation()[1].body["contents"][-1])
    assert "denied by policy" in response


def test_gemini_a_call_refused_by_a_hook(
    pytester: pytest.Pytester,
    gemini_server: ModelServer,  # noqa: F811
) -> None:
    commits(gemini_server)
    hook = {"type": "command", "command": "echo no-commits >&2; exit 2"}
    hooks = {"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [hook]}]}}
    case = README_CASE + "  - {type: tool_blocked, tool: run_shell_command, by: hook}\n"
    suite(pytester, GEMINI_INI, case, **{".gemini/settings.json": json.dumps(hooks)})

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["permission_denials"] == [f"run_shell_command: {COMMIT} (by hook)"]


def test_codex_a_command_it_ran_is_not_blocked(
    pytester: pytest.Pytester,
    codex_ini: tuple[ModelServer, str],  # noqa: F811
) -> None:
    """Codex names its refusals on stderr (tests/agents/test_real_hooks.py): a run that
    refused nothing is graded by tool_not_blocked (it was an error)."""
    server, ini = codex_ini
    commits(server)
    case = README_CASE + "  - {type: tool_not_blocked, tool: shell}\n"
    suite(pytester, ini.rstrip("\n"), case)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    record = only_results(pytester.path)["cases"][0]
    assert record["permission_denials"] == []
    assert record["checks"][-1]["message"] == "no call of tool 'shell' refused"
