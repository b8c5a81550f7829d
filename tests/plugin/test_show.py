"""``evalcases show RESULTS_FILE CASE-ID[VARIANT]`` on results files that pytest runs
wrote, as a user runs it: a subprocess (docs/replay.md, "Reading a run"). The agent is
the recording tests' one (a Python script sending one request to the scripted Messages
API through the recording proxy)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_evalcases.results import writer as resultsfile
from tests.helpers.model_server import ModelServer
from tests.helpers.results import results_files
from tests.plugin.test_recording import api  # noqa: F401  (a fixture)
from tests.unit.results.records import doc, run

#: The console script, installed beside the interpreter running the tests.
EVALCASES = Path(sys.executable).parent / "evalcases"


def show(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EVALCASES), "show", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def only_results(root: Path) -> Path:
    [results] = results_files(root)
    return results.relative_to(root)


@pytest.mark.slow
def test_show_prints_a_recorded_run_by_its_item_name(
    pytester: pytest.Pytester,
    api: ModelServer,  # noqa: F811
) -> None:
    pytester.runpytest("--eval-agent", "http", "--eval-repeat", "2", "-p", "no:cacheprovider")
    results = only_results(pytester.path)

    done = show(pytester.path, results, "alpha[r1]")

    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0] == "alpha[r1] · agent http · passed"
    assert lines[1] == f"results file: {results}"
    assert (
        lines[2]
        == f"recording: {results.parent / (results.stem + '.runs')}/alpha.r1/exchange.jsonl"
    )
    assert "\nprompt\n  MARK-alpha\n" in done.stdout
    assert "\nanswer\n  answer to MARK-alpha\n" in done.stdout
    assert "  conversation: 100 in, 10 out over 1 turn\n" in done.stdout
    assert done.stdout.endswith("verdict: passed · 1 of 1 check passed\n")
    # A node id names the same run.
    by_node_id = show(pytester.path, results, "evals/alpha.yaml::alpha[r1]")
    assert by_node_id.stdout == done.stdout


@pytest.mark.slow
def test_show_says_which_runs_a_name_could_mean(
    pytester: pytest.Pytester,
    api: ModelServer,  # noqa: F811
) -> None:
    pytester.runpytest("--eval-agent", "http", "--eval-repeat", "2", "-p", "no:cacheprovider")
    results = only_results(pytester.path)

    ambiguous = show(pytester.path, results, "alpha")
    misspelt = show(pytester.path, results, "alpah[r0]")
    absent = show(pytester.path, results, "alpha[r5]")

    assert (ambiguous.returncode, misspelt.returncode, absent.returncode) == (2, 2, 2)
    assert ambiguous.stderr == (
        f"evalcases: {results}: alpha names 2 runs: say which (alpha[r0], alpha[r1])\n"
    )
    assert misspelt.stderr == f"evalcases: {results}: no case 'alpah'; did you mean alpha?\n"
    assert absent.stderr == (
        f"evalcases: {results}: no run alpha[r5]; the runs of alpha are alpha[r0], alpha[r1]\n"
    )
    assert ambiguous.stdout == misspelt.stdout == absent.stdout == ""


@pytest.mark.slow
def test_show_says_why_a_run_was_not_recorded(
    pytester: pytest.Pytester,
    api: ModelServer,  # noqa: F811
) -> None:
    pytester.makefile(".ini", tox="[pytest]\neval_record = false\n")
    pytester.runpytest("--eval-agent", "http", "-p", "no:cacheprovider", "-k", "alpha")
    off = Path("off.json")
    (pytester.path / only_results(pytester.path)).rename(pytester.path / off)
    command = "python3 -c 'print(\"answer to MARK-alpha\")'"
    pytester.makefile(".ini", tox=f"[pytest]\neval_agent_command = {command}\n")
    pytester.runpytest("-p", "no:cacheprovider", "-k", "alpha")
    by_command = only_results(pytester.path)

    off_said = show(pytester.path, off, "alpha")
    command_said = show(pytester.path, by_command, "alpha")

    assert off_said.returncode == command_said.returncode == 2
    assert off_said.stderr.startswith(
        "evalcases: off.json: alpha was not recorded: recording was off "
        "(eval_record = false), or its agent's model traffic was not proxied"
    )
    stored = by_command.parent / f"{by_command.stem}.runs" / "alpha"
    assert command_said.stderr == (
        f"evalcases: {by_command}: alpha: the command agent talks to no model API through "
        f"the proxy: only its answer and the files it changed are stored, in {stored}\n"
    )


@pytest.mark.slow
def test_show_names_a_missing_results_file_and_a_corrupt_recording(
    pytester: pytest.Pytester,
    api: ModelServer,  # noqa: F811
) -> None:
    pytester.runpytest("--eval-agent", "http", "-p", "no:cacheprovider", "-k", "alpha")
    results = only_results(pytester.path)
    exchange = results.parent / f"{results.stem}.runs" / "alpha" / "exchange.jsonl"
    stored = (pytester.path / exchange).read_text().splitlines()
    (pytester.path / exchange).write_text(stored[0] + "\n" + stored[1][:40] + "\n")

    missing = show(pytester.path, "evals/results/nope.json", "alpha")
    corrupt = show(pytester.path, results, "alpha")
    (pytester.path / exchange).unlink()
    removed = show(pytester.path, results, "alpha")

    assert missing.returncode == corrupt.returncode == removed.returncode == 2
    assert missing.stderr.startswith("evalcases: evals/results/nope.json: ")
    assert corrupt.stderr.startswith(f"evalcases: {exchange}:2: not a JSON object: ")
    assert removed.stderr == (
        f"evalcases: {results}: alpha was recorded in {exchange.parent}, which holds no "
        "exchange.jsonl (was it removed?)\n"
    )
    assert "Traceback" not in missing.stderr + corrupt.stderr + removed.stderr


def test_show_prints_a_results_file_written_before_recordings_existed(tmp_path: Path) -> None:
    resultsfile.write(doc([run("alpha", "passed")]), tmp_path / "old.json")

    done = show(tmp_path, "old.json", "alpha")

    assert done.returncode == 2
    assert "old.json: alpha was not recorded: " in done.stderr
    assert "written before recordings existed" in done.stderr
