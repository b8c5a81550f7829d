"""What CI is shown of a run (docs/ci.md): under GitHub Actions the job summary and one
workflow command per failed case at its YAML line; ``evalcases report`` prints the
pull-request comment and GitLab's code-quality report. A pull request's run with one
regression against the baseline gives the committed files byte for byte
(tests/plugin/data/github/)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_evalcases import cli
from pytest_evalcases.report import gitlab
from tests.helpers.suite import SuiteBuilder

DATA = Path(__file__).parent / "data" / "github"
GUARDS = """\
# Answers start with ok, in every case.
cases:
  - id: beta
    defends: AGENTS.md
    prompt: beta
    checks:
      - id: starts-with-ok
        type: output_matches
        pattern: '^ok'
  - id: delta
    defends: AGENTS.md
    severity: advisory
    prompt: delta
    checks:
      - id: starts-with-ok
        type: output_matches
        pattern: '^ok'
"""


def expected(name: str) -> str:
    return (DATA / name).read_text("utf-8")


def pull_request(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    *extra: str,
) -> tuple[pytest.RunResult, Path]:
    """main's results (all pass) as the baseline, then the pull request's run under
    GitHub Actions: beta (normal) regressed, delta (advisory) too, a little more spent."""
    state = fake_claude(tokens=1000, cost=0.01)
    root = make_suite.steered(["alpha", "gamma"], severities={"alpha": "critical"}, agent="claude")
    # Two cases in one file, below its first line: each annotation points at its own.
    (root / "evals" / "guards.yaml").write_text(GUARDS, "utf-8")
    base = pytester.runpytest("-p", "no:cacheprovider", "--eval-save", "base.json")
    assert base.ret == 0, base.stdout.str()
    state.write_text(json.dumps({"tokens": 1200, "cost": 0.012, "fail": ["beta", "delta"]}))
    summary = root / "step-summary.md"
    summary.write_text("earlier step\n", "utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(root))
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-baseline", "base.json", "--eval-save", "run.json", *extra
    )
    return result, summary


def test_a_pull_request_with_a_regression_gets_its_summary_and_annotations(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result, summary = pull_request(make_suite, fake_claude, pytester, monkeypatch)

    assert result.ret == 1, result.stdout.str()
    assert summary.read_text("utf-8") == "earlier step\n" + expected("job-summary.md")
    commands = [line for line in result.stdout.lines if line.startswith("::")]
    assert "\n".join(commands) + "\n" == expected("annotations.txt")
    # Each at its case's line in the YAML.
    for command in commands:
        file = command.split("file=", 1)[1].split(",", 1)[0]
        line = int(command.split("line=", 1)[1].split(",", 1)[0])
        case = command.split("title=eval case ", 1)[1].split(" ", 1)[0]
        lines = (pytester.path / file).read_text("utf-8").splitlines()
        assert (file, lines[line - 1]) == ("evals/guards.yaml", f"  - id: {case}")
    assert len(commands) == 2


def test_evalcases_report_prints_the_comment_and_the_gitlab_report(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pull_request(make_suite, fake_claude, pytester, monkeypatch)
    monkeypatch.delenv("GITHUB_WORKSPACE")
    capsys.readouterr()  # the sessions' own output

    def report(*args: str) -> str:
        assert cli.main(["report", *args]) == 0
        return capsys.readouterr().out

    comment = report("--format", "github-comment", "run.json", "--baseline", "base.json")
    # The comparison the run made under --eval-baseline, read from its file.
    stored = report("--format", "github-comment", "run.json")
    summary = report("--format", "summary", "run.json")
    quality = report("--format", "gitlab-codequality", "run.json")
    green = report("--format", "github-comment", "base.json")

    assert comment == expected("comment.md")
    assert stored == comment
    assert summary == expected("job-summary.md")
    assert quality == expected("codequality.json")
    issues = json.loads(quality)
    assert [(i["check_name"], i["severity"]) for i in issues] == [
        ("starts-with-ok", "major"),
        ("starts-with-ok", "minor"),
    ]
    assert issues[0]["fingerprint"] == gitlab.fingerprint("beta", "starts-with-ok")
    assert green == expected("comment-green.md")
    assert cli.main(["report", "--format", "summary", "missing.json"]) == 2
    assert "missing.json: cannot read results file" in capsys.readouterr().err


@pytest.mark.xdist
def test_under_xdist_the_controller_writes_the_summary_once(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result, summary = pull_request(make_suite, fake_claude, pytester, monkeypatch, "-n", "2")

    assert result.ret == 1, result.stdout.str()
    assert summary.read_text("utf-8") == "earlier step\n" + expected("job-summary.md")
    commands = [line for line in result.stdout.lines if line.startswith("::")]
    assert "\n".join(commands) + "\n" == expected("annotations.txt")


def test_outside_github_actions_nothing_is_written(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_claude(fail=["beta"])
    root = make_suite.steered(["alpha"], agent="claude")
    (root / "evals" / "guards.yaml").write_text(GUARDS, "utf-8")
    summary = root / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    outside = pytester.runpytest("-p", "no:cacheprovider", "--eval-save", "a.json")
    # Under GitHub Actions, but with no results file to read: nothing either.
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    unsaved = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save")
    # A session that ran no eval case says nothing.
    no_case = pytester.runpytest("-p", "no:cacheprovider", "--eval-save", "b.json", "-k", "none")
    # In a process of its own, its output captured as pytest captures it: the commands
    # reach the real standard output.
    inside = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--eval-save", "c.json")

    for result in (outside, unsaved, no_case):
        assert not [line for line in result.stdout.lines if line.startswith("::")]
    assert no_case.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert inside.ret == 1
    assert [line[:40] for line in inside.stdout.lines if line.startswith("::")] == [
        "::error file=evals/guards.yaml,line=3,ti"
    ]
    assert summary.read_text("utf-8").startswith("## eval gate: BLOCKED\n")
    assert summary.read_text("utf-8").count("## eval gate") == 1
