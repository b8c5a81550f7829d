"""Failure modes in a session (docs/case-format.md, "Failure modes of checks";
docs/results.md, "Failure modes"): a check's ``mode:`` is validated where the case file
says it, and a failed run's ``failure_mode`` reaches the results file: its first
failing check's mode, ``loop`` when the fake ``claude``'s transcript repeats a call
``eval_loop_threshold`` times, else ``unclassified``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_evalcases import cli
from tests.helpers.agents import FAKES, fake_credentials
from tests.helpers.results import only_results
from tests.helpers.suite import SuiteBuilder

#: Prints ``wrong answer``, whatever it is asked.
WRONG = "print('wrong answer')\n"


def case(case_id: str, checks: str, severity: str = "normal") -> str:
    return f"id: {case_id}\ndefends: AGENTS.md\nseverity: {severity}\nprompt: go\nchecks:\n{checks}"


def test_a_mode_that_names_none_is_an_error_naming_the_file_line_field_and_the_names(
    make_suite: SuiteBuilder, pytester: pytest.Pytester
) -> None:
    make_suite(
        WRONG,
        {
            "bad": case(
                "bad",
                "  - type: output_matches\n    pattern: ok\n    mode: tool-misuse\n",
            )
        },
    )

    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save")

    assert result.ret == pytest.ExitCode.INTERRUPTED  # INCONCLUSIVE: a file did not load
    assert (
        "case file error: evals/bad.yaml:8: checks[0].mode: expected 'planning_error', "
        "'tool_misuse', 'state_corruption', 'context_overflow', 'hallucination', 'loop' or "
        "'refusal' (got 'tool-misuse'); did you mean 'tool_misuse'?"
    ) in result.stdout.str()


@pytest.mark.parametrize(
    "workers", [pytest.param((), id="serial"), pytest.param(("-n", "2"), marks=pytest.mark.xdist)]
)
def test_failed_runs_carry_their_first_failing_check_s_mode_in_the_results_file(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    root = make_suite(
        WRONG,
        {
            "misuse": case(
                "misuse",
                "  - {type: output_matches, pattern: wrong, mode: refusal}\n"
                "  - {type: output_matches, pattern: '^ok'}\n"
                "  - {type: output_not_matches, pattern: wrong, mode: tool_misuse}\n"
                "  - {type: output_matches, pattern: '^right', mode: hallucination}\n",
            ),
            "plain": case("plain", "  - {type: output_matches, pattern: '^ok'}\n"),
            "fine": case("fine", "  - {type: output_matches, pattern: wrong, mode: refusal}\n"),
            "advisory": case(
                "advisory",
                "  - {type: output_matches, pattern: '^ok', mode: planning_error}\n",
                severity="advisory",
            ),
        },
    )

    result = pytester.runpytest("-p", "no:cacheprovider", *workers)

    result.assert_outcomes(passed=1, failed=2, xfailed=1)
    by_id = {c["id"]: c for c in only_results(root)["cases"]}
    assert {k: c["failure_mode"] for k, c in by_id.items()} == {
        "misuse": "tool_misuse",
        "plain": "unclassified",  # the command agent gives no transcript: no loop either
        "fine": None,
        "advisory": "planning_error",
    }
    assert [c.get("mode") for c in by_id["misuse"]["checks"]] == [
        "refusal",
        None,
        "tool_misuse",
        "hallucination",
    ]


def _looping_stream(path: Path, repeats: int) -> Path:
    """A Claude Code stream-json transcript that runs ``pytest -x`` ``repeats`` times."""
    session = "9e0b7f3a-2c1d-4e5f-8a6b-7c8d9e0f1a2b"
    lines: list[dict[str, object]] = [
        {"type": "system", "subtype": "init", "session_id": session, "model": "claude-test-1"}
    ]
    for i in range(repeats):
        use = {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "pytest -x"}}
        lines.append(
            {
                "type": "assistant",
                "message": {"role": "assistant", "model": "claude-test-1", "content": [use]},
                "session_id": session,
            }
        )
        result = {"tool_use_id": f"t{i}", "type": "tool_result", "content": "1 failed"}
        message = {"role": "user", "content": [result]}
        lines.append({"type": "user", "message": message, "session_id": session})
    lines.append(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "num_turns": repeats + 1,
            "result": "still failing",
            "session_id": session,
            "total_cost_usd": 0.01,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }
    )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return path


@pytest.fixture
def looping(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """The fake ``claude`` answering every run with a transcript of five ``pytest -x``."""
    fake_credentials(monkeypatch)
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
    sample = _looping_stream(pytester.path / "loop.jsonl", 5)
    monkeypatch.setenv("FAKE_AGENT_SAMPLE", str(sample))
    pytester.makeini(f"[pytest]\neval_agent = claude\neval_sandbox_rw = {pytester.path}\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "stuck.yaml").write_text(
        case("stuck", "  - {type: output_matches, pattern: 'all tests pass'}\n"), "utf-8"
    )
    return pytester


def test_a_transcript_that_repeats_a_call_threshold_times_is_a_loop(
    looping: pytest.Pytester,
) -> None:
    looped = looping.runpytest("-p", "no:cacheprovider", "--eval-transcript", "--eval-save", "a")
    higher = looping.runpytest(
        "-p", "no:cacheprovider", "--eval-transcript", "--eval-save", "b",
        "-o", "eval_loop_threshold=6",
    )  # fmt: skip

    looped.assert_outcomes(failed=1)
    higher.assert_outcomes(failed=1)
    modes = [json.loads((looping.path / n).read_text())["cases"][0] for n in "ab"]
    assert [m["failure_mode"] for m in modes] == ["loop", "unclassified"]


def test_a_loop_threshold_below_two_is_a_usage_error(looping: pytest.Pytester) -> None:
    result = looping.runpytest("-p", "no:cacheprovider", "-o", "eval_loop_threshold=1")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*eval_loop_threshold expects a whole number >= 2, got '1'*"])


#: Answers with the text of ``answer`` in the rootdir (its first argument).
STEERED = """
import pathlib, sys
print((pathlib.Path(sys.argv[1]) / "answer").read_text())
"""
#: Three cases whose first failing check tells a tool misuse (``bad``) from a
#: hallucination (anything but ``ok``).
THREE = {
    f"c{i}": case(
        f"c{i}",
        "  - {type: output_not_matches, pattern: bad, mode: tool_misuse}\n"
        "  - {type: output_matches, pattern: '^ok', mode: hallucination}\n",
    )
    for i in range(3)
}


def test_a_new_failure_mode_blocks_against_the_baseline_and_compare_says_so(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same three cases fail in the baseline and now, so no other rule of the
    baseline gate speaks: only their failures' mode changed."""
    root = make_suite(STEERED, THREE, command="{python} {rootdir}/agent.py {rootdir} {prompt}")
    (root / "answer").write_text("wrong")
    pytester.runpytest("-p", "no:cacheprovider", "--eval-save", "base.json")
    (root / "answer").write_text("bad")

    now = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-baseline", "base.json", "--eval-save", "now.json"
    )
    same = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-baseline", "now.json", "--eval-save", "same.json"
    )

    reason = "baseline: new failure mode tool_misuse: 100% of failures (baseline 0%)"
    assert reason in now.stdout.str()
    assert "new failure mode" not in same.stdout.str()
    doc = json.loads((root / "now.json").read_text())
    assert doc["baseline"]["failure_modes"] == [{"hallucination": 3}, {"tool_misuse": 3}]
    assert doc["policy"]["baseline"] == {
        "file": "base.json",
        "tolerance": 3.0,
        "mode_rare": 0.05,
        "mode_new": 0.15,
        "mode_min_failures": 3,
    }
    assert cli.main(["compare", str(root / "base.json"), str(root / "now.json")]) == 1
    assert "B would be BLOCKED against A: new failure mode tool_misuse" in capsys.readouterr().out
