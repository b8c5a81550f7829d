"""``evalcases import`` (authoring/importer.py, authoring/importing/): the readers of the
saved sessions recorded in tests/agent_samples/ (RECORDED.md), and the case written from
them: prompt verbatim, fixture at the session's commit, TODOs that lint names."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from pytest_evalcases.authoring import importing, lint
from pytest_evalcases.authoring.importer import case_id, import_session
from pytest_evalcases.cases.loading import load_case_file
from pytest_evalcases.cli.main import main
from pytest_evalcases.errors import UsageError
from pytest_evalcases.kinds import SessionCli
from pytest_evalcases.run.checks import default_registry
from tests.helpers.agents import SAMPLES
from tests.helpers.git import git

PROMPT = 'Fix the "flaky" test in app.py: it fails on Mondays.\n\n  Keep the API as it is.'
SAMPLE = {
    "claude": "claude-session.jsonl",
    "codex": "codex-rollout.jsonl",
    "gemini": "gemini-session.jsonl",
}
#: Where the samples were recorded (RECORDED.md): the tests point it elsewhere.
RECORDED_AT = "/tmp/evalcases-import-sample/{cli}/repo"
#: A commit long before the recorded sessions, and one long after.
BEFORE, AFTER = "2020-01-02T03:04:05+00:00", "2040-01-02T03:04:05+00:00"


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_each_reader_finds_the_user_turns_verbatim_with_their_tool_calls(cli: SessionCli) -> None:
    session = importing.read(cli, SAMPLES / SAMPLE[cli])

    assert [t.prompt for t in session.turns] == [PROMPT, "Now run the tests."]
    first, second = session.turns
    assert [(c.kind, c.input) for c in first.calls] == [
        ("shell", "echo made-by-the-agent > made.txt")
    ]
    assert second.calls == ()
    assert first.model
    assert first.model == second.model
    assert session.started <= first.timestamp < second.timestamp


def test_what_each_cli_records_of_where_the_session_ran() -> None:
    claude = importing.read("claude", SAMPLES / SAMPLE["claude"])
    codex = importing.read("codex", SAMPLES / SAMPLE["codex"])
    gemini = importing.read("gemini", SAMPLES / SAMPLE["gemini"])

    assert (claude.cwd, claude.branch, claude.commit, claude.version) == (
        Path(RECORDED_AT.format(cli="claude")),
        "trunk",
        None,
        "2.1.197",
    )
    assert (codex.cwd, codex.branch, codex.version) == (
        Path(RECORDED_AT.format(cli="codex")),
        "trunk",
        "0.171.0",
    )
    assert codex.commit is not None
    assert len(codex.commit) == 40
    # Gemini CLI keeps the directory beside chats/, not in the session file.
    assert (gemini.cwd, gemini.branch, gemini.commit, gemini.version) == (None, None, None, None)


def test_gemini_reads_the_directory_from_the_projects_root_marker(tmp_path: Path) -> None:
    chats = tmp_path / "tmp" / "repo" / "chats"
    chats.mkdir(parents=True)
    (chats.parent / ".project_root").write_text("/work/somewhere\n")
    shutil.copy(SAMPLES / SAMPLE["gemini"], chats / "session-x.jsonl")

    assert importing.read("gemini", chats / "session-x.jsonl").cwd == Path("/work/somewhere")


def test_a_file_of_another_cli_has_no_user_turn(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no user turn found; is it a session file of Codex"):
        importing.read("codex", SAMPLES / SAMPLE["claude"])


# --- the case written -------------------------------------------------------------------


def moved(cli: SessionCli, tmp_path: Path, cwd: Path, commit: str | None = None) -> Path:
    """The recorded session of ``cli``, as if it had run in ``cwd``."""
    text = (SAMPLES / SAMPLE[cli]).read_text().replace(RECORDED_AT.format(cli=cli), str(cwd))
    if commit is not None:
        recorded = importing.read(cli, SAMPLES / SAMPLE[cli]).commit
        assert recorded is not None
        text = text.replace(recorded, commit)
    path = tmp_path / "sessions" / cli / "chats" / SAMPLE[cli]
    path.parent.mkdir(parents=True)
    path.write_text(text)
    if cli == "gemini":
        (path.parent.parent / ".project_root").write_text(str(cwd))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_the_fixture_is_the_repository_at_the_sessions_start(
    cli: SessionCli, tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = repository_dated(tmp_path / "repo", monkeypatch)
    # Codex records the commit: give it the first one; the others go by the time.
    session = moved(cli, tmp_path, tmp_path / "repo", first if cli == "codex" else None)

    done = import_session(cli, session, 1, None, project)

    assert done.case == Path("evals/fix-the-flaky-test-in-app.yaml")
    assert (done.turn, done.turns) == (1, 2)
    assert done.fixture is not None
    assert (done.fixture / "app.py").read_text() == "VERSION = 1\n"
    text = (project / done.case).read_text()
    assert f"`git archive` of {first}" in text
    data = yaml.safe_load(text)
    assert data["prompt"] == PROMPT
    assert data["cwd"] == "fixtures/fix-the-flaky-test-in-app"
    (case,) = load_case_file(project / done.case, project / "evals", default_registry())
    assert case.prompt == PROMPT


def repository_dated(
    root: Path, monkeypatch: pytest.MonkeyPatch, more: dict[str, str] | None = None
) -> tuple[str, str]:
    """A repository (branch trunk) with a commit before the recorded sessions and one
    after them (``app.py`` in both, the ``more`` files in both): their ids."""
    root.mkdir()
    git(root, "init", "-q", "-b", "trunk")
    commits = []
    for version, date in ((1, BEFORE), (2, AFTER)):
        (root / "app.py").write_text(f"VERSION = {version}\n")
        for name, text in (more or {}).items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        monkeypatch.setenv("GIT_AUTHOR_DATE", date)
        monkeypatch.setenv("GIT_COMMITTER_DATE", date)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"v{version}")
        commits.append(git(root, "rev-parse", "HEAD").strip())
    return commits[0], commits[1]


def test_a_recorded_commit_the_repository_lacks_falls_back_to_the_time(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repository_dated(tmp_path / "repo", monkeypatch)
    session = moved("codex", tmp_path, tmp_path / "repo", "0" * 40)

    done = import_session("codex", session, 1, None, project)

    assert done.fixture is not None
    assert (done.fixture / "app.py").read_text() == "VERSION = 1\n"
    assert done.note.startswith(f"Codex recorded commit {'0' * 40}, which ")
    assert "the last commit of trunk at or before the session's start" in done.note


def test_outside_a_repository_the_fixture_is_a_todo_and_lint_names_only_the_todos(
    tmp_path: Path, project: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    session = moved("claude", tmp_path, plain)

    done = import_session("claude", session, None, None, project)

    assert done.fixture is None
    assert done.case == Path("evals/now-run-the-tests.yaml")
    text = (project / done.case).read_text()
    assert f"# TODO fixture: the session ran in {plain}, which is not a git repository." in text
    data = yaml.safe_load(text)
    assert "cwd" not in data
    assert "setup" not in data
    assert data["prompt"] == "Now run the tests."
    assert "# The agent made no tool call in that turn." in text
    findings = lint.lint_files(lint.discover([project / done.case]), project)
    assert [(f.level, f.code, f.reason) for f in findings] == [
        ("warning", "todo", "TODO left for the author: defends"),
        ("warning", "todo", "TODO left for the author: checks[0]"),
    ]


def test_a_directory_gone_since_leaves_the_fixture_to_the_author(
    tmp_path: Path, project: Path
) -> None:
    session = moved("gemini", tmp_path, tmp_path / "gone")

    done = import_session("gemini", session, 2, None, project)

    assert done.fixture is None
    assert "which no longer exists here" in done.note
    text = (project / done.case).read_text()
    assert "Gemini CLI version not recorded in the session file" in text


@pytest.mark.parametrize("at", [3, 7])
def test_a_turn_out_of_range_is_an_error_naming_the_count(
    at: int, tmp_path: Path, project: Path
) -> None:
    with pytest.raises(UsageError, match=rf"^--at {at}: the session has 2 user turns \(1 to 2\)$"):
        import_session("claude", SAMPLES / SAMPLE["claude"], at, None, project)
    assert not (project / "evals").exists()


def test_never_overwrites_a_case_or_a_fixture(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repository_dated(tmp_path / "repo", monkeypatch)
    session = moved("claude", tmp_path, tmp_path / "repo")
    fixture = project / "evals" / "fixtures" / "incident-7"
    fixture.mkdir(parents=True)
    with pytest.raises(UsageError, match="incident-7 already exists; not overwriting it"):
        import_session("claude", session, 1, Path("evals/incident-7.yaml"), project)
    assert not (project / "evals" / "incident-7.yaml").exists()

    fixture.rmdir()
    done = import_session("claude", session, 1, Path("evals/incident-7.yaml"), project)
    assert done.fixture == fixture
    before = (project / done.case).read_text()
    with pytest.raises(UsageError, match=r"incident-7\.yaml already exists; not overwriting it"):
        import_session("claude", session, 2, Path("evals/incident-7.yaml"), project)
    assert (project / done.case).read_text() == before


def test_an_output_below_the_evals_root_keeps_its_fixture_in_the_roots_fixtures(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repository_dated(tmp_path / "repo", monkeypatch)
    session = moved("codex", tmp_path, tmp_path / "repo", "0" * 40)

    done = import_session("codex", session, 1, Path("evals/incidents/push-42.yaml"), project)

    assert done.fixture == project / "evals" / "fixtures" / "push-42"
    (case,) = load_case_file(project / done.case, project / "evals", default_registry())
    assert (case.id, case.fixture) == ("push-42", done.fixture)


@pytest.mark.parametrize("stem", ["Incident_7", "a" * 101])
def test_a_file_name_that_is_no_case_id_is_refused_before_anything_is_written(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch, stem: str
) -> None:
    repository_dated(tmp_path / "repo", monkeypatch)
    session = moved("claude", tmp_path, tmp_path / "repo")
    with pytest.raises(UsageError, match="the file name must be a case id: it must be kebab-case"):
        import_session("claude", session, 1, Path(f"evals/{stem}.yaml"), project)
    assert not list(project.rglob("*.yaml"))


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        (PROMPT, "fix-the-flaky-test-in-app"),
        ("Déploie   la v2.1 -- maintenant!", "d-ploie-la-v2-1-maintenant"),
        ("???", "imported-case"),
    ],
)
def test_the_id_is_the_prompts_first_words_in_kebab_case(prompt: str, expected: str) -> None:
    assert case_id(prompt) == expected


def test_a_prompt_no_block_scalar_keeps_is_quoted_and_still_verbatim(
    tmp_path: Path, project: Path
) -> None:
    prompt = "  indented first line\twith a tab \nand a trailing space "
    quoted = json.dumps(prompt)[1:-1]
    session = tmp_path / "s.jsonl"
    session.write_text(
        (SAMPLES / SAMPLE["claude"]).read_text().replace("Now run the tests.", quoted)
    )

    done = import_session("claude", session, 2, None, project)

    assert yaml.safe_load((project / done.case).read_text())["prompt"] == prompt


def test_the_command_prints_the_case_the_fixture_and_the_red_first_command(
    tmp_path: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repository_dated(tmp_path / "repo", monkeypatch)
    session = moved("claude", tmp_path, tmp_path / "repo")
    monkeypatch.chdir(project)

    assert main(["import", "claude", str(session), "--at", "1", "-o", "evals/x-1.yaml"]) == 0

    out, err = capsys.readouterr()
    assert out.splitlines() == ["evals/x-1.yaml", str(project / "evals" / "fixtures" / "x-1")]
    assert err.splitlines() == [
        "note: turn 1 of 2; fixture: Claude Code records no commit: the last commit of trunk "
        "at or before the session's start (2026-12-04T13:10:26.613Z)",
        "next: write defends and the check (the TODOs), then confirm it fails first: "
        "pytest evals/x-1.yaml --eval-red-first --eval-agent claude",
    ]
    assert main(["import", "claude", str(session), "--at", "5"]) == 2
    assert "the session has 2 user turns" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["import", "claude", str(session), "--at", "0"])


def test_a_session_in_a_subdirectory_has_that_directory_as_its_fixture(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = repository_dated(tmp_path / "repo", monkeypatch, {"service/main.py": "x = 1\n"})
    session = moved("claude", tmp_path, tmp_path / "repo" / "service")

    done = import_session("claude", session, 1, None, project)

    assert done.fixture is not None
    assert [p.name for p in done.fixture.iterdir()] == ["main.py"]
    assert (
        f"`git archive` of {first}:service/ of {tmp_path / 'repo'}"
        in (project / done.case).read_text()
    )


def test_without_at_the_last_turn_is_taken_and_the_turns_are_listed(
    tmp_path: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(project)

    assert main(["import", "codex", str(SAMPLES / SAMPLE["codex"]), "-o", "cases/x.yaml"]) == 0

    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [
        '  1: Fix the "flaky" test in app.py: it fails on Mondays.',
        "* 2: Now run the tests.",
    ]
    # Not below an evals directory: the command collects it all the same, and a note
    # says what to configure.
    assert err[-1].endswith(
        "confirm it fails first: pytest cases/x.yaml -o eval_paths=cases --eval-red-first "
        "--eval-agent codex"
    )
    assert any(line.startswith("note: cases/ is neither below") for line in err)
    assert yaml.safe_load((project / "cases" / "x.yaml").read_text())["prompt"] == (
        "Now run the tests."
    )


def test_a_todo_check_does_not_hide_a_case_whose_written_checks_are_all_negative(
    tmp_path: Path,
) -> None:
    case = tmp_path / "evals" / "c.yaml"
    case.parent.mkdir()
    case.write_text(
        "id: c\ndefends: TODO\nprompt: Do it.\nchecks:\n"
        "  - {type: output_not_matches, pattern: secret}\n"
        "  - {type: output_not_matches, pattern: x-y, description: 'TODO: the check'}\n"
    )

    findings = lint.lint_files(lint.discover([case]), tmp_path)

    assert [(f.line, f.code) for f in findings] == [
        (2, "todo"),
        (6, "todo"),
        (4, "only-negative-checks"),
    ]
