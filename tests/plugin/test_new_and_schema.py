"""``evalcases new`` writes a case that validates; ``evalcases schema`` prints a JSON
Schema that describes the case format, including third-party check types."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Literal

import pytest
import yaml

from pytest_evalcases import cli
from pytest_evalcases.authoring import lint
from pytest_evalcases.authoring import schema as case_schema
from pytest_evalcases.cases import schema
from pytest_evalcases.cases.loading import load_case_file
from pytest_evalcases.run.checks import Outcome, default_registry
from tests.helpers.git import make_repo


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_new_writes_a_valid_case_with_a_negative_check_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    monkeypatch.chdir(tmp_path)

    assert cli.main(["new", "no-ai-trailer", "--format", fmt]) == 0

    path = tmp_path / "evals" / f"no-ai-trailer.{fmt}"
    assert capsys.readouterr().out.strip() == f"evals/no-ai-trailer.{fmt}"
    (case,) = load_case_file(path, tmp_path / "evals", default_registry())
    assert case.id == "no-ai-trailer"
    assert case.checks[0].type in lint.NEGATIVE_CHECKS
    assert case.prompt
    text = path.read_text()
    if fmt == "yaml":
        assert "# yaml-language-server: $schema=_schema.json" in text
        assert text.count("\n#") > 5  # commented
        # The commented `mode:` validates once uncommented (docs/case-format.md).
        path.write_text(text.replace("    # mode: planning_error", "    mode: planning_error"))
        (moded,) = load_case_file(path, tmp_path / "evals", default_registry())
        assert moded.checks[0].mode == "planning_error"
        path.write_text(text)
    else:
        assert "--eval-red-first" in json.loads(text)["description"]
    # lint finds nothing wrong with the case itself (AGENTS.md present)
    (tmp_path / "AGENTS.md").write_text("Keep answers short.\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    findings = lint.lint_files(lint.discover([path]), tmp_path)
    assert findings == []


def test_new_with_dir_and_refusals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["new", "first-case", "--dir", "suite/evals/git"]) == 0
    target = tmp_path / "suite" / "evals" / "git" / "first-case.yaml"
    before = target.read_text()

    assert cli.main(["new", "first-case", "--dir", "suite/evals/git"]) == 2
    assert cli.main(["new", "first-case", "--dir", "suite/evals/git", "--format", "json"]) == 2
    assert cli.main(["new", "First_Case"]) == 2
    assert cli.main(["new", "a" * 101]) == 2
    assert cli.main(["new", "a" * 100, "--dir", "suite/evals/long"]) == 0

    err = capsys.readouterr().err
    assert "already exists; not overwriting it" in err
    assert "'First_Case' is not kebab-case" in err
    assert "is 101 characters; a case id may have at most 100" in err
    assert not list(tmp_path.glob("a*.yaml"))
    assert target.read_text() == before
    assert not (tmp_path / "suite" / "evals" / "git" / "first-case.json").exists()


def test_new_case_collects_and_runs(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    assert cli.main(["new", "fresh", "--dir", str(pytester.path / "evals")]) == 0
    (pytester.path / "evals" / "out").mkdir()
    (pytester.path / "evals" / "out" / ".evalcases").mkdir()
    answer = pytester.path / "evals" / "out" / ".evalcases" / "output.txt"
    answer.write_text("Done.\n")

    # the template's positive check is a placeholder: red until written
    result = pytester.runpytest("--eval-workspace", "evals/out", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert "FAILED task-done [output_matches]" in result.stdout.str()

    answer.write_text("Replace this with what the answer of a done task says.\n")
    result = pytester.runpytest("--eval-workspace", "evals/out", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def schema_of(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert cli.main(["schema", *args]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_schema_describes_one_case_or_a_cases_list(capsys: pytest.CaptureFixture[str]) -> None:
    data = schema_of(capsys)

    defs = data["$defs"]
    assert isinstance(defs, dict)
    case = defs["Case"]
    assert set(case["required"]) == {"id", "defends", "checks"}
    assert case["additionalProperties"] is False
    assert "description" in case["properties"]["severity"]
    assert "description" in case["properties"]["cwd"]
    types = {
        d["properties"]["type"]["const"] for d in defs.values() if "type" in d.get("properties", {})
    }
    assert types == set(default_registry().names)
    assert data["anyOf"] == [
        {"$ref": "#/$defs/Case"},
        {
            "type": "object",
            "properties": {
                "cases": {
                    "type": "array",
                    "items": {"$ref": "#/$defs/Case"},
                    "minItems": 1,
                    "description": "Several cases in one file; ids need not equal the file name",
                }
            },
            "required": ["cases"],
            "additionalProperties": False,
        },
    ]


def test_schema_includes_registered_check_types() -> None:
    class HasKey(schema.CheckModel):
        """The JSON file has ``key``."""

        type: Literal["json_has_key"]
        path: str
        key: str

    registry = default_registry()
    registry.register(HasKey, lambda check, ctx: Outcome(True, "ok"))

    data = case_schema.case_schema(registry)
    task = case_schema.task_schema(registry)

    assert "HasKey" in data["$defs"]
    assert data["$defs"]["HasKey"]["properties"]["type"]["const"] == "json_has_key"
    assert "TaskHasKey" in task["$defs"]


def test_task_schema_requires_check_ids_and_allows_severity(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = schema_of(capsys, "--task")

    props = data["properties"]
    assert isinstance(props, dict)
    assert {"task", "defends", "checks"} <= set(props)
    check = data["$defs"]["TaskFileContains"]  # type: ignore[index]
    assert "id" in check["required"]
    assert check["properties"]["severity"]["enum"] == ["HIGH", "MEDIUM", "LOW"]


def test_schema_accepts_the_example_suites(capsys: pytest.CaptureFixture[str]) -> None:
    """Every example case file is an instance of the schema (checked with the schema's
    own structure: required fields and known properties, per case)."""
    data = schema_of(capsys)
    case = data["$defs"]["Case"]  # type: ignore[index]
    known = set(case["properties"])
    examples = Path(__file__).resolve().parents[2] / "example_cases"
    files = [
        p
        for p in examples.rglob("evals/**/*")
        if p.suffix in (".yaml", ".json") and "fixtures" not in p.parts and p.name[0] != "_"
    ]
    assert files
    for path in files:
        doc = yaml.safe_load(path.read_text())
        for item in doc.get("cases", [doc]):
            assert set(case["required"]) <= set(item), path
            assert set(item) <= known, path


#: The configuration files a project may have, without eval_paths, and how a line goes
#: into their pytest section.
CONFIGS = {
    "none": ("", ""),
    "pytest.ini": ("pytest.ini", "[pytest]\naddopts = -p no:cacheprovider\n"),
    "pyproject.toml": ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = "-rs"\n'),
}


def _new(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``evalcases new ARGS`` in the current directory; what it said on stderr."""
    capsys.readouterr()
    assert cli.main(["new", *args]) == 0
    return capsys.readouterr().err


def _printed_command(err: str) -> list[str]:
    (line,) = [line for line in err.splitlines() if line.startswith("next: ")]
    return shlex.split(line.partition(": pytest ")[2])


@pytest.mark.parametrize("config", CONFIGS)
def test_new_outside_evals_prints_a_command_that_collects_the_case(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    config: str,
) -> None:
    """`--dir agent-evals` printed `pytest agent-evals/foo-case.yaml --eval-red-first`,
    which ended in `ERROR: not found` (exit status 4)."""
    name, text = CONFIGS[config]
    if name:
        (pytester.path / name).write_text(text)
    monkeypatch.chdir(pytester.path)

    err = _new(capsys, "foo-case", "--dir", "agent-evals")
    printed = _printed_command(err)
    assert printed[-2:] == ["--eval-agent", "claude"]
    result = pytester.runpytest(*printed[:-2])

    # Collected (and, with the agent left out here, skipped for want of one).
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(skipped=1)
    # The note says what to add to the configuration so that a plain pytest finds it.
    assert "agent-evals/ is neither below a directory named evals nor in eval_paths" in err
    line = err.split("\n\n")[1].strip().splitlines()[-1].strip()
    if name:
        assert f"in {pytester.path / name}:" in err
        (pytester.path / name).write_text(text + line + "\n")
    else:
        assert "write a pytest.ini with" in err
        (pytester.path / "pytest.ini").write_text(f"[pytest]\n{line}\n")
    pytester.runpytest("agent-evals/foo-case.yaml").assert_outcomes(skipped=1)


def test_new_in_a_directory_that_is_collected_prints_the_plain_command(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (pytester.path / "pytest.ini").write_text(
        "[pytest]\neval_paths = agent-evals\neval_agent = codex\n"
    )
    monkeypatch.chdir(pytester.path)

    for directory in ("evals/git", "agent-evals/sub"):
        err = _new(capsys, "foo-case", "--dir", directory)

        assert "note:" not in err
        assert _printed_command(err) == [f"{directory}/foo-case.yaml", "--eval-red-first"]


AGENT = "import sys\nprint('done: ' + sys.argv[1])\n"


@pytest.mark.parametrize("configured", [False, True], ids=["no-agent", "eval_agent_command"])
def test_new_prints_a_command_that_grades_the_case_run_as_printed(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    configured: bool,
) -> None:
    """The printed command had no agent: run as printed, the case was skipped and the
    run exited 0 ("nothing was graded"), easy to misread as a red-first success."""
    ini = "[pytest]\n"
    if configured:
        (pytester.path / "agent.py").write_text(AGENT)
        ini += "eval_agent_command = {python} {rootdir}/agent.py {prompt}\n"
    (pytester.path / "pytest.ini").write_text(ini)
    monkeypatch.chdir(pytester.path)
    # No agent CLI on PATH: a test never starts a real one.
    monkeypatch.setenv("PATH", str(pytester.mkdir("empty-bin")))

    err = _new(capsys, "foo-case")
    printed = _printed_command(err)
    result = pytester.runpytest(*printed, "-p", "no:cacheprovider")

    out = result.stdout.str() + result.stderr.str()
    assert "nothing was graded" not in out
    if configured:
        # Graded: the template's answer check does not hold, red first as it should be.
        assert printed == ["evals/foo-case.yaml", "--eval-red-first"]
        result.assert_outcomes(passed=1)
        assert result.ret == pytest.ExitCode.OK
        assert "note: the configuration names no agent" not in err
    else:
        assert printed == ["evals/foo-case.yaml", "--eval-red-first", "--eval-agent", "claude"]
        # Here no claude is installed: the run says so rather than exit 0 ungraded.
        assert result.ret != pytest.ExitCode.OK
        assert "agent 'claude': program 'claude' not found on PATH" in out
        assert "note: the configuration names no agent, so the command names claude" in err


@pytest.mark.parametrize("directory", ["evals/fixtures", "evals/results/x", "old/evals", "legacy"])
def test_new_refuses_a_directory_pytest_never_collects(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    directory: str,
) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\neval_ignore = old legacy\n")
    monkeypatch.chdir(tmp_path)

    assert cli.main(["new", "foo-case", "--dir", directory]) == 2

    err = capsys.readouterr().err
    assert f"pytest never collects case files in {directory}/" in err
    assert "choose another --dir" in err
    assert not (tmp_path / directory).exists()


@pytest.mark.parametrize(
    ("ini", "directory"), [("", "evals/results"), ("eval_results_dir = out/runs\n", "out/runs")]
)
def test_new_suggests_ignoring_the_results_directory_in_git(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    ini: str,
    directory: str,
) -> None:
    root = make_repo(tmp_path / "repo", {"pytest.ini": f"[pytest]\n{ini}"})
    (root / "sub").mkdir()
    monkeypatch.chdir(root / "sub")

    err = _new(capsys, "first-case", "--dir", "../evals")
    (note,) = [line for line in err.splitlines() if "results file" in line]
    command = note.partition("keep them out of commits: ")[2]
    subprocess.run(command, shell=True, check=True, cwd=root / "sub")
    again = _new(capsys, "second-case", "--dir", "../evals")

    assert note.startswith(
        f"note: every pytest run writes a results file to ../{directory}/, which git does "
        "not ignore"
    )
    assert command == f"echo /{directory}/ >> ../.gitignore"
    assert (root / ".gitignore").read_text() == f"/{directory}/\n"
    assert "results file" not in again


@pytest.mark.parametrize(
    "ini",
    ["addopts = --eval-agent=codex", "eval_variants = a: agent:codex", "eval_agent_command = x"],
)
def test_new_leaves_the_agent_to_a_configuration_that_names_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], ini: str
) -> None:
    # A second --eval-agent on the command line would override the one addopts gives.
    (tmp_path / "pytest.ini").write_text(f"[pytest]\n{ini}\n")
    monkeypatch.chdir(tmp_path)

    assert _printed_command(_new(capsys, "foo-case")) == ["evals/foo-case.yaml", "--eval-red-first"]
