"""What every recorded run stores beside the results file, and ``--eval-regrade``, which
grades the stored runs again with the current checks and no agent (docs/replay.md,
"What else is stored" and "Regrade"): real sessions of a command agent."""

from __future__ import annotations

import json
import os
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases import cli
from pytest_evalcases.run import artifacts
from pytest_evalcases.run.changes import CHANGES
from tests.helpers.git import git, make_repo
from tests.helpers.results import results_files
from tests.helpers.suite import SuiteBuilder

#: The agent: counts its runs in ROOT/agent-runs (a run of it there is a failure of a
#: regrade), changes the workspace every way (adds, edits, deletes, a new directory),
#: and answers with its run number and the first line of AGENTS.md, so that repetitions
#: and variants give different answers. A prompt with "crash" exits 3.
AGENT = r"""
import fcntl, os, pathlib, sys
root, prompt = pathlib.Path(sys.argv[1]), sys.argv[2]
# Runs in parallel (xdist, concurrency) each take their own number: the line is written
# and counted under one lock.
with open(root / "agent-runs", "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.write(prompt + "\n")
    f.flush()
    f.seek(0)
    count = len(f.read().splitlines())
if "crash" in prompt:
    sys.stderr.write("the agent crashed\n")
    sys.exit(3)
pathlib.Path("notes").mkdir(exist_ok=True)
pathlib.Path("notes/run.txt").write_text(f"note of run {count}\n")
pathlib.Path("old.txt").unlink()
pathlib.Path("src/app.py").write_text("print('fixed')\n")
rules = pathlib.Path("AGENTS.md")
said = rules.read_text().splitlines()[0] if rules.exists() else "no rules"
print(f"done, run {count}; {said}")
"""

COMMAND = "{python} {rootdir}/agent.py {rootdir} {prompt}"

CASE = """\
id: {id}
defends: AGENTS.md
cwd: fixtures/app
setup: echo built > built.txt
prompt: {prompt}
checks:
{checks}
"""

CHECKS = """\
  - {type: file_contains, file: src/app.py, pattern: fixed}
  - {type: file_absent, path: old.txt}
  - {type: output_matches, pattern: done}
"""

FIXTURE = {
    "evals/fixtures/app/src/app.py": "print('broken')\n",
    "evals/fixtures/app/old.txt": "old\n",
}

#: Writes ROOT/processes.log: every process an eval item's setup or call starts.
AUDIT = """
import sys

LOG = {log!r}
_active = [False]


def _audit(event, args):
    if _active[0] and event in (
        "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"
    ):
        with open(LOG, "a") as f:
            f.write(event + " " + repr(args)[:200] + "\\n")


sys.addaudithook(_audit)


def pytest_runtest_setup(item):
    _active[0] = True


def pytest_runtest_teardown(item):
    _active[0] = False
"""


def path_of_bwrap_only(root: Path) -> Path:
    """A directory for ``PATH`` with nothing but a ``bwrap`` that fails: nothing else
    can start by name, and the sandbox's trial of bubblewrap would start it."""
    directory = root / "bwrap-only"
    directory.mkdir()
    (directory / "bwrap").write_text("#!/bin/sh\nexit 1\n")
    (directory / "bwrap").chmod(0o755)
    return directory


def suite(make_suite: SuiteBuilder, ini: str = "", **cases: str) -> Path:
    cases = cases or {"fix": CASE.format(id="fix", prompt="fix it", checks=CHECKS)}
    return make_suite(
        AGENT,
        {key.replace("_", "-"): text for key, text in cases.items()},
        fixtures={**FIXTURE, "AGENTS.md": "Rules of the baseline.\n"},
        command=COMMAND,
        ini="eval_timeout = 60\n" + ini,
    )


def documents(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    return [(p, json.loads(p.read_text())) for p in results_files(root)]


def newest(root: Path) -> tuple[Path, dict[str, Any]]:
    return max(documents(root), key=lambda found: found[1]["date"])


def agent_runs(root: Path) -> int:
    runs = root / "agent-runs"
    return len(runs.read_text().splitlines()) if runs.exists() else 0


def rewrite_checks(root: Path, case_id: str, checks: str, prompt: str = "fix it") -> None:
    (root / "evals" / f"{case_id}.yaml").write_text(
        CASE.format(id=case_id, prompt=prompt, checks=checks)
    )


def test_every_live_run_stores_its_answer_and_its_changes(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    suite(make_suite)

    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

    results, doc = newest(pytester.path)
    [record] = doc["cases"]
    assert record["recording"] == f"{results.stem}.runs/fix"
    directory = results.parent / record["recording"]
    stored = json.loads((directory / artifacts.RUN_FILE).read_text())
    assert stored["answer"] == "done, run 1; Rules of the baseline.\n"
    assert stored["agent"] == "command"
    assert stored["error"] is None
    # Relative to the fixture as populated: setup's file is a change too, and the
    # AGENTS.md the variant laid over it is not.
    assert stored["changes"]["deleted"] == ["old.txt"]
    with tarfile.open(directory / CHANGES) as tar:
        assert sorted(tar.getnames()) == ["built.txt", "notes", "notes/run.txt", "src/app.py"]
    assert not (directory / "exchange.jsonl").exists()


@pytest.mark.slow
def test_regrade_grades_the_stored_runs_with_the_current_checks_and_starts_no_process(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = suite(make_suite)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    live, _ = newest(root)
    # Checks that the stored run fails, and one that only the restored setup output,
    # the restored new directory and the stored answer satisfy.
    rewrite_checks(
        root,
        "fix",
        "  - {type: file_contains, file: src/app.py, pattern: 'print\\(.fixed.\\)'}\n"
        "  - {type: file_exists, path: built.txt}\n"
        "  - {type: file_contains, file: notes/run.txt, pattern: 'note of run 1'}\n"
        "  - {type: file_exists, path: old.txt}\n"
        "  - {type: output_matches, pattern: 'run 1; Rules of the baseline'}\n",
    )
    log = root / "processes.log"
    pytester.makeconftest(AUDIT.format(log=str(log)))
    monkeypatch.setenv("PATH", str(path_of_bwrap_only(root)))

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--eval-regrade")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"evalcases: agent none (regrading evals/results/{live.name});*",
            "*file_exists*old.txt*no such file*",
        ]
    )
    assert agent_runs(root) == 1
    assert not log.exists(), log.read_text()
    regraded, doc = newest(root)
    assert regraded != live
    assert doc["regraded_from"] == live.name
    [record] = doc["cases"]
    assert [c["passed"] for c in record["checks"]] == [True, True, True, False, True]
    assert record["recording"] == f"{live.stem}.runs/fix"
    # No recording of its own: the regrade ran nothing.
    assert not (root / "evals" / "results" / f"{regraded.stem}.runs").exists()


def test_a_regrade_spends_nothing_and_trend_counts_the_recorded_figures_once(
    make_suite: SuiteBuilder,
    fake_claude: Callable[..., Path],
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
) -> None:
    state = fake_claude(tokens=1234, cost=0.5)
    root = make_suite.steered(["steady"], agent="claude")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    _, live_doc = newest(root)
    [recorded] = live_doc["cases"]
    assert (recorded["tokens_in"] + recorded["tokens_out"], recorded["cost_usd"]) == (1334, 0.5)

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade")

    result.assert_outcomes(passed=1)
    regraded, doc = newest(root)
    [record] = doc["cases"]
    # No agent ran: nothing spent; what the stored run reported is kept apart.
    assert (record["tokens_in"], record["tokens_out"], record["cost_usd"]) == (None, None, None)
    assert (
        record["recorded_tokens_in"],
        record["recorded_tokens_out"],
        record["recorded_cost_usd"],
    ) == (recorded["tokens_in"], recorded["tokens_out"], 0.5)
    assert (doc["usage"]["runs_with_tokens"], doc["usage"]["runs_with_cost"]) == (0, 0)
    result.stdout.fnmatch_lines(
        ["  nothing spent: no agent ran (the stored runs had reported 1,334 tokens, $0.5000)"]
    )
    # A live run that costs more: the trend's mean is of the two live runs alone.
    state.write_text(json.dumps({"tokens": 2234, "cost": 1.5}))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert len(results_files(root)) == 3
    capsys.readouterr()

    assert cli.main(["trend", str(root / "evals" / "results")]) == 0

    out = capsys.readouterr().out
    assert out.startswith("last 3 of 3 runs")
    assert "steady  1,834 ± 707  $1.0000 ± $0.7071" in out
    # A regraded file written before regrades spent nothing repeats the stored figures:
    # they are not counted again either.
    older = dict(record, tokens_in=recorded["tokens_in"], tokens_out=recorded["tokens_out"])
    older["cost_usd"] = 0.5
    for key in ("recorded_tokens_in", "recorded_tokens_out", "recorded_cost_usd"):
        del older[key]
    regraded.write_text(json.dumps(dict(doc, cases=[older])))
    capsys.readouterr()
    assert cli.main(["trend", str(root / "evals" / "results")]) == 0
    assert "steady  1,834 ± 707  $1.0000 ± $0.7071" in capsys.readouterr().out


@pytest.mark.xdist
def test_regrade_of_a_named_file_follows_repeats_variants_and_xdist(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = suite(make_suite)
    for name in ("base", "strict"):
        (root / "variants" / name).mkdir(parents=True)
        (root / "variants" / name / "AGENTS.md").write_text(f"Rules of {name}.\n")
    options = ["--eval-config", "base=variants/base", "--eval-config", "strict=variants/strict"]
    options += ["--eval-repeat", "2", "-p", "no:cacheprovider"]
    pytester.runpytest(*options, "-n", "2").assert_outcomes(passed=4)
    live, live_doc = newest(root)
    answers = {
        (r["variant"], r["repetition"]): json.loads(
            (live.parent / r["recording"] / artifacts.RUN_FILE).read_text()
        )["answer"]
        for r in live_doc["cases"]
    }
    assert {a.split(";")[1].strip() for a in answers.values()} == {
        "Rules of base.",
        "Rules of strict.",
    }
    # Each run is graded against its own answer: the pattern names it.
    patterns = {key: answers[key].split(";")[0] for key in answers}
    first = patterns[("base", 0)]
    rewrite_checks(root, "fix", f"  - {{type: output_matches, pattern: '^{first};'}}\n")
    (root / "agent.py").write_text("raise SystemExit('the agent ran')\n")

    result = pytester.runpytest(*options, "-n", "2", f"--eval-regrade={live}")

    result.assert_outcomes(passed=1, failed=3)
    _, doc = newest(root)
    outcomes = {(r["variant"], r["repetition"]): r["outcome"] for r in doc["cases"]}
    assert outcomes == {key: "passed" if patterns[key] == first else "failed" for key in patterns}
    assert agent_runs(root) == 4


@pytest.mark.slow
def test_regrade_under_concurrency_starts_nothing_ahead(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = {name: CASE.format(id=name, prompt="fix it", checks=CHECKS) for name in "abcd"}
    root = suite(make_suite, **cases)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=4)
    log = root / "processes.log"
    pytester.makeconftest(AUDIT.format(log=str(log)))
    monkeypatch.setenv("PATH", str(path_of_bwrap_only(root)))

    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--eval-regrade", "--eval-concurrency", "4"
    )

    result.assert_outcomes(passed=4)
    assert agent_runs(root) == 4
    # Neither an agent nor a case's setup was started ahead for a run it regrades.
    assert not log.exists(), log.read_text()


def test_a_run_with_nothing_stored_is_an_error_naming_the_results_file(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = suite(make_suite)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    live, _ = newest(root)
    # A case added since, and a run whose directory lost its run.json.
    rewrite_checks(root, "added", CHECKS)

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade")

    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([f"*{live}*has no run of case added*"])
    _, doc = newest(root)
    kinds = {r["id"]: r.get("error_kind") for r in doc["cases"]}
    assert kinds == {"fix": None, "added": "replay-missing"}

    (live.parent / f"{live.stem}.runs" / "fix" / artifacts.RUN_FILE).unlink()
    result = pytester.runpytest("-p", "no:cacheprovider", f"--eval-regrade={live}", "-k", "fix")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*stored no run.json*"])


def test_a_run_recorded_without_a_recording_is_replay_missing(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    suite(make_suite, ini="eval_record = false\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    live, doc = newest(pytester.path)
    assert doc["cases"][0]["recording"] is None

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade")

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*{live}*was not recorded (recording: null)*"])


def test_a_corrupt_stored_run_is_an_error_naming_its_file(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    suite(make_suite)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    live, _ = newest(pytester.path)
    archive = live.parent / f"{live.stem}.runs" / "fix" / CHANGES
    archive.write_bytes(b"not an archive")

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade")

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*stored run unreadable: {archive}*"])
    _, doc = newest(pytester.path)
    assert doc["cases"][0]["error_kind"] == "replay-corrupt"


def test_a_recorded_error_is_reported_again_from_the_recording(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    suite(make_suite, crash=CASE.format(id="crash", prompt="crash now", checks=CHECKS))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(errors=1)
    live, live_doc = newest(pytester.path)
    [live_record] = live_doc["cases"]
    assert live_record["recording"] == f"{live.stem}.runs/crash"

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade")

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the agent crashed*(from the recording *crash)*"])
    _, doc = newest(pytester.path)
    [record] = doc["cases"]
    assert record["error_kind"] == live_record["error_kind"]
    assert agent_runs(pytester.path) == 1


def test_regrade_without_a_results_file_is_a_usage_error(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    suite(make_suite)

    newest_missing = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade")
    named_missing = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade=nope.json")
    (pytester.path / "bad.json").write_text("{")
    malformed = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade=bad.json")

    newest_missing.stderr.fnmatch_lines(["*--eval-regrade:*no results file*"])
    named_missing.stderr.fnmatch_lines(["*--eval-regrade: no such results file:*nope.json*"])
    malformed.stderr.fnmatch_lines(["*--eval-regrade:*bad.json*"])
    assert {newest_missing.ret, named_missing.ret, malformed.ret} == {pytest.ExitCode.USAGE_ERROR}
    assert agent_runs(pytester.path) == 0


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--eval-replay"], "--eval-regrade and --eval-replay cannot be combined"),
        (["--eval-reuse"], "--eval-regrade and --eval-reuse cannot be combined"),
        (["--eval-workspace", "evals"], "--eval-regrade and --eval-workspace*cannot be combined"),
    ],
)
def test_regrade_cannot_be_combined_with_a_mode_that_runs_the_agent(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, options: list[str], named: str
) -> None:
    suite(make_suite)

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade=x.json", *options)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{named}*"])


def test_a_recording_that_cannot_be_written_is_said_and_costs_no_verdict(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    suite(make_suite)
    # Where the recordings would go is a file: nothing can be written below it.
    (pytester.path / "results.runs").write_text("in the way")

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-save", "results.json")

    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*RecordingWarning: run fix: its recording could not be written*"])
    doc = json.loads((pytester.path / "results.json").read_text())
    assert doc["cases"][0]["recording"] is None


def test_evalcases_clean_removes_the_recordings_beside_the_results_files(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = suite(make_suite)
    for _ in range(3):
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    results = root / "evals" / "results"
    runs = sorted(results.glob("*.runs"))
    assert len(runs) == 3
    # Not ours: a directory named alike that holds something else.
    (results / "mine.runs" / "notes").mkdir(parents=True)
    monkeypatch.chdir(root)
    capsys.readouterr()

    assert cli.main(["clean", "--keep-last", "1"]) == 0
    some = capsys.readouterr().out
    assert sorted(results.glob("*.runs")) == [runs[-1], results / "mine.runs"]
    assert cli.main(["clean"]) == 0
    rest = capsys.readouterr().out

    assert f"removed {os.path.relpath(runs[0])}" in some.splitlines()
    assert "removed the recordings of 2 runs (" in some
    assert rest.splitlines()[:2] == [
        f"removed {os.path.relpath(runs[-1])}",
        rest.splitlines()[1],
    ]
    assert rest.splitlines()[1].endswith("; 0 runs left")
    assert sorted(results.glob("*.runs")) == [results / "mine.runs"]
    assert len(list(results.glob("*.json"))) == 3


def test_merged_shards_name_their_recordings_from_the_merged_file(
    make_suite: SuiteBuilder,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = suite(
        make_suite,
        one=CASE.format(id="one", prompt="fix one", checks=CHECKS),
        two=CASE.format(id="two", prompt="fix two", checks=CHECKS),
    )
    for k, case_id in ((1, "one"), (2, "two")):
        save = f"shard{k}/results.json"
        run = pytester.runpytest("-p", "no:cacheprovider", "-k", case_id, "--eval-save", save)
        run.assert_outcomes(passed=1)
    monkeypatch.chdir(root)

    code = cli.main(
        ["merge", "shard1/results.json", "shard2/results.json", "-o", "merged/all.json"]
    )

    assert code == 0
    capsys.readouterr()
    merged = json.loads((root / "merged" / "all.json").read_text())
    recordings = sorted(r["recording"] for r in merged["cases"])
    assert recordings == [
        "../shard1/results.runs/" + recordings[0].rsplit("/", 1)[1],
        "../shard2/results.runs/" + recordings[1].rsplit("/", 1)[1],
    ]
    rewrite_checks(root, "one", "  - {type: file_exists, path: old.txt}\n", prompt="fix one")
    regraded = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade=merged/all.json")
    regraded.assert_outcomes(passed=1, failed=1)
    assert agent_runs(root) == 2


#: Commits its change in the fixture's repository.
COMMITTING_AGENT = r"""
import os, pathlib, subprocess, sys
pathlib.Path("app.py").write_text("print('fixed')\n")
env = {**os.environ, "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
       "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com",
       "GIT_CONFIG_GLOBAL": os.devnull}
subprocess.run(["git", "commit", "-qam", "the agent's fix"], check=True, env=env)
print("committed")
"""

GIT_CASE = """\
id: commits
defends: AGENTS.md
cwd: fixtures/repo
prompt: fix and commit
checks:
  - {type: command_succeeds, command: "git log --format=%s | grep -q \\"the agent's fix\\""}
  - {type: command_succeeds, command: git diff --quiet HEAD}
"""


def test_a_commit_the_agent_made_is_restored_for_the_checks_that_read_the_history(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite(
        COMMITTING_AGENT,
        {"commits": GIT_CASE},
        fixtures={"AGENTS.md": "Commit.\n"},
        command="{python} {rootdir}/agent.py",
        ini="eval_timeout = 60\n",
    )
    make_repo(root / "evals" / "fixtures" / "repo", {"app.py": "print('broken')\n"})
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    (root / "agent.py").write_text("raise SystemExit('the agent ran')\n")
    # A new check on the history: only the stored .git answers it.
    (root / "evals" / "commits.yaml").write_text(
        GIT_CASE
        + '  - {type: command_succeeds, command: "test $(git rev-list --count HEAD) = 2"}\n'
    )

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-regrade")

    result.assert_outcomes(passed=1)
    assert git(root / "evals" / "fixtures" / "repo", "rev-list", "--count", "HEAD") == "1\n"
