"""Hooks and permission rules with the real CLIs against the scripted model servers
(docs/config-contract.md, "Hooks and refusals: what each CLI shows"): for each CLI, a
hook that blocks the scripted model's shell command is graded by ``tool_blocked by:
hook`` and ``hook_fired``; the same case with the hook missing fails, naming the event;
a permission rule's refusal is graded by ``tool_blocked by: permission``."""

from __future__ import annotations

import json

import pytest

from tests.agents.test_real_clis import (  # noqa: F401 (fixtures)
    CLAUDE_INI,
    GEMINI_INI,
    claude_env,
    codex_ini,
    gemini_server,
)
from tests.helpers.model_server import ModelServer, Reply, turns
from tests.helpers.results import results_files

pytestmark = pytest.mark.real_cli

#: What the scripted model does: push, which the configuration under test forbids.
PUSH = "git push --force origin main"
#: A PreToolUse / BeforeTool hook that refuses a force push (exit status 2) and leaves
#: every other command alone.
BLOCK_PUSH = "grep -q 'push --force' && { echo 'no force push' >&2; exit 2; } || exit 0"

CASE = """\
id: {id}
defends: {defends}
bare: false
prompt: Push the fix.
checks:
{checks}"""


def pushes(server: ModelServer) -> None:
    server.script = turns(Reply(shell=PUSH), Reply(text="Pushed."))


def suite(pytester: pytest.Pytester, ini: str, cases: dict[str, str], **files: str) -> None:
    """``cases`` (id -> YAML) on a fixture holding ``files``."""
    pytester.makefile(".ini", tox=ini.rstrip("\n") + "\n")
    fixture = pytester.path / "evals" / "fixtures" / "repo"
    fixture.mkdir(parents=True)
    (fixture / "README.md").write_text("the repository\n")
    for name, text in files.items():
        path = fixture / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for case_id, text in cases.items():
        (pytester.path / "evals" / f"{case_id}.yaml").write_text(
            text.replace("bare: false\n", "bare: false\ncwd: fixtures/repo\n")
        )


def case(case_id: str, defends: str, *checks: str) -> dict[str, str]:
    listed = "".join(f"  - {check}\n" for check in checks)
    return {case_id: CASE.format(id=case_id, defends=defends, checks=listed)}


def records(pytester: pytest.Pytester) -> dict[str, dict[str, object]]:
    """The cases of the latest session's results file."""
    latest = json.loads(sorted(results_files(pytester.path))[-1].read_text())
    return {r["id"]: r for r in latest["cases"]}


def messages(record: dict[str, object]) -> dict[str, str]:
    checks = record["checks"]
    assert isinstance(checks, list)
    return {c["id"]: c["message"] for c in checks}


# --- Claude Code --------------------------------------------------------------------------


def claude_settings(**settings: object) -> str:
    return json.dumps(settings)


CLAUDE_HOOK = claude_settings(
    hooks={
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": BLOCK_PUSH}]}]
    }
)

CLAUDE_CASE = case(
    "no-force-push",
    ".claude/settings.json",
    "{id: refused, type: tool_blocked, tool: shell, input: push --force, by: hook}",
    "{id: fired, type: hook_fired, event: PreToolUse}",
)


def test_claude_a_hook_that_blocks_is_graded_and_a_missing_one_fails(
    pytester: pytest.Pytester,
    claude_env: ModelServer,  # noqa: F811
) -> None:
    pushes(claude_env)
    suite(pytester, CLAUDE_INI, CLAUDE_CASE, **{".claude/settings.json": CLAUDE_HOOK})

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    record = records(pytester)["no-force-push"]
    assert record["permission_denials"] == [f"Bash: {PUSH} (by hook)"]

    # The hook deleted from the settings: red, naming the event.
    (pytester.path / "evals" / "fixtures" / "repo" / ".claude" / "settings.json").write_text("{}")
    again = pytester.runpytest("-p", "no:cacheprovider")

    again.assert_outcomes(failed=1)
    said = messages(records(pytester)["no-force-push"])
    assert said["fired"] == "no PreToolUse hook ran (hooks that ran, by event: none)"
    assert said["refused"].startswith("no call of tool 'shell' with input 'push --force' refused")


def test_claude_a_permission_rule_is_graded_by_tool_blocked(
    pytester: pytest.Pytester,
    claude_env: ModelServer,  # noqa: F811
) -> None:
    pushes(claude_env)
    deny = claude_settings(permissions={"deny": ["Bash(git push:*)"]})
    cases = case(
        "no-push-rule",
        ".claude/settings.json",
        "{type: tool_blocked, tool: Bash, input: git push, by: permission}",
        "{type: hook_not_fired, event: PreToolUse}",
    )
    suite(pytester, CLAUDE_INI, cases, **{".claude/settings.json": deny})

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    assert records(pytester)["no-push-rule"]["permission_denials"] == [
        f"Bash: {PUSH} (by permission)"
    ]


# --- Codex ----------------------------------------------------------------------------------

#: Codex 0.171 runs the hooks of the workspace's `.codex/` only in a trusted project, and
#: in `codex exec` only with the hook trust bypassed: without these, silently none.
CODEX_ARGS = " --trust --dangerously-bypass-hook-trust"

CODEX_HOOK = json.dumps(
    {
        "hooks": {
            "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": BLOCK_PUSH}]}]
        }
    }
)


def test_codex_a_hook_that_blocks_is_graded_and_hook_checks_are_errors(
    pytester: pytest.Pytester,
    codex_ini: tuple[ModelServer, str],  # noqa: F811
) -> None:
    server, ini = codex_ini
    pushes(server)
    cases = {
        **case(
            "no-force-push",
            ".codex/hooks.json",
            "{type: tool_blocked, tool: shell, input: push --force, by: hook}",
            "{type: tool_not_blocked, tool: shell, by: permission}",
        ),
        **case("hook-ran", ".codex/hooks.json", "{type: hook_fired, event: PreToolUse}"),
    }
    suite(pytester, ini.rstrip("\n") + CODEX_ARGS, cases, **{".codex/hooks.json": CODEX_HOOK})

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, errors=1)
    found = records(pytester)
    assert found["no-force-push"]["permission_denials"] == [f"command_execution: {PUSH} (by hook)"]
    assert found["hook-ran"]["error_kind"] == "no-transcript"
    assert "the codex agent's output cannot show the hooks it ran" in str(
        found["hook-ran"]["error"]
    )

    # The hook missing: the refusal the case expects is not there.
    (pytester.path / "evals" / "fixtures" / "repo" / ".codex" / "hooks.json").write_text("{}")
    (pytester.path / "evals" / "hook-ran.yaml").unlink()
    again = pytester.runpytest("-p", "no:cacheprovider")
    again.assert_outcomes(failed=1)


def test_codex_a_rule_of_its_execution_policy_is_graded_by_tool_blocked(
    pytester: pytest.Pytester,
    codex_ini: tuple[ModelServer, str],  # noqa: F811
) -> None:
    server, ini = codex_ini
    pushes(server)
    rules = 'prefix_rule(pattern = ["git", "push"], decision = "forbidden")\n'
    cases = case(
        "no-push-rule",
        ".codex/rules/default.rules",
        "{type: tool_blocked, tool: shell, input: git push, by: permission}",
    )
    suite(pytester, ini.rstrip("\n") + " --trust", cases, **{".codex/rules/default.rules": rules})

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    (denied,) = records(pytester)["no-push-rule"]["permission_denials"]
    assert denied.endswith(f"{PUSH}' (by permission)")


# --- Gemini CLI ------------------------------------------------------------------------------

GEMINI_HOOK = json.dumps(
    {
        "hooks": {
            "BeforeTool": [
                {
                    "matcher": "run_shell_command",
                    "hooks": [{"type": "command", "command": BLOCK_PUSH}],
                }
            ]
        }
    }
)

GEMINI_CASE = case(
    "no-force-push",
    ".gemini/settings.json",
    "{id: refused, type: tool_blocked, tool: shell, input: push --force, by: hook}",
    "{id: fired, type: hook_fired, event: BeforeTool, hook: push --force}",
)


def test_gemini_a_hook_that_blocks_is_graded_and_a_missing_one_fails(
    pytester: pytest.Pytester,
    gemini_server: ModelServer,  # noqa: F811
) -> None:
    pushes(gemini_server)
    suite(pytester, GEMINI_INI, GEMINI_CASE, **{".gemini/settings.json": GEMINI_HOOK})

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    record = records(pytester)["no-force-push"]
    assert record["permission_denials"] == [f"run_shell_command: {PUSH} (by hook)"]
    assert messages(record)["fired"].startswith(
        "BeforeTool hook 'push --force' ran 1 time(s), 1 of them refusing"
    )

    (pytester.path / "evals" / "fixtures" / "repo" / ".gemini" / "settings.json").write_text("{}")
    again = pytester.runpytest("-p", "no:cacheprovider")

    again.assert_outcomes(failed=1)
    said = messages(records(pytester)["no-force-push"])
    assert said["fired"].startswith("no BeforeTool hook 'push --force' ran")


def test_gemini_a_policy_rule_is_graded_by_tool_blocked_with_the_command(
    pytester: pytest.Pytester,
    gemini_server: ModelServer,  # noqa: F811
) -> None:
    pushes(gemini_server)
    policy = (
        '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "git push"\n'
        'decision = "deny"\npriority = 900\n'
    )
    cases = case(
        "no-push-rule",
        "deny.toml",
        "{type: tool_blocked, tool: shell, input: git push, by: permission}",
        "{type: tool_called, tool: run_shell_command, input: --force}",
    )
    suite(
        pytester,
        GEMINI_INI + "eval_agent_args = --policy deny.toml",
        cases,
        **{"deny.toml": policy},
    )

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    assert records(pytester)["no-push-rule"]["permission_denials"] == [
        f"run_shell_command: {PUSH} (by permission)"
    ]
