"""``evalcases lint`` and ``pytest --eval-lint``: each anti-pattern is found, with its
file and line, and only errors fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_evalcases import cli
from pytest_evalcases.authoring import lint

RULE = textwrap.dedent(
    """\
    # Git attribution

    Never add a Co-authored-by trailer or any mention of an AI tool to a commit message,
    a pull request description or a code comment.
    """
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A rootdir with a rule file and an empty evals directory; the cwd."""
    write(tmp_path / "pytest.ini", "[pytest]\n")
    write(tmp_path / "rules" / "git-attribution.md", RULE)
    write(tmp_path / "skills" / "release" / "SKILL.md", "# Release\n\nTag, then push.\n")
    (tmp_path / "evals").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


GOOD = """\
id: {id}
defends: rules/git-attribution.md
prompt: {prompt}
checks:
  - type: output_not_matches
    pattern: "(?i)co-authored-by"
  - type: output_matches
    pattern: "(?i)commit"
"""


def run_lint(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    status = cli.main(["lint", *args])
    out = capsys.readouterr().out
    return status, [line for line in out.splitlines() if line]


def codes(lines: list[str]) -> list[str]:
    return [line.split(": ", 2)[1] for line in lines]


def test_clean_case_has_no_case_finding(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "evals" / "commit-msg.yaml", GOOD.format(id="commit-msg", prompt="Commit it."))

    status, lines = run_lint(capsys)

    assert status == 0
    assert codes(lines) == ["WARNING suite-size"]
    assert lines[0].startswith("evals: WARNING suite-size: the suite has 1 case;")


def test_load_error_names_file_line_and_field(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        project / "evals" / "broken.yaml",
        """\
        id: broken
        defends: rules/git-attribution.md
        prompt: Commit it.
        checks:
          - type: output_not_matches
            pattern: "(unclosed"
        """,
    )

    status, lines = run_lint(capsys, "evals/broken.yaml")

    assert status == 1
    assert len(lines) == 1
    assert lines[0].startswith("evals/broken.yaml:6: ERROR load-error: checks[0].pattern: ")
    assert "invalid regular expression" in lines[0]


@pytest.mark.parametrize(
    ("check", "effect"),
    [
        ('type: output_matches\n    pattern: "fix:|"', "always passes"),
        ('type: file_matches\n    path: a.txt\n    pattern: "x*"', "always passes"),
        ('type: file_contains\n    file: a.txt\n    pattern: "^"', "always passes"),
        ('type: output_not_matches\n    pattern: "(?i)(trailer)?"', "can never pass"),
        ('type: file_not_matches\n    path: a.txt\n    pattern: "(?!.)"', "can never pass"),
    ],
)
def test_pattern_matching_any_text_is_an_error(
    project: Path, capsys: pytest.CaptureFixture[str], check: str, effect: str
) -> None:
    write(
        project / "evals" / "vacuous.yaml",
        f"id: vacuous\ndefends: rules/git-attribution.md\nprompt: Commit it.\n"
        f"checks:\n  - type: output_not_matches\n    pattern: trailer\n"
        f"  - type: output_matches\n    pattern: commit\n  - {check}\n",
    )

    status, lines = run_lint(capsys, "evals/vacuous.yaml")

    assert status == 1
    assert codes(lines) == ["ERROR vacuous-pattern"]
    assert lines[0].startswith("evals/vacuous.yaml:")
    assert int(lines[0].split(":")[1]) >= 8  # the line of the second check's pattern
    assert effect in lines[0]


@pytest.mark.parametrize("pattern", [r"^\s*$", r"\A\Z", "^$", "(?i)co-authored-by"])
def test_patterns_that_do_not_match_every_text_are_fine(pattern: str) -> None:
    assert not lint._vacuous(pattern)


def test_missing_defends_is_a_warning_and_a_skill_directory_is_fine(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        project / "evals" / "two.yaml",
        """\
        cases:
          - id: missing
            defends: rules/nope.md
            prompt: Commit it.
            checks:
              - {type: output_matches, pattern: x}
          - id: skill
            defends: skills/release
            bare: false
            prompt: Cut a release.
            checks:
              - {type: output_matches, pattern: x}
        """,
    )

    status, lines = run_lint(capsys, "evals/two.yaml")

    # docs/writing-cases.md lists it among the warnings: the case still runs, it guards nothing.
    assert status == 0
    assert lines == [
        "evals/two.yaml:3: WARNING missing-defends: defends 'rules/nope.md', which does not "
        f"exist (relative to {project.resolve()})"
    ]


def test_root_option_changes_where_defends_resolves(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "config" / "AGENTS.md", "Be brief.\n")
    write(
        project / "evals" / "agents-md.yaml",
        "id: agents-md\ndefends: AGENTS.md\nprompt: Hi.\nchecks:\n"
        "  - {type: output_matches, pattern: x}\n",
    )

    assert codes(run_lint(capsys, "evals/agents-md.yaml")[1]) == ["WARNING missing-defends"]
    assert run_lint(capsys, "evals/agents-md.yaml", "--root", "config") == (0, [])


def test_prompt_quoting_the_rule_is_a_warning(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = (
        "Commit the fix. Remember: never add a co-authored-by trailer, or any mention of an "
        "AI tool to a commit message."
    )
    write(project / "evals" / "quotes.yaml", GOOD.format(id="quotes", prompt=json.dumps(prompt)))

    status, lines = run_lint(capsys, "evals/quotes.yaml")

    assert status == 0
    assert codes(lines) == ["WARNING prompt-quotes-rule"]
    assert lines[0].startswith("evals/quotes.yaml:3: ")
    assert (
        "'never add a co authored by trailer or any mention of an ai tool to a commit" in (lines[0])
    )


def test_a_paraphrase_quoting_the_rule_is_a_warning_at_its_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quoting = "Commit it, and never add a co-authored-by trailer, or any mention of an AI tool."
    text = GOOD.format(id="quotes", prompt="Commit the fix.").replace(
        "checks:", f"paraphrases:\n  - Please commit the fix.\n  - {json.dumps(quoting)}\nchecks:"
    )
    write(project / "evals" / "quotes.yaml", text)

    status, lines = run_lint(capsys, "evals/quotes.yaml")

    assert status == 0
    assert codes(lines) == ["WARNING prompt-quotes-rule"]
    assert lines[0].startswith("evals/quotes.yaml:6: ")
    assert "paraphrase 2 quotes rules/git-attribution.md" in lines[0]


def test_prohibition_with_only_positive_checks_is_a_warning(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        project / "evals" / "positive-only.yaml",
        """\
        id: positive-only
        defends: rules/git-attribution.md
        prompt: Commit the staged change.
        checks:
          - type: command_succeeds
            command: git log -1
        """,
    )
    write(
        project / "evals" / "skill-positive.yaml",
        """\
        id: skill-positive
        defends: skills/release
        bare: false
        prompt: Cut a release.
        checks:
          - type: command_succeeds
            command: git tag
        """,
    )

    status, lines = run_lint(capsys, "evals/positive-only.yaml", "evals/skill-positive.yaml")

    assert status == 0
    assert codes(lines) == ["WARNING no-negative-check"]
    assert lines[0].startswith("evals/positive-only.yaml:4: ")
    assert "'Never'" in lines[0]


def test_a_case_whose_every_check_is_negative_is_a_warning(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checks = [
        "{type: output_not_matches, pattern: trailer}",
        "{type: file_absent, path: .env}",
        "{type: file_not_matches, path: a.txt, pattern: trailer}",
        "{type: file_not_contains, file: a.txt, pattern: trailer}",
        "{type: file_unchanged, path: a.txt}",
        "{type: command_fails, command: git log}",
        "{type: tool_not_called, tool: Bash}",
    ]
    listed = "".join(f"\n  - {check}" for check in checks)
    head = "defends: rules/git-attribution.md\nprompt: {}\nchecks:"
    write(project / "evals" / "negative.yaml", "id: negative\n" + head.format("Go.") + listed)
    write(
        project / "evals" / "mixed.yaml",
        "id: mixed\n"
        + head.format("Commit.")
        + listed
        + "\n  - {type: output_matches, pattern: ok}",
    )

    status, lines = run_lint(capsys, "evals/negative.yaml", "evals/mixed.yaml")

    assert status == 0
    assert lines == [
        "evals/negative.yaml:4: WARNING only-negative-checks: every check is negative: an agent "
        "that does nothing (says nothing, changes no file) passes them all; add a check that "
        "the task was done"
    ]


@pytest.mark.parametrize(
    "defends",
    [
        "hooks/pre-commit.sh",
        ".claude/hooks",
        "./.claude/hooks/guard.py",
        "skills/release",
        ".claude/skills/release/",
        ".codex/skills/release/SKILL.md",
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".gemini/settings.json",
        ".codex/config.toml",
        ".mcp.json",
    ],
)
def test_a_bare_case_defending_what_bare_runs_skip_is_a_warning(
    project: Path, capsys: pytest.CaptureFixture[str], defends: str
) -> None:
    if not (project / defends).exists():
        write(project / defends.rstrip("/"), "{}\n")
    for name, bare in (
        ("default", ""),
        ("explicit", "bare: true\n"),
        ("not-bare", "bare: false\n"),
    ):
        case = GOOD.format(id=name, prompt=f"Commit {name}.").replace(
            "defends: rules/git-attribution.md", f"defends: {defends}\n{bare}".rstrip("\n")
        )
        write(project / "evals" / f"{name}.yaml", case)

    status, lines = run_lint(
        capsys, *(f"evals/{n}.yaml" for n in ("default", "explicit", "not-bare"))
    )

    # docs/writing-cases.md lists it among the warnings.
    assert status == 0
    assert sorted(lines) == [
        f"evals/{name}.yaml:2: WARNING bare-defends-discovery: defends {defends!r}, which a "
        "bare run (`bare: true`, the default) does not load: no hooks, skills or settings "
        "are discovered; write `bare: false`"
        for name in ("default", "explicit")
    ]


def test_a_bare_case_defending_instructions_is_fine(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files: list[str] = []
    for defends in ("CLAUDE.md", ".claude/rules/style.md", "docs/hooks/guide.md", "my-skills.md"):
        write(project / defends, "Be brief.\n")
        name = defends.lower().replace("/", "-").replace(".", "-").strip("-")
        case = GOOD.format(id=name, prompt=f"Do {name}.").replace(
            "defends: rules/git-attribution.md", f"defends: {defends}"
        )
        write(project / "evals" / f"{name}.yaml", case)
        files.append(f"evals/{name}.yaml")

    assert run_lint(capsys, *files) == (0, [])


def test_id_differing_from_stem_and_duplicate_prompts_are_warnings(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "evals" / "a.yaml", GOOD.format(id="not-a", prompt="Commit it."))
    write(
        project / "evals" / "b.json",
        json.dumps(
            {
                "id": "b",
                "defends": "rules/git-attribution.md",
                "prompt": "commit   IT.",
                "checks": [
                    {"type": "output_not_matches", "pattern": "x"},
                    {"type": "output_matches", "pattern": "y"},
                ],
            },
            indent=2,
        ),
    )

    status, lines = run_lint(capsys, "evals/a.yaml", "evals/b.json")

    assert status == 0
    assert sorted(codes(lines)) == ["WARNING duplicate-prompt", "WARNING id-not-stem"]
    by_code = {line.split(": ")[1]: line for line in lines}
    assert by_code["WARNING id-not-stem"].startswith("evals/a.yaml:1: ")
    assert by_code["WARNING duplicate-prompt"].startswith("evals/b.json:4: ")
    assert "'not-a' (evals/a.yaml:3)" in by_code["WARNING duplicate-prompt"]


def test_suite_size_bounds(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        {
            "id": f"case-{i}",
            "defends": "rules/git-attribution.md",
            "prompt": f"Task number {i}.",
            "checks": [
                {"type": "output_not_matches", "pattern": "x"},
                {"type": "output_matches", "pattern": "y"},
            ],
        }
        for i in range(51)
    ]
    write(project / "evals" / "many.json", json.dumps({"cases": cases[:20]}))
    assert run_lint(capsys) == (0, [])

    write(project / "evals" / "many.json", json.dumps({"cases": cases}))
    status, lines = run_lint(capsys)
    assert status == 0
    assert codes(lines) == ["WARNING suite-size"]
    assert "51 cases; more than 50" in lines[0]


def test_discovery_skips_fixtures_results_and_templates(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("fixtures/repo/config.yaml", "results/run.json", "_template.yaml", ".hidden.yml"):
        write(project / "evals" / name, "not: a case\n")
    write(project / "other" / "notes.yaml", "not: a case\n")
    write(project / "evals" / "ok.yaml", GOOD.format(id="ok", prompt="Commit it."))

    files = lint.discover([project])

    assert [f.path.name for f in files] == ["ok.yaml"]
    assert files[0].evals_root == (project / "evals").resolve()


def test_task_directory_is_linted(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(
        project / "tasks" / "01-svc" / "checks.yaml",
        """\
        task: Service is a class
        defends: rules/missing.md
        checks:
          - id: has-class
            type: file_contains
            file: src/svc.py
            pattern: ".*"
        """,
    )
    write(project / "tasks" / "01-svc" / "task.md", "Make the service a class.\n")

    status, lines = run_lint(capsys, "tasks")

    assert status == 1
    assert sorted(codes(lines)) == [
        "ERROR vacuous-pattern",
        "WARNING missing-defends",
        "WARNING suite-size",
    ]
    assert any(line.startswith("tasks/01-svc/checks.yaml:7: ERROR vacuous") for line in lines)


#: A prompt that quotes RULE: wherever the lint reads RULE, it warns prompt-quotes-rule.
QUOTING = "Never add a Co-authored-by trailer or any mention of an AI tool, please."


def lint_command(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``evalcases lint`` in a process of its own: a lint that blocks fails on the
    timeout instead of hanging the suite."""
    return subprocess.run(
        [sys.executable, "-m", "pytest_evalcases.cli.main", "lint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_defends_outside_the_project_is_an_error_and_is_not_read(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = project.parent / "outside"
    write(outside / "rule.md", RULE)
    (project / "rules" / "linked.md").symlink_to(outside / "rule.md")
    up = "/".join([".."] * len(project.parts))  # from the project up to /, and no further
    defends = ["../outside/rule.md", str(outside / "rule.md"), "rules/linked.md", up]
    for index, target in enumerate(defends):
        write(
            project / "evals" / f"out-{index}.yaml",
            GOOD.format(id=f"out-{index}", prompt=json.dumps(f"{QUOTING} ({index})")).replace(
                "rules/git-attribution.md", json.dumps(target)
            ),
        )

    status, lines = run_lint(capsys, *(f"evals/out-{i}.yaml" for i in range(len(defends))))

    # Read, each would also be a prompt-quotes-rule warning (and / took 12 s, then crashed).
    assert status == 1
    assert codes(lines) == ["ERROR defends-outside"] * len(defends)
    assert lines[0] == (
        "evals/out-0.yaml:2: ERROR defends-outside: defends '../outside/rule.md', which "
        f"resolves to {outside / 'rule.md'}, outside the project ({project}); the lint reads "
        "nothing there"
    )
    assert f"which resolves to /, outside the project ({project})" in lines[3]


@pytest.mark.slow
def test_a_defended_directory_is_read_only_in_its_regular_files_below_the_project(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skill = project / "guides" / "commit"
    write(skill / "SKILL.md", "# Commit\n\nKeep the subject short.\n")
    write(project.parent / "outside" / "rule.md", RULE)
    (skill / "linked.md").symlink_to(project.parent / "outside" / "rule.md")
    (skill / "dangling.md").symlink_to(skill / "gone.md")
    os.mkfifo(skill / "pipe.md")  # read, it would block the lint for ever
    write(
        project / "evals" / "commit.yaml",
        GOOD.format(id="commit", prompt=json.dumps(QUOTING)).replace(
            "rules/git-attribution.md", "guides/commit"
        ),
    )

    result = lint_command(project, "evals/commit.yaml")

    assert (result.returncode, result.stdout) == (0, "")
    (skill / "linked.md").unlink()
    write(skill / "linked.md", RULE)  # the same text, now in the project: read
    assert "WARNING prompt-quotes-rule" in lint_command(project, "evals/commit.yaml").stdout


def test_case_files_that_are_not_regular_files_are_load_errors(project: Path) -> None:
    evals = project / "evals"
    write(evals / "good.yaml", GOOD.format(id="good", prompt="Commit it."))
    os.mkfifo(evals / "fifo.yaml")
    (evals / "dangling.yaml").symlink_to("nowhere.yaml")
    (evals / "loop.yaml").symlink_to("loop.yaml")
    (evals / "null.yaml").symlink_to(os.devnull)
    (evals / "etc").symlink_to("/etc")  # a link to a directory is not walked

    result = lint_command(project, "evals")

    assert result.returncode == 1
    assert result.stdout.splitlines()[1:] == [
        "evals/dangling.yaml:1: ERROR load-error: a symbolic link to 'nowhere.yaml', which "
        "does not exist",
        "evals/fifo.yaml:1: ERROR load-error: not a regular file but a named pipe (FIFO); a "
        "case file must be a regular file (this one was not opened)",
        "evals/loop.yaml:1: ERROR load-error: a symbolic link that loops: it never reaches a file",
        "evals/null.yaml:1: ERROR load-error: not a regular file but a character device "
        f"(through the symbolic link to {os.devnull!r}); a case file must be a regular file "
        "(this one was not opened)",
    ]
    assert result.stderr.strip().endswith("5 case files checked: 4 errors, 1 warning")


def test_missing_path_argument(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["lint", "nowhere"]) == 2
    assert "no such file or directory: nowhere" in capsys.readouterr().err


# --- pytest --eval-lint ---------------------------------------------------------------


def test_eval_lint_option_reports_findings_and_fails_on_errors(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    write(pytester.path / "rules" / "git-attribution.md", RULE)
    write(pytester.path / "evals" / "good.yaml", GOOD.format(id="good", prompt="Commit it."))
    write(
        pytester.path / "evals" / "stale.yaml",
        GOOD.format(id="stale", prompt="Push it.").replace(
            "rules/git-attribution.md", "rules/gone.md"
        ),
    )
    write(
        pytester.path / "evals" / "vacuous.yaml",
        GOOD.format(id="vacuous", prompt="Tag it.").replace("(?i)co-authored-by", "x*"),
    )
    write(pytester.path / "test_unit.py", "def test_ok():\n    pass\n")

    result = pytester.runpytest("--eval-lint", "-p", "no:cacheprovider", "-rA")

    out = result.stdout.str()
    assert "eval lint" in out
    assert "evals/stale.yaml:2: WARNING missing-defends: defends 'rules/gone.md'" in out
    assert "evals/vacuous.yaml:6: ERROR vacuous-pattern: checks[0].pattern 'x*'" in out
    assert "evals: WARNING suite-size: the suite has 3 cases" in out
    # the lint item fails; the cases are skipped for want of an agent; unit tests run
    result.assert_outcomes(passed=1, failed=1, skipped=3)
    assert result.ret == 1


def test_eval_lint_passes_with_warnings_only(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    write(pytester.path / "rules" / "git-attribution.md", RULE)
    write(pytester.path / "evals" / "good.yaml", GOOD.format(id="good", prompt="Commit it."))

    result = pytester.runpytest("--eval-lint", "-p", "no:cacheprovider", "-k", "nothing")
    out = result.stdout.str()
    assert "evals: WARNING suite-size: the suite has 1 case" in out
    result.assert_outcomes(passed=1)
    assert result.ret == 0


def test_without_the_option_no_lint_item(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    write(pytester.path / "evals" / "stale.yaml", GOOD.format(id="stale", prompt="Push it."))

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(skipped=1)
    assert "eval lint" not in result.stdout.str()


#: Native TOML configuration (pytest.toml, [tool.pytest]) came with pytest 9.
PYTEST_9 = pytest.mark.skipif(pytest.version_tuple < (9,), reason="needs pytest 9")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\neval_config_root = agentcfg\n"),
        (".pytest.ini", "[pytest]\neval_config_root = agentcfg\n"),
        pytest.param("pytest.toml", '[pytest]\neval_config_root = "agentcfg"\n', marks=PYTEST_9),
        ("pyproject.toml", '[tool.pytest.ini_options]\neval_config_root = "agentcfg"\n'),
        pytest.param(
            "pyproject.toml", '[tool.pytest]\neval_config_root = "agentcfg"\n', marks=PYTEST_9
        ),
        ("tox.ini", "[pytest]\neval_config_root = agentcfg\n"),
        ("setup.cfg", "[tool:pytest]\neval_config_root = agentcfg\n"),
    ],
)
def test_lint_reads_eval_config_root_wherever_pytest_does(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    (pytester.path / name).write_text(text)
    write(pytester.path / "agentcfg" / "rules" / "git-attribution.md", RULE)
    write(pytester.path / "evals" / "good.yaml", GOOD.format(id="good", prompt="Commit it."))

    status, lines = run_lint(capsys, "evals")
    assert (status, codes(lines)) == (0, ["WARNING suite-size"])

    # pytest --eval-lint, which asks pytest for the ini value, agrees.
    result = pytester.runpytest("--eval-lint", "-p", "no:cacheprovider")
    assert "missing-defends" not in result.stdout.str()
    result.assert_outcomes(passed=1, skipped=1)


def test_each_case_file_resolves_defends_in_its_own_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two projects linted in one command: each file's `defends` starts at its own rootdir.
    for name in ("api", "web"):
        write(tmp_path / name / "pytest.ini", "[pytest]\n")
        write(tmp_path / name / "rules" / f"{name}.md", "Keep it small.\n")
        write(
            tmp_path / name / "evals" / f"{name}-rule.yaml",
            GOOD.format(id=f"{name}-rule", prompt=f"Change {name}.").replace(
                "rules/git-attribution.md", f"rules/{name}.md"
            ),
        )
    monkeypatch.chdir(tmp_path)

    status, lines = run_lint(capsys, "api", "web")
    assert (status, codes(lines)) == (0, ["WARNING suite-size"] * 2)
    # One --root for every file: the other project's rule is not found.
    lines = run_lint(capsys, "api", "web", "--root", "api")[1]
    assert sorted(codes(lines)) == ["WARNING missing-defends", *["WARNING suite-size"] * 2]
    assert any(line.startswith("web/evals/web-rule.yaml:2: WARNING missing") for line in lines)


@pytest.mark.parametrize(
    ("ini", "cwd", "arg", "root"),
    [
        # No configuration file: pytest's rootdir is where it was started (for the
        # lint it was the case file's own directory, suite/evals, without AGENTS.md).
        (None, ".", "suite", "."),
        (None, "suite", ".", "suite"),
        # A configuration file roots both where it is.
        ("suite/pytest.ini", ".", "suite", "suite"),
        ("pytest.ini", "suite", ".", "."),
    ],
)
def test_lint_resolves_defends_where_pytest_has_its_rootdir(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    ini: str | None,
    cwd: str,
    arg: str,
    root: str,
) -> None:
    write(pytester.path / "AGENTS.md", "Answer in English.\n")
    case = GOOD.format(id="lang", prompt="Hi.").replace("rules/git-attribution.md", "AGENTS.md")
    write(pytester.path / "suite" / "evals" / "lang.yaml", case)
    if ini is not None:
        write(pytester.path / ini, "[pytest]\n")
    monkeypatch.chdir(pytester.path / cwd)

    lines = [line for line in run_lint(capsys, arg)[1] if "suite-size" not in line]
    result = pytester.runpytest(arg, "--eval-lint", "-p", "no:cacheprovider")

    rootdir = (pytester.path / root).resolve()
    assert f"rootdir: {rootdir}" in result.stdout.str()
    result.assert_outcomes(passed=1, skipped=1)
    if root == ".":  # AGENTS.md is found there
        assert lines == []
        assert "missing-defends" not in result.stdout.str()
    else:
        missing = (
            f"{'suite/' if arg == 'suite' else ''}evals/lang.yaml:2: WARNING missing-defends: "
            f"defends 'AGENTS.md', which does not exist (relative to {rootdir})"
        )
        assert lines == [missing]
        # pytest --eval-lint, which asks pytest for its rootdir, says the same.
        assert missing in result.stdout.str()


def test_a_directory_of_several_projects_is_no_one_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two projects of one case each below one directory, as example_cases/ holds them.
    monkeypatch.chdir(tmp_path)
    for name in ("one", "two"):
        write(tmp_path / "examples" / name / "pytest.ini", "[pytest]\n")
        write(tmp_path / "examples" / name / "rules" / "git-attribution.md", RULE)
        case = {
            "id": "attribution",
            "defends": "rules/git-attribution.md",
            "prompt": f"Commit the {name} change.",
            "checks": [
                {"type": "output_not_matches", "pattern": "Co-authored-by"},
                {"type": "command_succeeds", "command": "git log -1"},
            ],
        }
        write(tmp_path / "examples" / name / "evals" / "attribution.json", json.dumps(case))

    assert run_lint(capsys, "examples") == (0, [])
    # Each project on its own is one suite, and a small one.
    status, lines = run_lint(capsys, "examples/one")
    assert (status, codes(lines)) == (0, ["WARNING suite-size"])
