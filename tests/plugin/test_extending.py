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
    doc = (Path(__file__).parents[2] / "docs" / "case-format.md").read_text()
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


def install_distribution(site: Path, name: str, entry_points: str, module: str = "") -> None:
    """What ``pip install`` leaves of a package: its module (when given) and a dist-info
    directory declaring ``entry_points``."""
    site.mkdir(exist_ok=True)
    if module:
        (site / f"{name}.py").write_text(module)
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)


def install_agent_distribution(site: Path) -> None:
    """A package declaring the agent ``installed``."""
    install_distribution(
        site,
        "evalcases_installed_agent",
        "[pytest_evalcases.agents]\ninstalled = evalcases_installed_agent:InstalledAgent\n",
        INSTALLED_AGENT,
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


def test_a_broken_agent_entry_point_is_a_usage_error_only_when_named(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    site = tmp_path / "site-packages"
    install_distribution(site, "broken_agent", "[pytest_evalcases.agents]\nbroken = gone:Agent\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals/one.yaml").write_text(
        "id: one\ndefends: AGENTS.md\nprompt: hello\n"
        "checks: [{type: output_matches, pattern: '^ok$'}]\n"
    )
    args = ["--eval-no-save", "-p", "no:cacheprovider"]

    # Another package's broken entry point does not stand in the way of other agents.
    fine = pytester.runpytest_subprocess("--eval-agent-command", "echo ok", *args)
    fine.assert_outcomes(passed=1)

    named = pytester.runpytest_subprocess("--eval-agent", "broken", *args)
    assert named.ret == pytest.ExitCode.USAGE_ERROR
    named.stderr.fnmatch_lines(
        [
            "*entry point broken = gone:Agent (group pytest_evalcases.agents) does not load: "
            "ModuleNotFoundError: No module named 'gone'*"
        ]
    )
    assert "Traceback" not in named.stderr.str() + named.stdout.str()


def test_a_broken_check_types_entry_point_errors_every_case_file_and_spares_the_rest(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    site = tmp_path / "site-packages"
    install_distribution(
        site,
        "broken_checks",
        "[pytest_evalcases.checks]\nmine = broken_checks:register\n",
        "def register(registry):\n    raise RuntimeError('needs a newer pytest-evalcases')\n",
    )
    monkeypatch.setenv("PYTHONPATH", str(site))
    (pytester.path / "evals").mkdir()
    for name in ("one", "two"):
        (pytester.path / f"evals/{name}.yaml").write_text(
            f"id: {name}\ndefends: AGENTS.md\nprompt: hello\n"
            "checks: [{type: output_matches, pattern: '^ok$'}]\n"
        )
    pytester.makepyfile(test_unit="def test_plain():\n    pass\n")

    result = pytester.runpytest_subprocess("--eval-agent-command", "echo ok", "--eval-no-save")

    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*case file error: evals/one.yaml: entry point mine = broken_checks:register "
            "(group pytest_evalcases.checks) failed to register its check types: "
            "RuntimeError: needs a newer pytest-evalcases*"
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert "INTERNALERROR" not in result.stdout.str()
