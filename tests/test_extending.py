"""Third-party check types and agents, registered from a conftest.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest


def test_custom_agent_registered_in_conftest(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        from pytest_evalcases.agents import register_agent
        from pytest_evalcases.agents.base import AgentResult, Invocation


        class EchoAgent:
            name = "echo"

            def __init__(self, settings):
                self.settings = settings

            def invocation(self, request):
                return Invocation(("echo", "echoed:", request.prompt))

            def parse(self, result, request):
                return AgentResult(text=result.stdout, models=("echo-1",))


        register_agent("echo", EchoAgent)
        """
    )
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals/one.yaml").write_text(
        "id: one\ndefends: AGENTS.md\nprompt: hello\n"
        "checks: [{type: output_matches, pattern: '^echoed: hello$'}]\n"
    )

    result = pytester.runpytest("--eval-agent", "echo", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)


def test_unknown_agent_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--eval-agent", "nobody")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown agent 'nobody'*known: *claude*command*"])


def test_custom_check_type_from_the_documented_hook(pytester: pytest.Pytester) -> None:
    doc = (Path(__file__).parent.parent / "docs" / "case-format.md").read_text()
    (example,) = re.findall(r"```python\n# conftest.py\n(.*?)```", doc, re.DOTALL)
    pytester.makeconftest(example)
    out = pytester.path / "out"
    out.mkdir()
    (out / "module.py").write_text("a = 1\nb = 2\nc = 3\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals/short.yaml").write_text(
        "id: short\ndefends: AGENTS.md\nchecks:\n"
        "  - {type: max_lines, path: module.py, limit: 3}\n"
        "  - {type: max_lines, path: module.py, limit: 2}\n"
    )
    (pytester.path / "evals/escape.yaml").write_text(
        "id: escape\ndefends: AGENTS.md\nchecks:\n  - {type: max_lines, path: ../x, limit: 3}\n"
    )
    (pytester.path / "evals/typo.yaml").write_text(
        "id: typo\ndefends: AGENTS.md\nchecks:\n  - {type: max_lines, path: module.py, limt: 3}\n"
    )

    result = pytester.runpytest("--eval-workspace", "out", "-p", "no:cacheprovider")

    result.assert_outcomes(failed=1, errors=2)
    result.stdout.fnmatch_lines(
        ["*FAILED max_lines-1 [[]max_lines[]]: module.py: 3 lines (limit 2)*"]
    )
    result.stdout.fnmatch_lines(["*evals/escape.yaml:4: checks[[]0[]].path: path '../x' escapes*"])
    result.stdout.fnmatch_lines(
        ["*evals/typo.yaml:4: checks[[]0[]].limt: unknown field 'limt'; did you mean 'limit'?*"]
    )
