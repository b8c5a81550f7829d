"""Results files (docs/results.md): one JSON file per run that executed eval items, written
atomically by the controller, also for interrupted runs and under xdist."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pytest_evalcases.results import writer as resultsfile
from pytest_evalcases.results.record import RunRecord
from tests.helpers.interrupt import interrupted_pytest
from tests.helpers.results import document, only_results, results_files, steer
from tests.helpers.suite import SuiteBuilder

TOP_LEVEL = {
    "date",
    "passed",
    "failed",
    "errors",
    "total",
    "pass_rate",
    "verdict",
    "pins",
    "variants",
    "cases",
    "complete",
}
CASE_KEYS = {
    "id",
    "file",
    "defends",
    "severity",
    "variant",
    "repetition",
    "outcome",
    "checks",
    "duration",
    "tokens_in",
    "tokens_out",
    "cost_usd",
    "model",
    "error_kind",
    "workspace",
}


def test_a_run_writes_one_results_file_with_every_key(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(["alpha", "beta", "gamma", "delta"])
    steer(root, "fail", "beta")
    steer(root, "crash", "gamma")

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=2, failed=1, errors=1)
    files = results_files(root)
    assert len(files) == 1
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z\.json", files[0].name)
    doc = only_results(root)
    assert doc.keys() >= TOP_LEVEL
    assert (doc["passed"], doc["failed"], doc["errors"], doc["total"]) == (2, 1, 1, 4)
    assert doc["pass_rate"] == pytest.approx(2 / 3)
    assert doc["verdict"] == "BLOCKED"
    assert doc["complete"] is True
    assert doc["date"].replace(":", "-") + ".json" == files[0].name
    by_id = {c["id"]: c for c in doc["cases"]}
    assert set(by_id) == {"alpha", "beta", "gamma", "delta"}
    for case in by_id.values():
        assert case.keys() >= CASE_KEYS
    assert by_id["beta"]["outcome"] == "failed"
    assert by_id["beta"]["checks"][0]["passed"] is False
    assert "output_matches" in by_id["beta"]["checks"][0]["type"]
    assert by_id["beta"]["checks"][0]["message"]
    assert Path(by_id["beta"]["workspace"]).is_dir()
    assert by_id["gamma"]["outcome"] == "error"
    assert by_id["gamma"]["error_kind"] == "crash"
    assert by_id["alpha"]["defends"] == "AGENTS.md"
    assert by_id["alpha"]["file"] == "evals/alpha.yaml"
    assert "results: evals/results/" in result.stdout.str()


def test_counts_are_per_case_verdict_not_per_repetition(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(["alpha", "beta"])
    steer(root, "fail", "beta")

    pytester.runpytest("-p", "no:cacheprovider", "--eval-repeat", "3")

    doc = only_results(root)
    assert len(doc["cases"]) == 6
    assert (doc["passed"], doc["failed"], doc["total"]) == (1, 1, 2)
    assert sorted(c["repetition"] for c in doc["cases"] if c["id"] == "alpha") == [0, 1, 2]


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_the_jq_trend_one_liner_of_the_spec_works(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(["alpha", "beta"])
    pytester.runpytest("-p", "no:cacheprovider")
    steer(root, "fail", "beta")
    pytester.runpytest("-p", "no:cacheprovider")

    out = subprocess.run(
        "jq -r '[.date, .passed, .total] | @tsv' evals/results/*.json",
        shell=True,
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    rows = [line.split("\t") for line in out.splitlines()]
    assert [r[1:] for r in rows] == [["2", "2"], ["1", "2"]]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r[0]) for r in rows)


def test_no_save_and_save_path(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> None:
    root = make_suite.steered(["alpha"])
    pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save")
    assert results_files(root) == []

    sub = root / "sub"
    sub.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(sub)
        result = pytester.runpytest("-p", "no:cacheprovider", "--eval-save", "out/run.json", root)
    result.assert_outcomes(passed=1)
    saved = sub / "out" / "run.json"
    assert json.loads(saved.read_text("utf-8"))["passed"] == 1
    assert results_files(root) == []


def test_results_dir_from_ini(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> None:
    root = make_suite.steered(["alpha"], ini="eval_results_dir = history/evals\n")
    pytester.runpytest("-p", "no:cacheprovider")
    assert len(list((root / "history" / "evals").glob("*.json"))) == 1


def test_no_file_when_no_eval_item_ran(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> None:
    root = make_suite.steered(["alpha", "beta"])
    pytester.makepyfile(test_unit="def test_plain():\n    assert True\n")

    deselected = pytester.runpytest("-p", "no:cacheprovider", "-k", "plain")
    deselected.assert_outcomes(passed=1)
    assert results_files(root) == []

    pytester.makeini("[pytest]\n")  # no agent: every case is skipped
    skipped = pytester.runpytest("-p", "no:cacheprovider")
    skipped.assert_outcomes(passed=1, skipped=2)
    assert results_files(root) == []


def test_two_runs_in_the_same_millisecond_never_collide(tmp_path: Path) -> None:
    started = datetime(2026, 12, 1, 9, 30, 0, 123000, tzinfo=timezone.utc)
    records = [RunRecord("a", "evals/a.yaml", 0, "AGENTS.md", "normal", outcome="passed")]
    doc = document(records, 0.9, started=started)
    target = tmp_path / f"{resultsfile.file_stem(started)}.json"

    first = resultsfile.write(doc, target)
    second = resultsfile.write(doc, target)

    assert first.name == "2026-12-01T09-30-00.123Z.json"
    assert second.name == "2026-12-01T09-30-00.123Z-1.json"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, second.name])
    assert json.loads(second.read_text("utf-8"))["date"] == "2026-12-01T09:30:00.123Z"


@pytest.mark.xdist
def test_under_xdist_the_controller_writes_one_merged_file(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    ids = [f"case-{i}" for i in range(6)]
    root = make_suite.steered(ids)
    steer(root, "fail", "case-3")

    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "2")

    result.assert_outcomes(passed=5, failed=1)
    doc = only_results(root)
    assert sorted(c["id"] for c in doc["cases"]) == ids
    assert (doc["passed"], doc["failed"], doc["complete"]) == (5, 1, True)
    assert not list((root / "evals" / "results").glob(".tmp-*"))


@pytest.mark.slow
def test_ctrl_c_still_writes_an_incomplete_file(make_suite: SuiteBuilder) -> None:
    root = make_suite.steered(["a-fast", "b-slow", "c-never"])
    steer(root, "slow", "b-slow", "60")
    returncode, out = interrupted_pytest(root, (root / "started" / "b-slow").exists)

    assert returncode == 2, out
    doc = only_results(root)
    assert doc["complete"] is False
    assert "interrupted" in doc["incomplete_reasons"]
    assert [(c["id"], c["outcome"]) for c in doc["cases"]] == [("a-fast", "passed")]
    assert "incomplete: interrupted" in out


@pytest.mark.xdist
def test_a_crashed_xdist_worker_leaves_an_incomplete_file(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(["alpha", "beta", "gamma"])
    # A case whose run kills its own worker process: the crash xdist reports.
    pytester.makeconftest(
        """
        import os
        import pytest

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_setup(item):
            if item.name == "beta" and os.environ.get("PYTEST_XDIST_WORKER"):
                os._exit(1)
        """
    )

    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "2")

    doc = only_results(root)
    assert doc["complete"] is False
    assert any("beta" in reason for reason in doc["incomplete_reasons"]), doc
    assert {c["id"] for c in doc["cases"]} == {"alpha", "gamma"}
    assert "crashed" in result.stdout.str()


def test_results_file_has_the_permissions_the_umask_allows(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        written = resultsfile.write({"date": "x"}, tmp_path / "r.json")
    finally:
        os.umask(umask)
    assert written.stat().st_mode & 0o777 == 0o644


def test_a_results_file_that_cannot_be_written_makes_the_run_inconclusive(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    """A results directory that cannot be made: its parent is a file (chmod would not
    stop root, who runs the tests in CI containers). The run passed, but its record
    is missing: not a clean PASS, exit 2, and nothing left behind."""
    root = make_suite.steered(["alpha", "beta"])
    (root / "blocker").write_text("a file where the results directory's parent should be")

    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "eval_results_dir=blocker/results")

    result.assert_outcomes(passed=2)
    assert result.ret == 2
    result.stdout.re_match_lines(
        [
            r"eval gate: INCONCLUSIVE \(results file not written: "
            r"blocker/results/[-0-9T.]+Z\.json: Not a directory\)",
            r"results file not written: blocker/results/[-0-9T.]+Z\.json: Not a directory",
        ]
    )
    assert sorted(p.name for p in root.iterdir()) == [
        "AGENTS.md",
        "agent.py",
        "blocker",
        "evals",
        "tox.ini",
    ]


@pytest.mark.parametrize("failing", [False, True], ids=["passing", "failing"])
def test_a_save_path_that_cannot_be_written_leaves_no_recordings(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, failing: bool
) -> None:
    """``--eval-save`` names a directory: the recordings directory beside it was
    made and filled during the run; with no results file to read them from, they go.
    A run blocked anyway stays blocked (exit 1), the missing file said."""
    root = make_suite.steered(["alpha", "beta"])
    if failing:
        steer(root, "fail", "beta")
    (root / "out.json").mkdir()

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-save", "out.json")

    out = result.stdout.str()
    assert "results file not written: out.json: Is a directory" in out
    if failing:
        assert result.ret == 1, out
        assert "eval gate: BLOCKED (1 normal case failed: beta)" in out
    else:
        assert result.ret == 2, out
        assert "eval gate: INCONCLUSIVE (results file not written: out.json: Is a directory)" in out
    assert not (root / "out.runs").exists()
    assert list((root / "out.json").iterdir()) == []


HINT = (
    "every pytest run writes a results file to evals/results/, which git does not ignore; "
    "keep them out of commits: echo /evals/results/ >> .gitignore"
)


def test_the_summary_says_once_how_to_ignore_the_results_directory_in_git(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    root = make_suite.steered(["alpha", "beta"])
    outside = pytester.runpytest("-p", "no:cacheprovider")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    # git must not run what the repository's configuration names (an agent may have
    # written it): core.fsmonitor runs a program whenever git reads the index.
    hook = root / "fsmonitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {root / 'HOOK-RAN'}\nexit 1\n", "utf-8")
    hook.chmod(0o755)
    subprocess.run(["git", "-C", str(root), "add", "agent.py"], check=True)
    subprocess.run(["git", "-C", str(root), "config", "core.fsmonitor", str(hook)], check=True)

    inside = pytester.runpytest("-p", "no:cacheprovider")
    saved = pytester.runpytest("-p", "no:cacheprovider", "--eval-save", "run.json")
    (root / ".gitignore").write_text("/evals/results/\n", "utf-8")
    ignored = pytester.runpytest("-p", "no:cacheprovider")

    assert HINT not in outside.stdout.str()
    assert inside.stdout.lines.count(HINT) == 1
    assert inside.stdout.lines[inside.stdout.lines.index(HINT) - 1].startswith(
        "results: evals/results/"
    )
    assert inside.ret == 0
    assert HINT not in saved.stdout.str()
    assert HINT not in ignored.stdout.str()
    assert not (root / "HOOK-RAN").exists()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
@pytest.mark.parametrize(
    ("mount", "why"),
    [
        (["--size", "4096", "--tmpfs"], "No space left on device"),
        (["--ro-bind", "{results}"], "Read-only file system"),
    ],
    ids=["full-disk", "read-only"],
)
def test_a_full_or_read_only_results_directory_makes_the_run_inconclusive(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, mount: list[str], why: str
) -> None:
    """The results directory on a full filesystem (a 4 KiB tmpfs, filled before pytest
    starts) or read-only (bound read-only over itself), as bubblewrap mounts them in a
    user namespace: no privilege needed, and chmod would not stop root. The script runs
    pytest there and lists what the run left before the mount goes."""
    root = make_suite.steered(["alpha", "beta"])
    results = root / "evals" / "results"
    results.mkdir(parents=True)
    (results / "filler").write_text("", "utf-8")
    script = (
        "head -c 4096 /dev/zero > evals/results/filler 2>/dev/null; "
        f"{shlex.quote(sys.executable)} -m pytest -p no:cacheprovider; "
        'echo "status=$?"; echo "left: $(ls -A evals/results)"'
    )
    bwrap = ["bwrap", "--dev-bind", "/", "/", *(m.format(results=results) for m in mount)]
    bwrap.append(str(results))
    probe = subprocess.run([*bwrap, "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"bubblewrap cannot mount here: {probe.stderr.decode()!r}")

    done = subprocess.run(
        [*bwrap, "--chdir", str(root), "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    out = done.stdout
    assert "status=2" in out, out + done.stderr
    assert re.search(
        r"eval gate: INCONCLUSIVE \(results file not written: "
        rf"evals/results/[-0-9T.]+Z\.json: {why}\)",
        out,
    ), out
    # Only the filler is left: no results file, no temporary file, no .runs directory.
    assert out.rstrip().splitlines()[-1] == "left: filler", out
