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


INSTALLED_AGENT = '''
import sys

from pytest_evalcases.agents.base import AgentResult, Invocation


class InstalledAgent:
    """Answers "installed agent MODEL: PROMPT" from a child Python process."""

    name = "installed"

    def __init__(self, settings):
        self.settings = settings

    def invocation(self, request):
        code = "import sys; print('installed agent ' + sys.argv[1] + ': ' + sys.argv[2])"
        return Invocation((sys.executable, "-c", code, self.settings.model, request.prompt))

    def parse(self, result, request):
        return AgentResult(text=result.stdout, models=(self.settings.model,))
'''


def install_agent_distribution(site: Path) -> None:
    """What ``pip install`` leaves of a package declaring the agent ``installed``: its
    module and a dist-info directory with the entry point."""
    site.mkdir()
    (site / "evalcases_installed_agent.py").write_text(INSTALLED_AGENT)
    info = site / "evalcases_installed_agent-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: evalcases-installed-agent\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(
        "[pytest_evalcases.agents]\ninstalled = evalcases_installed_agent:InstalledAgent\n"
    )


def test_custom_agent_registered_by_an_entry_point(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    site = tmp_path / "site-packages"
    install_agent_distribution(site)
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals/one.yaml").write_text(
        "id: one\ndefends: AGENTS.md\nprompt: hello\n"
        "checks: [{type: output_matches, pattern: '^installed agent m-7: hello$'}]\n"
    )
    args = ["--eval-agent", "installed", "--eval-model", "m-7", "--eval-no-save"]
    args += ["-p", "no:cacheprovider"]

    # Without the distribution on the path the name is unknown ...
    monkeypatch.delenv("PYTHONPATH", raising=False)
    missing = pytester.runpytest_subprocess(*args)
    # ... with it, the entry point's factory builds the agent that runs the case.
    monkeypatch.setenv("PYTHONPATH", str(site))
    result = pytester.runpytest_subprocess(*args)

    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["*unknown agent 'installed'*"])
    result.assert_outcomes(passed=1)
    assert result.ret == 0
