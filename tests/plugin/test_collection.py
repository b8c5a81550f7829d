"""Which files become eval items, how the items are named and where they point."""

from __future__ import annotations

import json
import subprocess
import sys
from xml.etree import ElementTree

import pytest
import yaml

CASE = """\
id: {id}
defends: AGENTS.md
prompt: do it
checks:
  - type: output_matches
    pattern: done
"""


def write_case(pytester: pytest.Pytester, rel: str, case_id: str) -> None:
    path = pytester.path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CASE.format(id=case_id))


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", *args)
    return [line for line in result.stdout.lines if "::" in line and not line.startswith("ERROR")]


def test_case_files_below_evals_are_collected_and_others_are_not(
    pytester: pytest.Pytester,
) -> None:
    write_case(pytester, "evals/one.yaml", "one")
    write_case(pytester, "evals/sub/two.yml", "two")
    (pytester.path / "evals/three.json").write_text(
        json.dumps(
            {
                "id": "three",
                "defends": "AGENTS.md",
                "prompt": "x",
                "checks": [{"type": "file_exists", "path": "a.txt"}],
            }
        )
    )
    write_case(pytester, "evals/_template.yaml", "template")
    write_case(pytester, "evals/.hidden.yaml", "hidden")
    write_case(pytester, "evals/fixtures/repo/config.yaml", "fixture-file")
    write_case(pytester, "evals/results/old.yaml", "results-file")
    write_case(pytester, "elsewhere/four.yaml", "four")

    items = collected(pytester)

    assert sorted(items) == [
        "evals/one.yaml::one",
        "evals/sub/two.yml::two",
        "evals/three.json::three",
    ]


def test_eval_paths_and_eval_ignore(pytester: pytest.Pytester) -> None:
    write_case(pytester, "agent-tests/a.yaml", "a")
    write_case(pytester, "agent-tests/skip/b.yaml", "b")
    write_case(pytester, "evals/c.yaml", "c")
    write_case(pytester, "evals/old/d.yaml", "d")
    write_case(pytester, "evals/old/task/checks.yaml", "task")
    pytester.makepyfile(**{"evals/old/test_still_a_test": "def test_here():\n    pass\n"})
    pytester.makeini(
        "[pytest]\neval_paths = agent-tests\neval_ignore =\n    agent-tests/skip\n    evals/old\n"
    )

    # Ignored as case files (task directories too); ordinary tests there still run.
    assert sorted(collected(pytester)) == [
        "agent-tests/a.yaml::a",
        "evals/c.yaml::c",
        "evals/old/test_still_a_test.py::test_here",
    ]


def test_python_tests_inside_fixtures_are_not_collected(pytester: pytest.Pytester) -> None:
    write_case(pytester, "evals/one.yaml", "one")
    fixture_test = pytester.path / "evals/fixtures/repo/tests/test_app.py"
    fixture_test.parent.mkdir(parents=True)
    fixture_test.write_text("def test_fixture_own():\n    assert False\n")

    assert collected(pytester) == ["evals/one.yaml::one"]


def test_checks_yaml_is_a_task_directory_anywhere(pytester: pytest.Pytester) -> None:
    task = pytester.path / "tasks/01-service"
    task.mkdir(parents=True)
    (task / "checks.yaml").write_text(
        "task: Service uses a class\nchecks:\n"
        "  - id: service-file-exists\n    type: file_exists\n    path: src/service.py\n"
    )
    (task / "task.md").write_text("Write the service.\n")

    assert collected(pytester) == ["tasks/01-service/checks.yaml::01-service"]


def test_cases_list_gives_one_item_per_case_at_its_line(pytester: pytest.Pytester) -> None:
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals/suite.yaml").write_text(
        "cases:\n"
        "  - id: first\n    defends: AGENTS.md\n    prompt: a\n"
        "    checks: [{type: output_matches, pattern: a}]\n"
        "  - id: second\n    defends: AGENTS.md\n    prompt: b\n"
        "    checks: [{type: output_matches, pattern: b}]\n"
    )
    pytester.makeconftest(
        """
        def pytest_collection_finish(session):
            for item in session.items:
                print("LOC", item.nodeid, item.location[1])
        """
    )
    result = pytester.runpytest("--collect-only", "-q", "-s", "-p", "no:cacheprovider")

    result.stdout.fnmatch_lines(["LOC evals/suite.yaml::first 1", "LOC evals/suite.yaml::second 5"])


def test_severity_markers_are_registered_and_select(pytester: pytest.Pytester) -> None:
    for sev in ("critical", "normal", "advisory"):
        path = pytester.path / f"evals/{sev}-case.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(CASE.format(id=f"{sev}-case") + f"severity: {sev}\n")

    assert collected(pytester, "-m", "critical", "--strict-markers") == [
        "evals/critical-case.yaml::critical-case"
    ]
    assert collected(pytester, "-m", "not advisory") == [
        "evals/critical-case.yaml::critical-case",
        "evals/normal-case.yaml::normal-case",
    ]
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.critical:*merge gate*"])


def test_select_by_id_tags_and_defends(pytester: pytest.Pytester) -> None:
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals/a.yaml").write_text(
        "id: a\ndefends: rules/git.md\ntags: [git]\nprompt: x\n"
        "checks: [{type: output_matches, pattern: x}]\n"
    )
    (pytester.path / "evals/b.yaml").write_text(
        "id: b\ndefends: skills/deploy/SKILL.md\ntags: [deploy]\nprompt: x\n"
        "checks: [{type: output_matches, pattern: x}]\n"
    )
    pytester.makepyfile(test_unit="def test_unit():\n    pass\n")

    assert collected(pytester, "evals", "-k", "b") == ["evals/b.yaml::b"]
    # A tag is a keyword too.
    assert collected(pytester, "-k", "deploy") == ["evals/b.yaml::b"]
    assert collected(pytester, "-k", "git and not deploy") == ["evals/a.yaml::a"]
    assert collected(pytester, "--eval-tags", "git") == [
        "evals/a.yaml::a",
        "test_unit.py::test_unit",
    ]
    assert collected(pytester, "--eval-defends", "skills/deploy") == [
        "evals/b.yaml::b",
        "test_unit.py::test_unit",
    ]


def test_workspace_variants_name_items(pytester: pytest.Pytester) -> None:
    write_case(pytester, "evals/one.yaml", "one")
    (pytester.path / "out/baseline").mkdir(parents=True)
    (pytester.path / "out/after").mkdir(parents=True)

    items = collected(
        pytester,
        "--eval-workspace",
        "baseline=out/baseline",
        "--eval-workspace",
        "after-drift=out/after",
    )

    assert items == ["evals/one.yaml::one[baseline]", "evals/one.yaml::one[after-drift]"]


def test_unknown_workspace_directory_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_case(pytester, "evals/one.yaml", "one")

    result = pytester.runpytest("--eval-workspace", "nope/")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--eval-workspace nope/: directory * does not exist*"])


def test_parsed_case_files_are_cached_until_they_change(pytester: pytest.Pytester) -> None:
    write_case(pytester, "evals/one.yaml", "one")
    case = pytester.path / "evals/one.yaml"

    def ids() -> list[str]:
        result = pytester.runpytest("--collect-only", "-q")
        return [line for line in result.stdout.lines if "::" in line]

    assert ids() == ["evals/one.yaml::one"]
    stored = pytester.path / ".pytest_cache/v/evalcases/parsed"
    assert str(case) in stored.read_text()
    assert ids() == ["evals/one.yaml::one"]  # served from the cache

    case.write_text(CASE.format(id="renamed"))
    assert ids() == ["evals/one.yaml::renamed"]

    case.write_text(CASE.format(id="renamed").replace("checks:", "chekcs:"))
    result = pytester.runpytest("-q")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*unknown field 'chekcs'; did you mean 'checks'?*"])


def test_a_link_back_up_below_evals_is_not_walked(pytester: pytest.Pytester) -> None:
    # Walked, `ln -s . evals/again.yaml` collected every case again, one level deeper
    # each time, until the path was too long: an error that interrupted the session;
    # with a second such link the walk doubled at every level and never ended.
    write_case(pytester, "evals/one.yaml", "one")
    (pytester.path / "evals" / "again.yaml").symlink_to(".")
    (pytester.path / "evals" / "up").symlink_to("..")

    result = pytester.runpytest_subprocess(
        "--collect-only", "-q", "-p", "no:cacheprovider", timeout=60
    )

    assert [line for line in result.stdout.lines if "::" in line] == ["evals/one.yaml::one"]
    assert result.ret == 0


def test_plugin_import_leaves_pydantic_and_yaml_for_case_files() -> None:
    # Every pytest run imports the plugin; only runs that load case files pay for them.
    code = (
        "import sys, pytest_evalcases.plugin.hooks; "
        "print(sorted(m for m in ('pydantic', 'yaml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


LOADED_PROBE = """
import sys


def pytest_collection_finish(session):
    heavy = ("pydantic", "yaml", "pytest_evalcases.cases.loading")
    print("loaded at collection:", sorted(m for m in heavy if m in sys.modules))
"""


@pytest.mark.slow
def test_unchanged_case_files_are_collected_without_loading_them(
    pytester: pytest.Pytester,
) -> None:
    # A subprocess: in-process runs share this process's modules, pydantic included.
    pytester.makeconftest(LOADED_PROBE)
    write_case(pytester, "evals/one.yaml", "one")
    answer = pytester.path / "out/.evalcases/output.txt"
    answer.parent.mkdir(parents=True)
    answer.write_text("done\n")

    first = pytester.runpytest_subprocess("--collect-only", "-q")
    first.stdout.fnmatch_lines(["loaded at collection: *pydantic*"])

    # Served from the parse cache's index: neither parser nor validator is imported to
    # collect, and the case is loaded (and validated) when its item runs.
    second = pytester.runpytest_subprocess("--eval-workspace", "out")
    second.stdout.fnmatch_lines(["loaded at collection: []"])
    second.assert_outcomes(passed=1)

    answer.write_text("not yet\n")
    third = pytester.runpytest_subprocess("--eval-workspace", "out")
    third.assert_outcomes(failed=1)
    third.stdout.fnmatch_lines(["*FAILED output_matches-0 *'done'*"])


def test_a_case_file_broken_after_collection_errors_when_its_item_runs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest(
        """
        import os
        from pathlib import Path


        def pytest_collection_finish(session):
            if os.environ.get("BREAK_CASE"):
                Path("evals/one.yaml").write_text(
                    Path("evals/one.yaml").read_text().replace("prompt:", "promt:")
                )
        """
    )
    write_case(pytester, "evals/one.yaml", "one")
    (pytester.path / "out").mkdir()
    pytester.runpytest("--collect-only", "-q")  # the cache now holds the file's index

    monkeypatch.setenv("BREAK_CASE", "1")
    result = pytester.runpytest("--eval-workspace", "out")

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*case file error: evals/one.yaml:3: promt: unknown field 'promt'*"]
    )
    (saved,) = (pytester.path / "evals/results").glob("*.json")
    (case,) = json.loads(saved.read_text())["cases"]
    assert (case["id"], case["outcome"], case["error_kind"]) == ("one", "error", "case-file")


def test_a_cached_file_whose_fixture_is_gone_fails_at_collection(
    pytester: pytest.Pytester,
) -> None:
    write_case(pytester, "evals/one.yaml", "one")
    case = pytester.path / "evals/one.yaml"
    case.write_text(case.read_text() + "cwd: fixtures/repo\n")
    (pytester.path / "evals/fixtures/repo").mkdir(parents=True)
    assert pytester.runpytest("--collect-only", "-q").ret == 0

    (pytester.path / "evals/fixtures/repo").rmdir()
    result = pytester.runpytest("--collect-only", "-q")

    result.stdout.fnmatch_lines(["*one.yaml::one.yaml*"])
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*cwd: fixture directory 'fixtures/repo' not found*"])


def test_a_file_of_plugin_check_types_fails_at_collection_once_the_plugin_is_gone(
    pytester: pytest.Pytester,
) -> None:
    conftest = pytester.makeconftest(
        """
        from typing import Literal

        from pytest_evalcases.run.checks import Outcome
        from pytest_evalcases.cases.schema import CheckModel


        class Always(CheckModel):
            type: Literal["always"]


        def pytest_evalcases_register_checks(registry):
            registry.register(Always, lambda check, ctx: Outcome(True, "always"))
        """
    )
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals/one.yaml").write_text(
        "id: one\ndefends: AGENTS.md\nchecks:\n  - type: always\n"
    )
    assert pytester.runpytest("--collect-only", "-q").ret == 0

    conftest.unlink()
    result = pytester.runpytest("--collect-only", "-q")

    result.stdout.fnmatch_lines(["*one.yaml::one.yaml*"])
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*checks[[]0[]].type: unknown check type 'always'*"])


@pytest.mark.skipif(
    not getattr(yaml, "__with_libyaml__", False), reason="PyYAML is built without libyaml"
)
def test_case_files_are_read_with_the_libyaml_loader() -> None:
    from pytest_evalcases.cases import parsing

    assert issubclass(parsing.Loader, yaml.CSafeLoader)


#: The whole-number settings, plain integers in native TOML as in an INI file.
WHOLE = "eval_concurrency = 4\neval_loop_threshold = 6\neval_perturb_n = 3\neval_perturb_seed = 7\n"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\neval_timeout = 300\neval_min_pass_rate = 0.5\n" + WHOLE),
        pytest.param(
            "pytest.toml",
            "[pytest]\neval_timeout = 300\neval_min_pass_rate = 0.5\n" + WHOLE,
            marks=pytest.mark.skipif(
                pytest.version_tuple < (9, 2), reason="TOML numbers need pytest 9.2"
            ),
        ),
    ],
)
def test_numeric_ini_options_in_ini_and_native_toml(
    pytester: pytest.Pytester, name: str, text: str
) -> None:
    write_case(pytester, "evals/one.yaml", "one")
    (pytester.path / name).write_text(text)
    assert collected(pytester) == ["evals/one.yaml::one"]

    (pytester.path / name).write_text(text.replace("300", '"soon"' if "toml" in name else "soon"))
    result = pytester.runpytest("--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: ini option eval_timeout expects a number, got 'soon'"])


def test_data_files_below_evals_are_not_case_files(pytester: pytest.Pytester) -> None:
    """A plain ``pytest`` with no agent beside ``tests/evals/golden.json`` stays green:
    a file below ``evals`` whose top level is not a mapping with checks, prompt, defends
    or cases is data, not collected (docs/case-format.md, "Which files are cases")."""
    data = {
        "tests/evals/golden.json": json.dumps([{"prompt": "hi", "expected": "hello"}]),
        "tests/evals/expected.yaml": "answer: 42\nnotes: [a, b]\n",
        "tests/evals/empty.yml": "",
        "tests/evals/big.json": json.dumps([{"prompt": "q" * 100}] * 20_000),
    }
    for rel, text in data.items():
        (pytester.path / rel).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / rel).write_text(text)
    pytester.makepyfile(**{"tests/test_unit": "def test_unit():\n    pass\n"})

    for _ in range(2):  # the second from the parse cache
        result = pytester.runpytest()

        result.assert_outcomes(passed=1)
        assert result.ret == 0
        assert "case file" not in result.stdout.str()

    # One that names a case key, or does not parse, is a case file.
    write_case(pytester, "tests/evals/real.yaml", "real")
    (pytester.path / "tests/evals/torn.json").write_text('{"answer": ')

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, skipped=1, errors=1)
    assert "case file error: tests/evals/torn.json:1: invalid JSON" in result.stdout.str()


def test_evalcases_lint_lists_a_data_file_as_not_a_case_file(pytester: pytest.Pytester) -> None:
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals/golden.json").write_text('[{"prompt": "hi"}]')
    write_case(pytester, "evals/one.yaml", "one")

    out = subprocess.run(
        [sys.executable, "-m", "pytest_evalcases.cli.main", "lint", "evals"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        check=False,
    )

    assert "evals/golden.json: NOTE not-a-case-file: not a case file" in out.stdout
    assert "1 case file checked" in out.stderr
    assert "1 file not a case file" in out.stderr


def test_a_rootdir_named_evals_collects_its_case_files(pytester: pytest.Pytester) -> None:
    """A ``pytest.ini`` inside ``evals/`` makes it the rootdir: its case files are still
    below a directory named evals (0 were collected, with no hint)."""
    write_case(pytester, "evals/one.yaml", "one")
    write_case(pytester, "evals/sub/two.yaml", "two")
    (pytester.path / "evals/pytest.ini").write_text("[pytest]\n")

    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", "evals")

    assert sorted(line for line in result.stdout.lines if "::" in line) == [
        "one.yaml::one",
        "sub/two.yaml::two",
    ]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_junit_class_names_read_as_the_case_file(
    pytester: pytest.Pytester, xdist: list[str]
) -> None:
    """``evals/toggles.yaml`` made class ``yaml`` of package ``evals.toggles`` in
    Jenkins and GitLab; it is class ``toggles`` of ``evals`` now."""
    write_case(pytester, "evals/toggles.yaml", "toggles")
    write_case(pytester, "evals/git/commit.yml", "commit")
    (pytester.path / "evals/broken.yaml").write_text("prompt: [\n")
    task = pytester.path / "tasks/01-service"
    task.mkdir(parents=True)
    (task / "checks.yaml").write_text(
        "task: Service\nchecks:\n  - id: exists\n    type: file_exists\n    path: a.py\n"
    )
    pytester.makepyfile(**{"tests/test_unit": "def test_unit():\n    pass\n"})

    pytester.runpytest("--junitxml=out/junit.xml", "-p", "no:cacheprovider", *xdist)

    root = ElementTree.parse(pytester.path / "out/junit.xml").getroot()
    names = sorted((c.get("classname"), c.get("name")) for c in root.iter("testcase"))
    assert names == [
        ("evals.broken", "broken.yaml"),
        ("evals.git.commit", "commit"),
        ("evals.toggles", "toggles"),
        ("tasks.01-service", "01-service"),
        ("tests.test_unit", "test_unit"),
    ]
