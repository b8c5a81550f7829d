"""What the agent drivers share: JSON output, error kinds and messages, small readers."""

from __future__ import annotations

import pytest

from pytest_evalcases import process
from pytest_evalcases.agents import base, output
from pytest_evalcases.process import ProcessResult


def _result(
    returncode: int | None, stdout: str = "", stderr: str = "", *, cut: bool = False
) -> ProcessResult:
    return ProcessResult(returncode, stdout, stderr, duration=1.2345, stdout_truncated=cut)


def test_json_objects_reads_documents_lines_and_arrays_among_plain_text() -> None:
    text = 'Reading prompt from stdin...\n{"a": 1}\n[{"b": 2}, 3, {"c": 3}]\n{\n  "d": 4\n}\n{bad\n'

    assert output.json_objects(text) == [{"a": 1}, {"b": 2}, {"c": 3}, {"d": 4}]


@pytest.mark.parametrize(
    ("words", "kind"),
    [
        (("Invalid API key · Please run /login",), "authentication"),
        (("insufficient_quota", "429"), "billing"),
        (("429 Too Many Requests",), "rate-limit"),
        (("segfault", None), "agent"),
    ],
)
def test_classify(words: tuple[object, ...], kind: str) -> None:
    assert output.classify(*words) == kind


def test_agent_error_phrases_the_kind_and_the_hint() -> None:
    err = output.agent_error("claude", "billing", " no credit ", hint="top up")

    assert err.kind == "billing"
    assert str(err) == "claude was refused for billing (no credit): no credit\n  hint: top up"
    assert str(output.agent_error("x", "odd", "")) == "x reported an error: (no message)"


def test_no_result_error_after_exit_0_is_a_parse_error() -> None:
    err = output.no_result_error("codex", _result(0, "hello\n", cut=True), "turn.completed event")

    assert err.kind == "parse"
    assert str(err) == (
        "codex exited 0 but its output has no turn.completed event (its output was longer "
        "than the cap and was cut); stdout: hello"
    )


def test_no_result_error_after_a_failure_is_a_crash_or_a_config_error() -> None:
    crash = output.no_result_error("gemini", _result(-9, "out", "boom"), "JSON result")
    config = output.no_result_error("gemini", _result(1, "", ""), "JSON result", hint="trust")

    assert (crash.kind, str(crash)) == (
        "crash",
        "gemini was killed by SIGKILL without JSON result: boom",
    )
    assert (config.kind, str(config)) == (
        "config",
        "gemini exited with status 1 without JSON result: (no output)\n  hint: trust",
    )


def test_tool_input_prefers_a_named_string_field() -> None:
    assert output.tool_input({"command": "ls", "x": 1}, "command") == "ls"
    assert output.tool_input({"path": "a", "n": 1}, "command") == '{"path":"a","n":1}'
    assert output.tool_input("raw") == "raw"
    assert output.tool_kind("Bash", {"Bash": "shell"}) == "shell"
    assert output.tool_kind("mcp__x", {"Bash": "shell"}) == "other"


def test_number_readers() -> None:
    assert [output.as_int(v) for v in (3, 3.0, 3.5, True, "3", None)] == [
        3,
        3,
        None,
        None,
        None,
        None,
    ]
    assert [output.as_float(v) for v in (2, 0.5, False, "1")] == [2.0, 0.5, None, None]
    assert output.as_object({"a": 1}) == {"a": 1}
    assert output.as_object([1]) == {}


def test_option_value_takes_the_last_of_either_form() -> None:
    args = ("-m", "a", "--model=b", "--other", "c")

    assert output.option_value(args, "-m", "--model") == "b"
    assert output.option_value(("-m", "a"), "-m", "--model") == "a"
    assert output.option_value(("--model",), "--model") is None


def test_measured_ms() -> None:
    assert output.measured_ms(_result(0)) == 1234


def test_what_a_process_said() -> None:
    assert _result(1, "out\n", "err\n").said() == "err"
    assert _result(1, "out\n", "  \n").said() == "out"
    assert _result(1).said() == "(no output)"
    assert _result(1, "x" * 700).said() == "…" + "x" * 600


def test_truncated_is_either_stream() -> None:
    assert _result(0, cut=True).truncated is True
    assert ProcessResult(0, "", "", 0.0, stderr_truncated=True).truncated is True
    assert _result(0).truncated is False


def test_tail_is_importable_from_agents_base() -> None:
    assert base.tail is process.tail
    assert process.tail("  abc  ", limit=2) == "…bc"


@pytest.mark.parametrize(
    "words",
    [
        "API Error: 529 Overloaded",
        "API Error: 500 boom. This is a server-side issue, usually temporary",
        "We're currently experiencing high demand, which may cause temporary errors.",
        "503 Service Unavailable",
    ],
)
def test_the_providers_own_failures_are_server_errors(words: str) -> None:
    assert output.classify(words) == "server"


def test_a_number_inside_a_word_is_not_a_status() -> None:
    assert output.classify("gave up after 500ms") == "agent"
