"""``--eval-changed[=REF]`` against real git repositories: committed, staged, unstaged
and untracked changes select the cases that defend them."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from pytest_evalcases.errors import UsageError
from pytest_evalcases.session.changed import ChangedFiles, changed_files
from tests.helpers.git import git


def case(case_id: str, defends: str, cwd: str | None = None) -> str:
    return textwrap.dedent(
        f"""\
        id: {case_id}
        defends: {defends}
        {f"cwd: {cwd}" if cwd else ""}
        prompt: Do the {case_id} task.
        checks:
          - type: output_not_matches
            pattern: forbidden
        """
    )


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def make_repo(root: Path, branch: str = "main") -> None:
    """A repository on ``branch`` with a rule file, a skill and four cases; then a
    feature branch."""
    write(root / "pytest.ini", "[pytest]\n")
    write(root / "rules" / "attribution.md", "Never add an AI trailer.\n")
    write(root / "rules" / "style.md", "Prefer small functions.\n")
    write(root / "skills" / "deploy" / "SKILL.md", "# Deploy\n")
    write(root / "skills" / "deploy" / "run.sh", "echo deploy\n")
    write(root / "AGENTS.md", "See rules/.\n")
    write(root / "evals" / "attribution.yaml", case("attribution", "rules/attribution.md"))
    write(root / "evals" / "style.yaml", case("style", "rules/style.md"))
    write(root / "evals" / "deploy.yaml", case("deploy", "skills/deploy"))
    write(root / "evals" / "agents.yaml", case("agents", "AGENTS.md"))
    write(root / "test_unit.py", "def test_unit():\n    pass\n")
    git(root, "init", "-q", "-b", branch)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial")
    git(root, "checkout", "-qb", "feature")


def selected(result: pytest.RunResult) -> list[str]:
    return sorted(
        line.split("::")[1].split()[0]
        for line in result.stdout.lines
        if line.startswith("evals/") and "::" in line
    )


def test_committed_change_in_skill_and_uncommitted_rule_change(pytester: pytest.Pytester) -> None:
    make_repo(pytester.path)
    write(pytester.path / "skills" / "deploy" / "run.sh", "echo deploy --safe\n")
    git(pytester.path, "commit", "-qam", "safer deploy")
    write(pytester.path / "rules" / "attribution.md", "Never add an AI trailer, nor a footer.\n")

    result = pytester.runpytest(
        "--eval-changed", "--collect-only", "-q", "-p", "no:cacheprovider", "-rN"
    )
    assert result.ret == 0, result.stdout.str()
    assert selected(result) == ["attribution", "deploy"]
    assert "test_unit.py::test_unit" in result.stdout.str()

    result = pytester.runpytest("--eval-changed", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert "evalcases: --eval-changed since main (merge base " in out
    assert "2 changed files: rules/attribution.md, skills/deploy/run.sh" in out
    assert (
        "evalcases: --eval-changed selects 2 of 4 cases "
        "(those whose case file, fixture or defended file changed)" in out
    )
    result.assert_outcomes(passed=1, skipped=2, deselected=2)


def test_staged_and_untracked_files_count(pytester: pytest.Pytester) -> None:
    make_repo(pytester.path)
    write(pytester.path / "rules" / "style.md", "Prefer small, pure functions.\n")
    git(pytester.path, "add", "rules/style.md")
    write(pytester.path / "skills" / "deploy" / "notes.md", "new file, untracked\n")

    result = pytester.runpytest("--eval-changed", "--collect-only", "-q", "-p", "no:cacheprovider")

    assert selected(result) == ["deploy", "style"]


@pytest.mark.xdist
def test_explicit_ref_and_xdist(pytester: pytest.Pytester) -> None:
    make_repo(pytester.path)
    write(pytester.path / "AGENTS.md", "See rules/ and skills/.\n")
    git(pytester.path, "commit", "-qam", "agents")
    write(pytester.path / "rules" / "style.md", "Prefer small, pure functions.\n")

    # since HEAD: only the uncommitted change
    result = pytester.runpytest(
        "--eval-changed=HEAD", "--collect-only", "-q", "-p", "no:cacheprovider"
    )
    assert selected(result) == ["style"]

    result = pytester.runpytest("--eval-changed=main", "-p", "no:cacheprovider", "-n", "2")
    result.assert_outcomes(passed=1, skipped=2)
    assert "2 changed files: AGENTS.md, rules/style.md" in result.stdout.str()


def test_changed_case_file_and_fixture_select_their_cases(pytester: pytest.Pytester) -> None:
    make_repo(pytester.path)
    write(pytester.path / "evals" / "fixtures" / "app" / "src" / "main.py", "print(1)\n")
    write(pytester.path / "evals" / "fixtures" / "web" / "index.html", "<p>hi</p>\n")
    write(pytester.path / "evals" / "app.yaml", case("app", "AGENTS.md", cwd="fixtures/app"))
    write(pytester.path / "evals" / "web.yaml", case("web", "AGENTS.md", cwd="fixtures/web"))
    task = pytester.path / "evals" / "tasks" / "fix-bug"
    write(
        task / "checks.yaml",
        "task: Fix the bug.\nchecks:\n  - id: quiet\n"
        "    type: output_not_matches\n    pattern: forbidden\n",
    )
    write(task / "task.md", "Fix the bug.\n")
    git(pytester.path, "add", "-A")
    git(pytester.path, "commit", "-qm", "fixtures")
    git(pytester.path, "branch", "-qf", "main")
    args = ("--eval-changed", "--collect-only", "-q", "-p", "no:cacheprovider")
    assert selected(pytester.runpytest(*args)) == []

    # a case file edited (committed since main), a file deep in a fixture (unstaged)
    write(pytester.path / "evals" / "style.yaml", case("style", "rules/style.md") + "tags: [x]\n")
    git(pytester.path, "commit", "-qam", "style case")
    write(pytester.path / "evals" / "fixtures" / "app" / "src" / "main.py", "print(2)\n")
    assert selected(pytester.runpytest(*args)) == ["app", "style"]

    # a new file in a fixture (untracked) and a task directory's task.md (staged)
    write(pytester.path / "evals" / "fixtures" / "web" / "new.css", "p {}\n")
    write(task / "task.md", "Fix the bug, quickly.\n")
    git(pytester.path, "add", str(task / "task.md"))
    result = pytester.runpytest("--eval-changed", "-p", "no:cacheprovider")
    assert "selects 4 of 7 cases" in result.stdout.str()
    result.assert_outcomes(passed=1, skipped=4, deselected=3)

    # the case files alone, through the parse cache's index (no file loaded to collect)
    pytester.runpytest("-p", "cacheprovider", "--collect-only", "-q")
    result = pytester.runpytest("--eval-changed", "--collect-only", "-q")
    assert selected(result) == ["app", "fix-bug", "style", "web"]


def test_results_files_never_count_as_changed(pytester: pytest.Pytester) -> None:
    make_repo(pytester.path)
    write(pytester.path / "evals" / "whole.yaml", case("whole", "."))
    write(
        pytester.path / "pytest.ini",
        f"[pytest]\neval_agent_command = {sys.executable} -c \"print('ok')\"\n",
    )
    git(pytester.path, "add", "-A")
    git(pytester.path, "commit", "-qm", "a case defending the whole repository")
    # An earlier run leaves its results file and HTML report behind, untracked.
    pytester.runpytest("-p", "no:cacheprovider", "--eval-html", "report.html")
    assert list((pytester.path / "evals" / "results").glob("*.json"))
    assert (pytester.path / "report.html").is_file()

    result = pytester.runpytest(
        "--eval-changed=HEAD",
        "--eval-html",
        "report.html",
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
    )

    assert "--eval-changed selects 0 of 5 cases" in result.stdout.str()
    assert selected(result) == []


def test_changed_case_file_outside_the_defends_root(pytester: pytest.Pytester) -> None:
    make_repo(pytester.path)
    pytester.makeini("[pytest]\neval_config_root = rules\n")
    write(pytester.path / "evals" / "style.yaml", case("style", "style.md") + "tags: [x]\n")

    result = pytester.runpytest("--eval-changed", "--collect-only", "-q", "-p", "no:cacheprovider")

    assert selected(result) == ["style"]


def test_default_branch_fallbacks(tmp_path: Path) -> None:
    make_repo(tmp_path, branch="master")
    write(tmp_path / "rules" / "style.md", "changed\n")
    git(tmp_path, "commit", "-qam", "style")

    found = changed_files(tmp_path, None)
    assert found.ref == "master"
    assert found.paths == ("rules/style.md",)

    # origin/HEAD wins over master when it exists
    git(tmp_path, "update-ref", "refs/remotes/origin/feature-base", "HEAD")
    git(tmp_path, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/feature-base")
    found = changed_files(tmp_path, None)
    assert found.ref == "origin/HEAD"
    assert found.paths == ()


def test_no_default_branch_falls_back_to_head(tmp_path: Path) -> None:
    make_repo(tmp_path, branch="trunk")
    write(tmp_path / "AGENTS.md", "edited\n")

    found = changed_files(tmp_path, None)

    assert (found.ref, found.paths) == ("HEAD", ("AGENTS.md",))


def test_paths_are_relative_to_the_defends_root(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path / "rules" / "style.md", "changed\n")

    found = changed_files(tmp_path / "evals", None, defends_root=tmp_path / "rules")

    assert found.paths == ("style.md",)


def test_selects_files_and_directory_prefixes() -> None:
    changed = ChangedFiles("main", "0" * 40, ("skills/deploy/run.sh", "AGENTS.md"))

    assert changed.selects("skills/deploy")
    assert changed.selects("skills/deploy/")
    assert changed.selects("AGENTS.md")
    assert not changed.selects("skills/dep")
    assert not changed.selects("rules/style.md")
    assert not changed.selects("")


def test_bad_ref_is_a_usage_error(pytester: pytest.Pytester) -> None:
    make_repo(pytester.path)

    result = pytester.runpytest("--eval-changed=no-such-branch", "-p", "no:cacheprovider")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "'no-such-branch' is not a commit of the git repository" in result.stderr.str()
    assert "Traceback" not in result.stderr.str()


def test_not_a_git_repository_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    write(pytester.path / "evals" / "a.yaml", case("a", "AGENTS.md"))

    result = pytester.runpytest("--eval-changed", "-p", "no:cacheprovider")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "is not in a git repository" in result.stderr.str()


def test_unit_level_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not in a git repository"):
        changed_files(tmp_path, None)
