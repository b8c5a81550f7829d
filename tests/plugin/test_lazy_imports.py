"""Every pytest run of a project that has the plugin installed imports it: a session
that may run no eval case imports none of what runs them (docs/reference.md, "Sessions
without eval cases"), and what only some runs need (the agent drivers, the HTML report,
the baseline, the end of a session that ran cases with its pins, the preflight,
``--eval-changed``'s git diff) is imported by the runs that use it.
``benchmarks/startup.py`` measures what this saves."""

from __future__ import annotations

import ast
import json

import pytest

from tests.helpers.suite import SuiteBuilder

#: Prints, as pytest ends, which of the modules below this session imported.
PROBE = """
import sys

WATCHED = {watched!r}


def pytest_unconfigure(config):
    print("imported:", sorted(m for m in WATCHED if m in sys.modules))
"""

DRIVERS = [f"pytest_evalcases.agents.{name}" for name in ("claude", "codex", "gemini", "command")]
ONLY_WHEN_USED = [
    *DRIVERS,
    "pytest_evalcases.agents.base",
    "pytest_evalcases.agents.preflight",
    "pytest_evalcases.containment",
    "pytest_evalcases.plugin.preflight",
    "pytest_evalcases.report.html",
    "pytest_evalcases.results.baseline",
    "pytest_evalcases.recording.proxy",
    "pytest_evalcases.session.changed",
    "pytest_evalcases.session.finish",
    "pytest_evalcases.session.pins",
    "pytest_evalcases.session.preflight",
]


#: Writes, as pytest ends in each process (the controller and every xdist worker), which
#: of the modules below it imported, to a file named after the process.
PROCESS_PROBE = """
import json, os, sys
from pathlib import Path

WATCHED = {watched!r}


def pytest_unconfigure(config):
    loaded = sorted(m for m in WATCHED if m in sys.modules)
    Path({out!r}, str(os.getpid())).write_text(json.dumps(loaded))
"""

#: What runs cases: none of it is for a session that runs none.
RUNS_CASES = [
    "pydantic",
    "yaml",
    "pytest_evalcases.cases.parsecache",
    "pytest_evalcases.plugin.collection",
    "pytest_evalcases.plugin.integrations",
    "pytest_evalcases.plugin.nodes",
    "pytest_evalcases.plugin.reporting",
    "pytest_evalcases.plugin.session_setup",
    "pytest_evalcases.plugin.suite",
    "pytest_evalcases.report.summary",
    "pytest_evalcases.session.casefile",
    "pytest_evalcases.session.ending",
    "pytest_evalcases.session.htmlfile",
    "pytest_evalcases.session.record",
    "pytest_evalcases.session.selection",
    "pytest_evalcases.session.settings",
    "pytest_evalcases.session.state",
    "pytest_evalcases.session.terminal",
    "pytest_evalcases.results.reader",
    "pytest_evalcases.results.writer",
    "pytest_evalcases.results.gate",
    *ONLY_WHEN_USED,
]
#: Twenty tests of a project's own.
UNIT_TESTS = "".join(f"def test_{n:02d}():\n    assert {n} < {n} + 1\n\n\n" for n in range(20))


def imported(result: pytest.RunResult) -> list[str]:
    (line,) = [line for line in result.stdout.lines if line.startswith("imported:")]
    names: list[str] = ast.literal_eval(line.partition(":")[2].strip())
    return names


@pytest.fixture
def project(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> None:
    """A project of normal tests beside an (empty) evals directory."""
    make_suite()
    pytester.makeconftest(PROBE.format(watched=ONLY_WHEN_USED))
    pytester.makepyfile(test_unit="def test_unit():\n    assert True\n")


@pytest.mark.usefixtures("project")
def test_a_session_without_eval_cases_imports_none_of_them(pytester: pytest.Pytester) -> None:
    # A subprocess: an in-process run shares this process's modules.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")

    result.assert_outcomes(passed=1)
    assert imported(result) == []


@pytest.mark.usefixtures("project")
def test_a_named_agent_imports_its_own_driver_only(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--eval-agent-command", "echo {prompt}"
    )

    result.assert_outcomes(passed=1)
    loaded = imported(result)
    assert "pytest_evalcases.agents.command" in loaded
    assert not [m for m in DRIVERS if m in loaded and not m.endswith(".command")]
    assert "pytest_evalcases.report.html" not in loaded
    assert "pytest_evalcases.results.baseline" not in loaded


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_session_that_collects_no_case_file_starts_nothing(
    pytester: pytest.Pytester, args: tuple[str, ...]
) -> None:
    # The plugin's evals directory is not among the paths collected (testpaths).
    out = pytester.mkdir("probe")
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkdir("evals")
    pytester.makeconftest(PROCESS_PROBE.format(watched=RUNS_CASES, out=str(out)))
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_unit.py").write_text(UNIT_TESTS)

    # A subprocess: an in-process run shares this process's modules.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)

    result.assert_outcomes(passed=20)
    loaded = {path.name: json.loads(path.read_text()) for path in out.iterdir()}
    assert len(loaded) == (3 if args else 1)  # the controller and each worker
    assert all(names == [] for names in loaded.values()), loaded


CONTENTS = {
    "case": "id: one\nprompt: Say hi\nchecks:\n  - type: output_matches\n    pattern: hi\n",
    "task": "checks:\n  - id: says-hi\n    type: output_matches\n    pattern: hi\n",
    "unit": "def test_x():\n    pass\n",
}


@pytest.mark.parametrize(
    ("layout", "args"),
    [
        ({"evals/one.yaml": "case"}, ()),
        ({"tests/deep/evals/one.yaml": "case"}, ()),
        ({"tasks/fix-bug/checks.yaml": "task"}, ()),
        ({"suite/one.yaml": "case"}, ("-o", "eval_paths=suite")),
        ({"evals/one.yaml": "case", "tests/test_x.py": "unit"}, ("evals/one.yaml",)),
    ],
    ids=["evals", "nested-evals", "task-dir", "eval-paths", "case-file-argument"],
)
def test_a_session_that_may_collect_a_case_file_starts(
    pytester: pytest.Pytester, layout: dict[str, str], args: tuple[str, ...]
) -> None:
    pytester.makeini("[pytest]\n")
    for rel in layout:
        path = pytester.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(CONTENTS[layout[rel]])

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--collect-only", *args)

    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    # The case file's node: only a started plugin collects one.
    result.stdout.fnmatch_lines(["*<*File *.yaml>"])


#: What runs an agent: grading a directory that holds the answer runs none.
RUNS_AN_AGENT = [
    "pytest_evalcases.run.invoke",
    "pytest_evalcases.run.trajectory",
    "pytest_evalcases.agents.atif",
]


def test_grading_a_directory_imports_nothing_that_runs_an_agent(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(PROBE.format(watched=RUNS_AN_AGENT))
    evals = pytester.mkdir("evals")
    (evals / "one.yaml").write_text("defends: AGENTS.md\n" + CONTENTS["case"])
    answer = pytester.mkdir("graded") / ".evalcases"
    answer.mkdir()
    (answer / "output.txt").write_text("hi\n")

    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "evals", "--eval-workspace=graded"
    )

    result.assert_outcomes(passed=1)
    assert imported(result) == []
