"""The workspace of a failed or errored run outlives pytest's temporary directories:
it is kept beside the results file (or in ``--eval-keep`` / ``eval_keep_dir``), within
``eval_keep_max_mb``, and ``evalcases clean`` removes it (docs/agents.md, "Kept
workspaces")."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases import cli
from pytest_evalcases.run import keep
from tests.helpers.results import results_files
from tests.helpers.suite import SuiteBuilder

#: Writes ``blob`` of as many bytes as the prompt says and answers "done": the case
#: below fails on the blob. Steered by ``pass/<case>`` in the rootdir to write nothing.
AGENT = """
import os, pathlib, sys
root, size = pathlib.Path(sys.argv[1]), int(sys.argv[2])
if not (root / "pass" / os.environ["EVALCASES_CASE_ID"]).exists():
    pathlib.Path("blob").write_bytes(b"x" * size)
    pathlib.Path("test_agent_wrote.py").write_text("def test_boom():\\n    assert False\\n")
print("done")
"""


def case(case_id: str, size: int = 10) -> str:
    return (
        f"id: {case_id}\ndefends: AGENTS.md\nprompt: '{size}'\n"
        "checks: [{type: file_absent, path: blob}]\n"
    )


@pytest.fixture
def suite(make_suite: SuiteBuilder) -> Any:
    """``suite(ini="", **cases)``: the cases, answered by :data:`AGENT`."""

    def make(ini: str = "", **cases: str) -> Path:
        return make_suite(
            AGENT,
            cases or {"fails": case("fails")},
            command="{python} {rootdir}/agent.py {rootdir} {prompt}",
            ini="eval_agent = command\neval_timeout = 60\n" + ini,
        )

    return make


def records(path: Path) -> dict[str, dict[str, Any]]:
    doc = json.loads(path.read_text("utf-8"))
    return {r["nodeid"].split("::")[1]: r for r in doc["cases"]}


def kept_line(result: pytest.RunResult) -> str:
    return next(line for line in result.stdout.lines if line.startswith("workspace kept: "))


@pytest.mark.slow
def test_a_failed_runs_workspace_outlives_three_more_pytest_runs(
    suite: Any,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = suite()
    # pytest's own temporary directories, as a user gets them (no --basetemp): it keeps
    # the last three sessions' (tmp_path_retention_count).
    temproot = tmp_path_factory.mktemp("temproot")
    monkeypatch.setenv("PYTEST_DEBUG_TEMPROOT", str(temproot))

    def pytest_run() -> pytest.RunResult:
        result = pytester.run(sys.executable, "-m", "pytest", "-p", "no:cacheprovider")
        assert result.ret == 1, result.stdout.str()
        return result

    first = pytest_run()
    (results,) = results_files(root)
    workspace = Path(records(results)["fails"]["workspace"])
    for _ in range(3):
        pytest_run()

    (first_session,) = temproot.glob("pytest-of-*/")
    assert not (first_session / "pytest-0").exists()  # pytest pruned the first session
    assert workspace == results.with_suffix(".workspaces") / "fails"
    assert (workspace / "blob").read_bytes() == b"x" * 10
    assert kept_line(first) == f"workspace kept: {workspace}"
    assert len(results_files(root)) == 4


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_each_variant_and_repetition_keeps_its_own_directory_beside_the_results_file(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, args: tuple[str, ...]
) -> None:
    root = make_suite(
        AGENT,
        {"fails": case("fails")},
        command="{python} {rootdir}/agent.py {rootdir} {prompt}",
        ini="eval_agent = command\neval_timeout = 60\n",
        variants={"va": "rules a\n", "vb": "rules b\n"},
    )

    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-repeat", "2",
        "--eval-config", "a=va", "--eval-config", "b=vb", *args,
    )  # fmt: skip

    result.assert_outcomes(failed=4)
    (results,) = results_files(root)
    kept = results.with_suffix(".workspaces")
    names = ["fails.a.r0", "fails.a.r1", "fails.b.r0", "fails.b.r1"]
    assert sorted(p.name for p in kept.iterdir() if p.name != ".gitignore") == names
    by_item = records(results)
    items = ["fails[a-r0]", "fails[a-r1]", "fails[b-r0]", "fails[b-r1]"]
    for item, name in zip(items, names, strict=True):
        assert by_item[item]["workspace"] == str(kept / name)
        assert (kept / name / "blob").is_file()


def test_without_a_results_file_workspaces_stay_in_pytests_directory_unless_a_keep_dir_is_given(
    suite: Any, pytester: pytest.Pytester
) -> None:
    root = suite()
    base = root / "basetemp"

    unsaved = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save", f"--basetemp={base}")
    left = Path(kept_line(unsaved).split(": ", 1)[1])
    kept = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save", "--eval-keep", "kept")

    assert left.parent == base
    assert (left / "blob").is_file()
    assert not (root / "evals" / "results").exists()
    (session,) = (root / "kept").glob("*.workspaces")
    assert kept_line(kept) == f"workspace kept: {session / 'fails'}"
    assert (session / "fails" / "blob").is_file()


def test_eval_keep_dir_holds_them_and_pytest_collects_nothing_an_agent_wrote_there(
    suite: Any, pytester: pytest.Pytester
) -> None:
    root = suite(ini="eval_keep_dir = kept\n")

    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)
    again = pytester.runpytest("-p", "no:cacheprovider")

    # The agent's test_agent_wrote.py in the first run's kept workspace is not a test.
    again.assert_outcomes(failed=1)
    kept = sorted((root / "kept").glob("*.workspaces/fails/test_agent_wrote.py"))
    assert len(kept) == 2
    (results,) = results_files(root)[-1:]
    assert Path(records(results)["fails"]["workspace"]).parent.parent == root / "kept"


def test_the_oldest_kept_workspaces_go_first_and_one_too_big_stays_where_it_is(
    suite: Any, pytester: pytest.Pytester
) -> None:
    # 50 kB for every kept workspace together, as they take on disk: a directory and two
    # files of some blocks each (12 kB with a blob of 10 bytes, 29 kB with one of 20 kB).
    root = suite(ini="eval_keep_max_mb = 0.05\n")
    results_dir = root / "evals" / "results"

    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)
    (first,) = results_dir.glob("*.workspaces")
    (root / "evals" / "fails.yaml").write_text(case("fails", 20_000))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)
    (root / "evals" / "fails.yaml").write_text(case("fails", 100_000))
    too_big = pytester.runpytest("-p", "no:cacheprovider", f"--basetemp={root / 'tmp'}")

    assert not first.exists()
    sessions = sorted(results_dir.glob("*.workspaces"))
    assert len(sessions) == 1  # the third run's: the second's went to make room
    assert (sessions[0] / "fails" / "blob").stat().st_size == 20_000
    line = kept_line(too_big)
    assert line.startswith(f"workspace kept: {root / 'tmp'}")
    assert "(not moved to evals/results/" in line
    assert re.search(r": its 1\d\d kB exceed eval_keep_max_mb = 0\.05\)$", line), line


def test_a_replaced_results_file_replaces_its_kept_workspaces(
    suite: Any, pytester: pytest.Pytester
) -> None:
    root = suite(one=case("one"), two=case("two"))
    save = ("-p", "no:cacheprovider", "--eval-save", "out/latest.json")

    pytester.runpytest(*save).assert_outcomes(failed=2)
    (root / "pass").mkdir()
    (root / "pass" / "two").write_text("")
    pytester.runpytest(*save).assert_outcomes(failed=1, passed=1)

    kept = root / "out" / "latest.workspaces"
    assert sorted(p.name for p in kept.iterdir()) == [".gitignore", "one"]
    assert records(root / "out" / "latest.json")["one"]["workspace"] == str(kept / "one")


def test_evalcases_clean_removes_the_kept_workspaces_where_pytest_keeps_them(
    suite: Any,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = suite(ini="eval_results_dir = out\n")
    for _ in range(3):
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)
    newest = sorted((root / "out").glob("*.json"))[-1].with_suffix(".workspaces")
    monkeypatch.chdir(root / "evals")
    capsys.readouterr()

    assert cli.main(["clean", "--keep-last", "1"]) == 0
    some = capsys.readouterr().out
    assert cli.main(["clean"]) == 0
    # The lines about the recordings beside the results files come first.
    rest = capsys.readouterr().out.split("left\n", 1)[1]

    assert some.splitlines()[-1].startswith("removed the kept workspaces of 2 runs (")
    assert some.splitlines()[-1].endswith("); 1 run left")
    assert rest.splitlines() == [
        f"removed {os.path.relpath(newest)}",
        rest.splitlines()[-1],
    ]
    assert rest.splitlines()[-1].endswith("; 0 runs left")
    assert list((root / "out").glob("*.workspaces")) == []
    assert len(list((root / "out").glob("*.json"))) == 3


SHM = Path("/dev/shm")

#: Leaves what no copy may follow or open: a link to /, a FIFO.
HOSTILE_AGENT = "sh -c 'ln -s / r; mkfifo pipe; echo x > blob; echo done'"


@pytest.mark.skipif(not SHM.is_dir() or not os.access(SHM, os.W_OK), reason="no writable /dev/shm")
def test_across_filesystems_a_hostile_workspace_is_copied_without_following_anything(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    if os.stat(SHM).st_dev == os.stat(pytester.path).st_dev:
        pytest.skip("/dev/shm is on the same filesystem as pytester's directory")
    make_suite(
        cases={"fails": case("fails")},
        ini=f"eval_agent = command\neval_agent_command = {HOSTILE_AGENT}\neval_timeout = 60\n",
    )
    keep_dir = SHM / f"evalcases-kept-{os.getpid()}-{pytester.path.name}"
    try:
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--eval-keep", str(keep_dir), timeout=120
        )

        result.assert_outcomes(failed=1)
        (session,) = keep_dir.glob("*.workspaces")
        assert kept_line(result) == f"workspace kept: {session / 'fails'}"
        assert os.readlink(session / "fails" / "r") == "/"
        assert not os.path.lexists(session / "fails" / "pipe")
        assert (session / "fails" / "blob").read_text() == "x\n"
    finally:
        keep.remove_tree(keep_dir)
