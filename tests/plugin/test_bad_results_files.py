"""Results files that are not ones the plugin can read, given to every reader as a user
gives them: the ``evalcases`` commands as subprocesses, pytest's options in pytester
sessions (docs/results.md, "Reading results files"). Each reader says one clear
sentence naming the file; none prints a traceback or an INTERNALERROR, and ``evalcases
trend`` skips the file with a warning and reports the others."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.results import results_files
from tests.helpers.suite import SuiteBuilder

#: The console script, installed beside the interpreter running the tests.
EVALCASES = Path(sys.executable).parent / "evalcases"

#: Deeper than any recursion limit: Python's JSON parser gives up on it.
DEPTH = 100_000


def evalcases(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EVALCASES), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def good(make_suite: SuiteBuilder, pytester: pytest.Pytester) -> Path:
    """The results file of a real run of two passing cases."""
    make_suite.steered(["alpha", "beta"])
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
    [path] = results_files(pytester.path)
    return path


def deep(good: Path) -> Path:
    """``good`` with a pin nested :data:`DEPTH` levels deep: valid JSON."""
    text = good.read_text("utf-8")
    nested = "[" * DEPTH + "]" * DEPTH
    path = good.with_name("deep.json")
    path.write_text(text.replace('"pins": {', f'"pins": {{"nested": {nested}, ', 1), "utf-8")
    return path


def future(good: Path) -> Path:
    """``good`` as a version that writes format 99 would have written it."""
    data = json.loads(good.read_text("utf-8"))
    assert data["format"] == 1
    data["format"] = 99
    path = good.with_name("future.json")
    path.write_text(json.dumps(data), "utf-8")
    return path


def assert_one_clear_error(done: subprocess.CompletedProcess[str], message: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [message], done.stderr
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    "command", [("compare", "{bad}", "{good}"), ("compare", "{good}", "{bad}"), ("merge", "{bad}")]
)
def test_compare_and_merge_refuse_a_deeply_nested_file(
    good: Path, command: tuple[str, ...]
) -> None:
    bad = deep(good)
    args = [a.format(bad=bad, good=good) for a in command]

    done = evalcases(good.parent, *args)

    assert_one_clear_error(
        done, f"evalcases: {bad}: not a results file: nested more than 64 levels deep"
    )
    assert "BLOCKED" not in done.stdout + done.stderr


def test_show_refuses_a_deeply_nested_file(good: Path) -> None:
    bad = deep(good)

    done = evalcases(good.parent, "show", str(bad), "alpha")

    assert_one_clear_error(
        done, f"evalcases: {bad}: not a results file: nested more than 64 levels deep"
    )


@pytest.mark.parametrize(
    "command", [("compare", "{bad}", "{good}"), ("compare", "{good}", "{bad}"), ("merge", "{bad}")]
)
def test_compare_and_merge_refuse_an_unknown_format_version(
    good: Path, command: tuple[str, ...]
) -> None:
    bad = future(good)
    args = [a.format(bad=bad, good=good) for a in command]

    done = evalcases(good.parent, *args)

    assert_one_clear_error(
        done,
        f"evalcases: {bad}: results file format 99 is not known: this version of "
        "pytest-evalcases reads format 1 (a newer version may have written it)",
    )


def test_trend_skips_a_deeply_nested_or_future_file_with_a_warning(good: Path) -> None:
    bad, newer = deep(good), future(good)

    done = evalcases(good.parent, "trend", str(good.parent))

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        f"evalcases trend: warning: skipped {bad}: not a results file: "
        "nested more than 64 levels deep",
        f"evalcases trend: warning: skipped {newer}: results file format 99 is not known: "
        "this version of pytest-evalcases reads format 1 (a newer version may have written it)",
    ]
    # The good file is still the trend.
    assert "last 1 of 1 runs" in done.stdout


@pytest.mark.parametrize("option", ["--eval-baseline", "--eval-regrade", "--eval-replay"])
@pytest.mark.parametrize("kind", ["deep", "future"])
def test_pytest_options_refuse_the_file_as_a_usage_error(
    good: Path, pytester: pytest.Pytester, option: str, kind: str
) -> None:
    bad = deep(good) if kind == "deep" else future(good)
    why = (
        "not a results file: nested more than 64 levels deep"
        if kind == "deep"
        else "results file format 99 is not known"
    )

    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--eval-no-save", f"{option}={bad}"
    )

    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    assert "INTERNALERROR" not in out
    assert "Traceback" not in out
    assert f"{option}: {bad}: {why}" in out
