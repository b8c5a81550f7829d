"""Configuration variants (docs/variants.md): ``--eval-config NAME=SOURCE`` with
directories, single files, the working tree (``.``) and git revisions, compared in the
summary ("Reading the comparison") with regressed/improved checks and the exact McNemar test.

A scripted agent obeys the ``AGENTS.md`` in its workspace: with "Prefer functions over
classes" it writes plain functions, otherwise a class with a ``_validate`` method. So
the A/B result is known exactly in advance.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_evalcases.errors import UsageError
from pytest_evalcases.run import variants
from tests.helpers.git import git
from tests.helpers.suite import SuiteBuilder, eval_configs

AGENT = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    prompt = sys.argv[1]
    rules = Path("AGENTS.md").read_text() if Path("AGENTS.md").exists() else ""
    name = prompt.split()[-1]
    out = Path("src") / (name + ".py")
    out.parent.mkdir(exist_ok=True)
    if "Prefer functions over classes" in rules:
        out.write_text("def handle(data):\\n    return data\\n")
    else:
        out.write_text(
            "class Service:\\n"
            "    def _validate(self, data):\\n        return bool(data)\\n"
        )
    # What this run saw, for the test to read: the workspace's files besides src/.
    seen = sorted(
        p.as_posix() for p in Path(".").rglob("*") if p.is_file() and "src" not in p.parts
    )
    log = Path(__file__).parent / "seen" / (
        os.environ["EVALCASES_VARIANT"] + "--" + os.environ["EVALCASES_CASE_ID"]
    )
    log.parent.mkdir(exist_ok=True)
    log.write_text(repr((rules, seen)))
    print("Wrote", out)
    """
)

SERVICES = ["users", "orders", "payments", "invoices", "refunds"]
CLASS_RULES = "Use class-based services with a _validate method.\n"
FUNCTION_RULES = "Prefer functions over classes for utility code.\n"


def service_case(name: str) -> str:
    return textwrap.dedent(
        f"""\
        id: {name}-service
        defends: AGENTS.md
        prompt: Write the service module {name}
        checks:
          - id: module-exists
            type: file_exists
            path: src/{name}.py
          - id: uses-class
            type: file_matches
            path: src/{name}.py
            pattern: "^class "
          - id: validates
            type: file_matches
            path: src/{name}.py
            pattern: "def _validate"
        """
    )


HELPER_CASE = textwrap.dedent(
    """\
    id: slug-helper
    defends: AGENTS.md
    severity: advisory
    prompt: Write the helper module slug
    checks:
      - id: no-class
        type: file_not_matches
        path: src/slug.py
        pattern: "^class "
    """
)


#: Five service cases that need classes, an advisory helper case that wants none.
CASES = {**{f"{name}-service": service_case(name) for name in SERVICES}, "slug-helper": HELPER_CASE}
#: The configurations compared: main's rules ask for classes, pr's for functions.
CONFIGS = {"main": CLASS_RULES, "pr": FUNCTION_RULES}


@pytest.fixture
def services(make_suite: SuiteBuilder) -> Callable[[], Path]:
    """``services()`` writes the suite and its two configurations under configs/."""
    return functools.partial(
        make_suite,
        AGENT,
        CASES,
        variants=CONFIGS,
        variants_dir="configs",
        ini="eval_min_pass_rate = 0\n",
    )


def seen(root: Path, variant: str, case_id: str) -> tuple[str, list[str]]:
    """The ``AGENTS.md`` text and the files the agent saw in that run's workspace."""
    rules, files = ast.literal_eval((root / "seen" / f"{variant}--{case_id}").read_text())
    return rules, files


def regressed(out: str) -> list[str]:
    return re.findall(r"^\s*regressed: (\S+ / \S+)$", out, re.MULTILINE)


def expected_regressions() -> list[str]:
    return sorted(
        f"{name}-service / {check}" for name in SERVICES for check in ("uses-class", "validates")
    )


def test_ab_directories_show_regressed_checks_and_mcnemar(
    services: Callable[[], Path], pytester: pytest.Pytester
) -> None:
    services()

    result = pytester.runpytest(*eval_configs("main=configs/main", "pr=configs/pr"))

    # 6 cases x 2 variants; pr fails the 5 services; main's advisory helper is xfailed.
    result.assert_outcomes(passed=6, failed=5, xfailed=1)
    out = result.stdout.str()
    assert "evalcases: agent command; configurations main (configs/main), pr (configs/pr)" in out
    assert "main: 5/6 cases passed · Score: 15/16 (94%) · 0 errors · normal 5/5" in out
    assert "pr: 1/6 cases passed · Score: 6/16 (38%) · 0 errors · normal 0/5" in out
    assert regressed(out) == expected_regressions()
    assert "  improved: slug-helper / no-class" in out
    # 5 cases passed with main and fail with pr, 1 the reverse:
    # p = 2 * (C(6,0) + C(6,1)) / 2**6 = 0.21875
    assert (
        "pr vs main (config): 10 checks regressed, 1 improved; cases 5 regressed, 1 improved "
        "(McNemar exact p=0.219: 5 cases passed only in main, 1 only in pr)"
    ) in out
    assert "b=5" not in out
    assert "eval gate: BLOCKED (pr: 5 normal cases failed:" in out
    assert result.ret == 1
    for name in SERVICES:
        result.stdout.fnmatch_lines([f"*{name}-service.yaml::{name}-service[[]pr[]]*"])


@pytest.mark.xdist
def test_baseline_is_the_first_config_even_when_its_runs_finish_last(
    services: Callable[[], Path],
    pytester: pytest.Pytester,
) -> None:
    services()

    result = pytester.runpytest(*eval_configs("pr=configs/pr", "main=configs/main"), "-n", "2")

    out = result.stdout.str()
    assert "main vs pr (config): 1 check regressed, 10 improved" in out
    assert regressed(out) == ["slug-helper / no-class"]


def test_single_file_lands_at_its_path_relative_to_the_rootdir(
    services: Callable[[], Path], pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    services()
    (pytester.path / "AGENTS.md").write_text(FUNCTION_RULES)
    (pytester.path / "rules").mkdir()
    (pytester.path / "rules" / "style.md").write_text("style\n")
    # Relative sources start from the invocation directory.
    monkeypatch.chdir(pytester.path / "configs")

    result = pytester.runpytest(
        *eval_configs("pr=../AGENTS.md", "rules=../rules/style.md"),
        "-k",
        "users",
        str(pytester.path),
    )

    assert seen(pytester.path, "pr", "users-service") == (FUNCTION_RULES, ["AGENTS.md"])
    assert seen(pytester.path, "rules", "users-service") == ("", ["rules/style.md"])
    assert "rules vs pr (config): 0 checks regressed, 2 improved" in result.stdout.str()


def test_working_tree_dot_takes_only_the_config_files(
    services: Callable[[], Path], pytester: pytest.Pytester
) -> None:
    services()
    (pytester.path / "AGENTS.md").write_text(FUNCTION_RULES)
    (pytester.path / ".claude" / "commands").mkdir(parents=True)
    (pytester.path / ".claude" / "commands" / "review.md").write_text("review\n")
    (pytester.path / "notes.md").write_text("not configuration\n")

    result = pytester.runpytest(*eval_configs("pr=."), "-k", "users")

    assert seen(pytester.path, "pr", "users-service") == (
        FUNCTION_RULES,
        [".claude/commands/review.md", "AGENTS.md"],
    )
    result.assert_outcomes(passed=0, failed=1)
    result.stdout.fnmatch_lines(["*users-service[[]pr[]]*"])


def test_without_eval_config_the_working_tree_config_is_overlaid(
    services: Callable[[], Path],
    pytester: pytest.Pytester,
) -> None:
    services()
    (pytester.path / "AGENTS.md").write_text(FUNCTION_RULES)
    (pytester.path / "notes.md").write_text("not configuration\n")

    result = pytester.runpytest("-k", "users")

    result.stdout.fnmatch_lines(
        ["evalcases: agent command; configuration from the working tree; sandbox *"]
    )
    assert seen(pytester.path, "", "users-service") == (FUNCTION_RULES, ["AGENTS.md"])
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED evals/users-service.yaml::users-service - *"])


@pytest.fixture
def repo(services: Callable[[], Path]) -> Path:
    """The suite as a git repository: main has class rules, then a commit switches
    AGENTS.md to function rules and adds rules/extra.md; main is the last commit."""
    root = services()
    git(root, "init", "-q", "-b", "main")
    (root / "AGENTS.md").write_text(CLASS_RULES)
    (root / "rules").mkdir()
    (root / "rules" / "git.md").write_text("no attribution trailers\n")
    hook = root / "hooks" / "pre.sh"
    hook.parent.mkdir()
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "class rules")
    (root / "AGENTS.md").write_text(FUNCTION_RULES)
    (root / "rules" / "extra.md").write_text("extra\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "function rules")
    return root


@pytest.mark.slow
def test_git_revisions_compared_with_the_working_tree(
    pytester: pytest.Pytester, repo: Path
) -> None:
    # An uncommitted edit: `.` sees it, git:HEAD does not.
    (repo / "AGENTS.md").write_text(CLASS_RULES)

    result = pytester.runpytest(
        *eval_configs("old=git:HEAD~1", "new=git:main", "wt=."),
    )

    out = result.stdout.str()
    assert regressed(out).count("users-service / uses-class") == 1
    assert "new vs old (config): 10 checks regressed, 1 improved" in out
    assert "wt vs old (config): 0 checks regressed, 0 improved" in out
    assert "(McNemar exact p=0.219: 5 cases passed only in old, 1 only in new)" in out
    assert "(McNemar exact p=1: 0 cases passed only in old, 0 only in wt)" in out


def test_git_extraction_is_exact(tmp_path: Path, repo: Path) -> None:
    specs = [
        variants.parse_spec("old=git:HEAD~1"),
        variants.parse_spec("rules=git:main:rules/"),
        variants.parse_spec("one=git:main:rules/extra.md"),
    ]
    cache = tmp_path / "cache"
    cache.mkdir()

    built = variants.build_variants(specs, config_root=repo, invocation_dir=repo, cache_dir=cache)

    trees = {v.name: sorted_files(v.overlays[0].source) for v in built}
    assert trees["old"] == ["AGENTS.md", "hooks/pre.sh", "rules/git.md"]
    # A tree's contents land at the workspace root; a file at its own path.
    assert trees["rules"] == ["extra.md", "git.md"]
    assert trees["one"] == ["rules/extra.md"]
    old = built[0].overlays[0].source
    assert (old / "AGENTS.md").read_text() == CLASS_RULES
    assert os.access(old / "hooks" / "pre.sh", os.X_OK)
    assert not os.access(old / "rules" / "git.md", os.X_OK)
    assert [v.source for v in built] == ["git:HEAD~1", "git:main:rules/", "git:main:rules/extra.md"]


def sorted_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_git_variant_files_are_overlaid_in_the_workspace(
    pytester: pytest.Pytester, repo: Path
) -> None:
    result = pytester.runpytest(
        *eval_configs("rules=git:main:rules/", "old=git:HEAD~1"),
        "-k",
        "users",
    )

    result.assert_outcomes(passed=2)
    assert seen(pytester.path, "rules", "users-service") == ("", ["extra.md", "git.md"])
    assert seen(pytester.path, "old", "users-service") == (
        CLASS_RULES,
        ["AGENTS.md", "hooks/pre.sh", "rules/git.md"],
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("pr=git:no-such-branch", "--eval-config pr=git:no-such-branch: 'no-such-branch' is not"),
        ("pr=git:main:missing/dir", "'missing/dir' does not exist at 'main'"),
        ("pr=git:main:../../etc", "the path '../../etc' leaves the repository"),
        ("pr=no/such/dir", "--eval-config pr=no/such/dir: 'no/such/dir' is neither"),
        ("just-a-path", "--eval-config expects NAME=SOURCE, got 'just-a-path'"),
        ("a[1]=configs/pr", "the name 'a[1]' must be letters"),
    ],
)
def test_bad_sources_are_usage_errors_quoting_the_value(
    pytester: pytest.Pytester, repo: Path, value: str, message: str
) -> None:
    result = pytester.runpytest("--eval-config", value)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_git_source_outside_a_repository(
    services: Callable[[], Path], pytester: pytest.Pytester
) -> None:
    services()

    result = pytester.runpytest(*eval_configs("main=git:main"))

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--eval-config main=git:main:" in result.stderr.str()
    assert "is not inside a git repository" in result.stderr.str()


def test_duplicate_names_and_workspace_mix_are_usage_errors(
    services: Callable[[], Path], pytester: pytest.Pytester
) -> None:
    services()

    twice = pytester.runpytest(*eval_configs("a=configs/main", "a=configs/pr"))
    mixed = pytester.runpytest(*eval_configs("a=configs/main"), "--eval-workspace", "configs")

    assert twice.ret == mixed.ret == pytest.ExitCode.USAGE_ERROR
    assert "the name 'a' is given twice" in twice.stderr.str()
    assert "--eval-config and --eval-workspace cannot be combined" in mixed.stderr.str()


def test_config_files_default_patterns_and_pruning(tmp_path: Path) -> None:
    for rel in [
        "AGENTS.md",
        "CLAUDE.md",
        ".claude/settings.json",
        ".claude/skills/x/SKILL.md",
        "rules/a.md",
        "docs/AGENTS.md",
        "README.md",
        ".git/AGENTS.md",
        "src/rules/b.md",
    ]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel)

    assert variants.config_files(tmp_path) == [
        ".claude/settings.json",
        ".claude/skills/x/SKILL.md",
        "AGENTS.md",
        "CLAUDE.md",
        "rules/a.md",
    ]
    assert variants.config_files(tmp_path, ["**/AGENTS.md", "*.md"]) == [
        "AGENTS.md",
        "CLAUDE.md",
        "README.md",
        "docs/AGENTS.md",
    ]
    assert variants.config_files(tmp_path, []) == variants.config_files(tmp_path)


def test_matches_is_anchored_at_the_root() -> None:
    assert variants.matches("AGENTS.md")
    assert variants.matches("skills/deploy/SKILL.md")
    assert not variants.matches("sub/AGENTS.md")
    assert not variants.matches("rules")  # the directory itself is not a file under it
    assert variants.matches("sub/AGENTS.md", ["**/AGENTS.md"])


def test_parse_spec_errors_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="expects NAME=SOURCE, got '=configs'"):
        variants.parse_spec("=configs")
    assert variants.parse_spec("pr=git:main:a=b") == variants.ConfigSpec("pr", "git:main:a=b")
