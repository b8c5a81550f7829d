"""Replay and reuse with the real agent CLIs (docs/replay.md, "Replay", "Reuse"): a suite
is recorded live against the scripted model server of :mod:`tests.helpers.model_server`,
then run again with ``--eval-replay`` or ``--eval-reuse``; what the scripted server
receives the second time is what went live."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.recording import format as recording
from tests.agents import test_real_clis as real_clis
from tests.helpers.model_server import ModelServer, Reply, Request
from tests.helpers.results import results_files

pytestmark = pytest.mark.real_cli

# The real CLIs pointed at the scripted servers, as their own tests have them.
claude_env = real_clis.claude_env
gemini_server = real_clis.gemini_server
stored_text, codex_at_openai = real_clis.stored_text, real_clis.codex_at_openai

CLAUDE_INI = "[pytest]\neval_agent = claude\n"

#: The agent reads data.txt and writes made.txt (turn 1), then answers with what it saw
#: (turn 2): data.txt reaches the model only in turn 2's tool result.
CASE = """
id: reads
defends: CLAUDE.md
cwd: fixtures/repo
prompt: Copy data.txt into made.txt
checks:
  - {type: file_matches, path: made.txt, pattern: "data-v1"}
  - {type: output_matches, pattern: "^done"}
"""


def reads(request: Request) -> Reply:
    if request.tool_results == 0:
        return Reply(shell="cat data.txt | tee made.txt", input_tokens=120, output_tokens=9)
    return Reply(text="done " + " ".join(request.markers), input_tokens=150, output_tokens=4)


def suite(pytester: pytest.Pytester, ini: str = CLAUDE_INI) -> None:
    pytester.makefile(".ini", tox=ini)
    (pytester.path / "CLAUDE.md").write_text("Be brief. MARK-rules-v1\n")
    repo = pytester.path / "evals" / "fixtures" / "repo"
    repo.mkdir(parents=True)
    (repo / "data.txt").write_text("data-v1 MARK-data\n")
    (repo / "notes.txt").write_text("never read\n")
    (pytester.path / "evals" / "reads.yaml").write_text(CASE)


def run(pytester: pytest.Pytester, name: str, *args: str) -> pytest.RunResult:
    """A session with a basetemp of its own (its workspaces stay for comparing)."""
    return pytester.runpytest(
        "-p", "no:cacheprovider", "--basetemp", str(pytester.path / f"tmp-{name}"), *args
    )


def newest(pytester: pytest.Pytester) -> tuple[Path, dict[str, Any]]:
    path = results_files(pytester.path)[-1]
    return path, json.loads(path.read_text())


def tree(root: Path) -> dict[str, bytes]:
    """The files of a workspace, the plugin's own directory left out."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".evalcases" not in p.parts
    }


def exchanges(results: Path, record: dict[str, Any]) -> list[recording.Exchange]:
    found = recording.exchange_file(results.parent / record["recording"])
    assert found is not None
    return list(recording.read(found).exchanges)


def test_claude_replay_gives_the_same_verdict_and_workspace_and_sends_nothing(
    pytester: pytest.Pytester, claude_env: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "Vd8nR3tK6yQ1")
    claude_env.script = reads
    suite(pytester)
    run(pytester, "live").assert_outcomes(passed=1)
    live_path, live = newest(pytester)
    sent = len(claude_env.requests)
    assert sent >= 2

    result = run(pytester, "replay", "--eval-replay")

    result.assert_outcomes(passed=1)
    assert len(claude_env.requests) == sent, "a replay sent a request to the API"
    path, replayed = newest(pytester)
    assert path != live_path
    [before], [after] = live["cases"], replayed["cases"]
    assert [c["passed"] for c in after["checks"]] == [c["passed"] for c in before["checks"]]
    assert (before["replay"], after["replay"]) == (None, "full")
    # Anthropic: message_start says the input, message_delta the whole output.
    assert after["saved_tokens"] == 120 + 9 + 150 + 4
    assert after["saved_usd"] == pytest.approx(before["cost_usd"])
    assert tree(Path(after["workspace"])) == tree(Path(before["workspace"]))
    # The replay's own recording stands alone: every exchange, each marked replayed.
    stored = exchanges(path, after)
    assert len(stored) == len(exchanges(live_path, before))
    assert {e.source for e in stored} == {"replay"}
    result.stdout.fnmatch_lines(["replay: 1 run replayed in full, 0 in part, 0 live · saved *"])
    everything = stored_text(pytester.path / "evals" / "results")
    assert "Zq7xK2pW9mR4" not in everything
    assert "Vd8nR3tK6yQ1" not in everything


def test_claude_replay_diverges_at_turn_1_on_a_changed_claude_md_and_not_on_an_unread_file(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    claude_env.script = reads
    suite(pytester)
    run(pytester, "live").assert_outcomes(passed=1)
    recorded, _ = newest(pytester)
    sent = len(claude_env.requests)

    (pytester.path / "evals" / "fixtures" / "repo" / "notes.txt").write_text("changed\n")
    result = run(pytester, "unread", f"--eval-replay={recorded}")
    result.assert_outcomes(passed=1)
    assert newest(pytester)[1]["cases"][0]["replay"] == "full"

    (pytester.path / "CLAUDE.md").write_text("Be brief. MARK-rules-v2\n")
    result = run(pytester, "changed", f"--eval-replay={recorded}")

    result.assert_outcomes(errors=1)
    assert len(claude_env.requests) == sent, "a replay sent a request to the API"
    [record] = newest(pytester)[1]["cases"]
    assert record["error_kind"] == "replay-diverged", record["error"]
    assert record["replay"] == "diverged"
    assert "replay diverged at turn 1: the system prompt" in record["error"]
    assert "-Be brief. MARK-rules-v1" in record["error"]
    assert "+Be brief. MARK-rules-v2" in record["error"]
    assert record["attempts"] == 1


def test_claude_reuse_goes_live_at_the_diverging_turn_and_records_anew(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    claude_env.script = reads
    suite(pytester)
    run(pytester, "live").assert_outcomes(passed=1)
    recorded, _ = newest(pytester)
    (pytester.path / "evals" / "fixtures" / "repo" / "data.txt").write_text("data-v1 MARK-new\n")

    diverged = run(pytester, "replay", f"--eval-replay={recorded}")
    diverged.assert_outcomes(errors=1)
    error = newest(pytester)[1]["cases"][0]["error"]
    assert "replay diverged at turn 2: the tool result in message 3 differs" in error
    before = len(claude_env.requests)

    result = run(pytester, "reuse", f"--eval-reuse={recorded}")

    result.assert_outcomes(passed=1)
    # Only turn 2 went to the API: turn 1 (and the CLI's check of the API) replayed.
    went = claude_env.requests[before:]
    assert [r.tool_results for r in went] == [1]
    assert "MARK-new" in went[0].text
    path, doc = newest(pytester)
    [record] = doc["cases"]
    assert record["replay"] == "partial"
    assert 0 < record["saved_usd"] < doc["cases"][0]["cost_usd"] * 2
    stored = exchanges(path, record)
    sources = [e.source for e in stored if e.path.startswith("/v1/messages")]
    assert sources == ["replay", "live"]
    result.stdout.fnmatch_lines(["replay: 0 runs replayed in full, 1 in part, 0 live · *"])

    # The new recording stands alone: replaying it sends nothing.
    again = len(claude_env.requests)
    run(pytester, "again", f"--eval-replay={path}").assert_outcomes(passed=1)
    assert len(claude_env.requests) == again
    assert newest(pytester)[1]["cases"][0]["replay"] == "full"


def test_claude_reuse_without_a_recording_runs_live_and_replay_is_an_error(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    claude_env.script = reads
    suite(pytester)
    run(pytester, "live", "--eval-no-save").assert_outcomes(passed=1)
    pytester.makefile(".ini", tox=CLAUDE_INI + "eval_record = false\n")
    run(pytester, "unrecorded").assert_outcomes(passed=1)
    unrecorded, _ = newest(pytester)
    sent = len(claude_env.requests)

    result = run(pytester, "replay", f"--eval-replay={unrecorded}")

    result.assert_outcomes(errors=1)
    [record] = newest(pytester)[1]["cases"]
    assert record["error_kind"] == "replay-missing"
    assert "was not recorded" in record["error"]
    # The CLI never started.
    assert len(claude_env.requests) == sent

    pytester.makefile(".ini", tox=CLAUDE_INI)
    result = run(pytester, "reuse", f"--eval-reuse={unrecorded}")
    result.assert_outcomes(passed=1)
    assert newest(pytester)[1]["cases"][0]["replay"] == "live"
    assert len(claude_env.requests) > sent


def not_bare(pytester: pytest.Pytester) -> None:
    """The suite's case without ``--bare``: Claude Code discovers the working tree's
    configuration overlaid on the workspace (CLAUDE.md, a skill, a settings file), and
    its system prompt names its memory directory, below the agent's home, after the
    workspace's path."""
    suite(pytester)
    (pytester.path / "evals" / "reads.yaml").write_text(
        CASE.replace("prompt:", "bare: false\nprompt:")
    )
    claude = pytester.path / ".claude"
    (claude / "skills" / "todo").mkdir(parents=True)
    (claude / "skills" / "todo" / "SKILL.md").write_text(
        "---\nname: todo\ndescription: Sorts TODOs. MARK-skill\n---\nList the TODOs.\n"
    )
    (claude / "settings.json").write_text('{"env": {"MY_SETTING": "1"}}\n')


def changed(diff: list[str]) -> list[str]:
    """The lines removed and added in a divergence's diff."""
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("---", "+++")]


def cached(request: Request) -> Reply:
    """As :func:`reads`, each answer also reading 1,000 tokens from the API's cache."""
    return replace(reads(request), cache_read_tokens=1000)


def test_claude_replays_and_reuses_a_case_that_is_not_bare_in_full(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    claude_env.script = cached
    not_bare(pytester)
    run(pytester, "live").assert_outcomes(passed=1)
    recorded, live = newest(pytester)
    [before] = live["cases"]
    first = claude_env.conversation()[0]
    # What varies between two runs of the case reached the model: the workspace's path
    # as a project name (in the memory directory) and the agent's home.
    project = "-" + Path(before["workspace"]).as_posix()[1:].replace("/", "-")
    assert f"/projects/{project}/memory/" in first.text
    assert {"MARK-rules-v1", "MARK-skill"} <= set(first.markers)
    sent = len(claude_env.requests)

    replayed = run(pytester, "replay", f"--eval-replay={recorded}")

    [record] = newest(pytester)[1]["cases"]
    assert record["replay"] == "full", record["error"]
    replayed.assert_outcomes(passed=1)
    assert len(claude_env.requests) == sent, "a replay sent a request to the API"

    reused = run(pytester, "reuse", f"--eval-reuse={recorded}")

    reused.assert_outcomes(passed=1)
    assert len(claude_env.requests) == sent, "a reuse of an unchanged case sent a request"
    [record] = newest(pytester)[1]["cases"]
    assert record["replay"] == "full"
    # What the recorded run reported is what replaying it saved, counted alike: input
    # plus output, the cache's tokens apart.
    assert record["saved_tokens"] == before["tokens_in"] + before["tokens_out"] == 283
    assert record["saved_usd"] == pytest.approx(before["cost_usd"])
    reused.stdout.fnmatch_lines(
        ["replay: 1 run replayed in full, 0 in part, 0 live · saved 283 tokens, $*"]
    )


def test_a_changed_claude_md_of_a_case_that_is_not_bare_diverges_and_reuse_saves_nothing(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    claude_env.script = reads
    not_bare(pytester)
    run(pytester, "live").assert_outcomes(passed=1)
    recorded, _ = newest(pytester)
    sent, talked = len(claude_env.requests), len(claude_env.conversation())
    (pytester.path / "CLAUDE.md").write_text("Be brief. MARK-rules-v2\n")

    run(pytester, "replay", f"--eval-replay={recorded}").assert_outcomes(errors=1)

    assert len(claude_env.requests) == sent, "a replay sent a request to the API"
    [record] = newest(pytester)[1]["cases"]
    assert record["error_kind"] == "replay-diverged", record["error"]
    head, *diff = record["error"].splitlines()
    assert head.startswith(
        "replay diverged at turn 1: the system prompt (the CLI's context in message 1) differs"
    )
    # Only CLAUDE.md's line differs: nothing else of the run's system prompt.
    assert changed(diff) == ["-Be brief. MARK-rules-v1", "+Be brief. MARK-rules-v2"]

    reused = run(pytester, "reuse", f"--eval-reuse={recorded}")

    reused.assert_outcomes(passed=1)
    went = claude_env.conversation()[talked:]
    assert [r.tool_results for r in went] == [0, 1]
    assert "MARK-rules-v2" in went[0].text
    [record] = newest(pytester)[1]["cases"]
    # Turn 1 differed: no model request was answered from the recording.
    assert (record["replay"], record["saved_tokens"], record["saved_usd"]) == ("live", 0, 0.0)
    reused.stdout.fnmatch_lines(
        ["replay: 0 runs replayed in full, 0 in part, 1 live · saved 0 tokens, $0.0000"]
    )


def test_a_changed_skill_or_settings_file_of_a_case_that_is_not_bare_diverges(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    claude_env.script = reads
    not_bare(pytester)
    run(pytester, "live").assert_outcomes(passed=1)
    recorded, _ = newest(pytester)
    sent = len(claude_env.requests)
    skill = pytester.path / ".claude" / "skills" / "todo" / "SKILL.md"
    skill.write_text(skill.read_text().replace("MARK-skill", "MARK-skill-v2"))

    run(pytester, "skill", f"--eval-replay={recorded}").assert_outcomes(errors=1)

    [record] = newest(pytester)[1]["cases"]
    assert record["error_kind"] == "replay-diverged", record["error"]
    head, *diff = record["error"].splitlines()
    # Claude Code lists the skills in a message of its own before the prompt.
    assert head.startswith(
        "replay diverged at turn 1: the system prompt (the CLI's context in message 2) differs"
    )
    assert changed(diff) == [
        "-- todo: Sorts TODOs. MARK-skill",
        "+- todo: Sorts TODOs. MARK-skill-v2",
    ]
    # A setting that reaches the model: another model for the run.
    skill.write_text(skill.read_text().replace("MARK-skill-v2", "MARK-skill"))
    settings = pytester.path / ".claude" / "settings.json"
    settings.write_text('{"model": "claude-other-model"}\n')

    run(pytester, "settings", f"--eval-replay={recorded}").assert_outcomes(errors=1)

    [record] = newest(pytester)[1]["cases"]
    assert record["error_kind"] == "replay-diverged", record["error"]
    # Claude Code names the model in its system prompt, which the model reads first.
    assert record["error"].startswith("replay diverged at turn 1: the system prompt differs")
    assert "claude-other-model" in record["error"]
    assert len(claude_env.requests) == sent, "a replay sent a request to the API"


def counting(request: Request, seen: list[int] = []) -> Reply:  # noqa: B006
    """As :func:`reads`, with a number of its own in each run's final answer."""
    if request.tool_results == 0:
        return reads(request)
    seen.append(len(seen))
    return Reply(text=f"done {len(seen)}", output_tokens=4)


@pytest.mark.parametrize(
    "options",
    [
        ["--eval-repeat", "2"],
        ["--eval-repeat", "2", "-n", "2"],
        ["--eval-repeat", "2", "--eval-concurrency", "2"],
        ["--eval-config", "plain=.", "--eval-config", "strict=strict"],
    ],
    ids=["repeat", "xdist", "concurrency", "variants"],
)
def test_claude_runs_replay_their_own_recordings(
    pytester: pytest.Pytester, claude_env: ModelServer, options: list[str]
) -> None:
    claude_env.script = counting
    suite(pytester)
    (pytester.path / "strict").mkdir()
    (pytester.path / "strict" / "CLAUDE.md").write_text("Be strict. MARK-strict\n")
    run(pytester, "live", *options).assert_outcomes(passed=2)
    recorded, live = newest(pytester)
    sent = len(claude_env.requests)

    run(pytester, "replay", "--eval-replay", *options)

    path, doc = newest(pytester)
    assert [r["outcome"] for r in doc["cases"]] == ["passed"] * 2, [
        r["error"] for r in doc["cases"]
    ]
    assert len(claude_env.requests) == sent, "a replay sent a request to the API"
    runs = {(r["variant"], r["repetition"]): r for r in doc["cases"]}
    assert {r["replay"] for r in runs.values()} == {"full"}
    for old in live["cases"]:
        new = runs[(old["variant"], old["repetition"])]
        # Each run's answers are those of its own recording (each said its own number).
        answered = [e.response.text for e in exchanges(path, new)]
        assert answered == [e.response.text for e in exchanges(recorded, old)]


def test_codex_replays_its_recording(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with codex_at_openai(monkeypatch, tmp_path, reads) as (server, ini):
        suite(pytester, ini)
        run(pytester, "live").assert_outcomes(passed=1)
        sent = len(server.requests)

        result = run(pytester, "replay", "--eval-replay")

        result.assert_outcomes(passed=1)
        assert len(server.requests) == sent
        assert newest(pytester)[1]["cases"][0]["replay"] == "full"
        diverges_at_the_tool_result(pytester, "codex")
        assert len(server.requests) == sent


def test_gemini_replays_its_recording(
    pytester: pytest.Pytester, gemini_server: ModelServer
) -> None:
    gemini_server.script = reads
    suite(pytester, "[pytest]\neval_agent = gemini\n")
    run(pytester, "live").assert_outcomes(passed=1)
    sent = len(gemini_server.requests)

    result = run(pytester, "replay", "--eval-replay")

    result.assert_outcomes(passed=1)
    assert len(gemini_server.requests) == sent
    assert newest(pytester)[1]["cases"][0]["replay"] == "full"
    diverges_at_the_tool_result(pytester, "gemini")
    assert len(gemini_server.requests) == sent


def diverges_at_the_tool_result(pytester: pytest.Pytester, cli: str) -> None:
    """A changed data.txt reaches the model in turn 2's tool result: the replay of the
    first results file stops there, whatever the CLI makes of the refusal."""
    first = results_files(pytester.path)[0]
    (pytester.path / "evals" / "fixtures" / "repo" / "data.txt").write_text("data-v1 MARK-new\n")

    run(pytester, "diverged", f"--eval-replay={first}").assert_outcomes(errors=1)

    [record] = newest(pytester)[1]["cases"]
    assert record["error_kind"] == "replay-diverged", (cli, record["error"])
    assert "replay diverged at turn 2: the tool result in message " in record["error"]
    assert "MARK-new" in record["error"]


#: The fixture is a repository committed by the case's setup, and the agent commits too:
#: commit ids depend on the time, and Claude Code's system prompt quotes the fixture's.
GIT_CASE = """
id: commits
defends: CLAUDE.md
cwd: fixtures/repo
setup: git init -q && git add -A && git -c user.name=F -c user.email=f@example.com commit -qm init
prompt: Commit made.txt
checks:
  - {type: command_succeeds, command: "git log --format=%s | grep -x made"}
"""


def commits(request: Request) -> Reply:
    if request.tool_results == 0:
        return Reply(
            shell="echo made > made.txt && git add made.txt && "
            "git -c user.name=Agent -c user.email=a@example.com commit -m made && git log",
            input_tokens=120,
            output_tokens=9,
        )
    return Reply(text="done", input_tokens=150, output_tokens=4)


def test_claude_replays_a_repository_committed_by_setup_and_by_the_agent(
    pytester: pytest.Pytester, claude_env: ModelServer
) -> None:
    claude_env.script = commits
    suite(pytester)
    (pytester.path / "evals" / "reads.yaml").unlink()
    (pytester.path / "evals" / "commits.yaml").write_text(GIT_CASE)
    run(pytester, "live").assert_outcomes(passed=1)
    recorded, _ = newest(pytester)
    sent = len(claude_env.requests)
    # Another second: a commit made now has another time than the recorded ones.
    time.sleep(1.1)

    result = run(pytester, "replay", f"--eval-replay={recorded}")

    [record] = newest(pytester)[1]["cases"]
    assert record["replay"] == "full", record["error"]
    result.assert_outcomes(passed=1)
    assert len(claude_env.requests) == sent
