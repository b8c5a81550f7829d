"""report/messages.py: the texts a run's item reports."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_evalcases.agents.base import AgentResult, Usage
from pytest_evalcases.errors import CaseFileError, RunError
from pytest_evalcases.report import messages
from pytest_evalcases.results.record import CheckRecord
from pytest_evalcases.run.runner import RunReport
from pytest_evalcases.run.workspace import Overlay, Variant


@dataclass(frozen=True)
class Case:
    id: str = "fix-bug"
    severity: str = "critical"
    defends: str = "AGENTS.md"


FAILED = [
    CheckRecord("tests-pass", "command_succeeds", "the tests pass", False, "exit 1"),
    CheckRecord("no-secret", "output_excludes", None, False, "printed s3cret"),
]


def redact(text: str) -> str:
    return text.replace("s3cret", "[REDACTED]")


def test_session_header_says_what_the_run_grades_or_runs() -> None:
    graded = (Variant(graded_dir=Path("/d"), source="d"), Variant("b", Path("/b"), (), "b"))
    configs = (Variant("a", source="git:main"), Variant("b", source="cfg/"))
    tree = (Variant(overlays=(Overlay(Path("/cache")),)),)

    assert messages.session_header("claude", graded) == "evalcases: grading d, b"
    assert messages.session_header("claude", configs) == (
        "evalcases: agent claude; configurations a (git:main), b (cfg/)"
    )
    assert messages.session_header(None, tree) == (
        "evalcases: agent none; configuration from the working tree"
    )
    assert messages.session_header("codex", (Variant(),)) == "evalcases: agent codex"


def test_header_names_case_variant_severity_and_defends() -> None:
    assert messages.header(Case(), "b") == "case fix-bug [b] (critical) defends AGENTS.md"
    assert messages.header(Case(defends=""), "") == "case fix-bug (critical)"


def test_case_file_message_is_relative_to_the_invocation_directory() -> None:
    error = CaseFileError("/r/evals/a.yaml", "unknown field 'x'", line=3, field="checks[0]")

    assert messages.case_file_message(error, Path("/r")) == (
        "case file error: evals/a.yaml:3: checks[0]: unknown field 'x'"
    )
    assert messages.case_file_message(CaseFileError("/r/a.yaml", "empty"), Path("/r/sub")) == (
        "case file error: ../a.yaml: empty"
    )


def test_usage_line() -> None:
    agent = AgentResult(
        text="", usage=Usage(input_tokens=10), cost_usd=0.01234, models=("m1", "m2")
    )

    assert messages.usage_line(agent) == "tokens 10 in / 0 out · cost $0.0123 · model m1, m2"
    assert messages.usage_line(AgentResult(text="")) == ""
    assert messages.usage_line(None) == ""


def test_failure_text_lists_the_failed_checks_workspace_usage_and_attempts() -> None:
    report = RunReport(
        checks=[*FAILED, CheckRecord("ok", "file_exists", None, True, "")],
        agent=AgentResult(text="", usage=Usage(input_tokens=1, output_tokens=2)),
        workspace=Path("/tmp/ws0"),
        attempts=2,
    )

    text = messages.failure_text(
        "case fix-bug (critical)", "fixes it", report, FAILED, graded=False, redact=redact
    )

    assert text == (
        "case fix-bug (critical)\n"
        "  fixes it\n"
        "2 of 3 checks failed:\n"
        "  FAILED tests-pass [command_succeeds] (the tests pass): exit 1\n"
        "  FAILED no-secret [output_excludes]: printed [REDACTED]\n"
        "workspace kept: /tmp/ws0\n"
        "tokens 1 in / 2 out\n"
        "attempts: 2 (earlier ones errored)"
    )


def test_failure_text_of_a_graded_directory() -> None:
    report = RunReport(checks=FAILED[:1], workspace=Path("/done"))

    text = messages.failure_text("h", None, report, FAILED[:1], graded=True, redact=redact)

    assert text == (
        "h\n1 of 1 checks failed:\n"
        "  FAILED tests-pass [command_succeeds] (the tests pass): exit 1\n"
        "graded directory: /done"
    )


def test_error_text() -> None:
    error = RunError("agent said s3cret", kind="crash")

    assert messages.error_text("case x (normal)", error, Path("/tmp/ws1"), redact) == (
        "case x (normal): no verdict (crash)\nagent said [REDACTED]\nworkspace kept: /tmp/ws1"
    )
    assert messages.error_text("h", RunError("e"), None, redact) == "h: no verdict (error)\ne"


def test_advisory_and_red_first_texts() -> None:
    assert messages.advisory_text(FAILED, redact) == (
        "advisory case failed: tests-pass: exit 1; no-secret: printed [REDACTED]"
    )
    assert messages.advisory_text(FAILED[:1], redact, "critical") == (
        "advisory failure of a critical case, only LOW checks failed: tests-pass: exit 1"
    )
    assert messages.red_first_text("case x (normal)", 3) == (
        "case x (normal)\npasses on first write: it tests nothing "
        "(all 3 checks hold against the current configuration)"
    )


def test_failure_line_names_the_checks_first_one_line_each_reason_cut() -> None:
    failed = [
        CheckRecord("no-print", "file_not_matches", None, False, "a.py:3: print(s3cret)\nmore"),
        CheckRecord("tests-pass", "command_succeeds", None, False, "exit status 1: " + "e" * 300),
    ]

    line = messages.failure_line(failed, lambda text: text.replace("s3cret", "[REDACTED]"))

    assert line.startswith(
        "no-print, tests-pass failed: a.py:3: print([REDACTED])…; exit status 1: e"
    )
    assert "\n" not in line
    assert line.endswith("e…")
    assert len(line) < 2 * messages.REASON_CHARS + 40


def test_error_line_gives_the_kind_then_the_first_line() -> None:
    error = RunError("agent command exited with status 3: s3cret\nstderr tail", kind="crash")

    line = messages.error_line(error, lambda text: text.replace("s3cret", "[REDACTED]"))

    assert line == "no verdict (crash): agent command exited with status 3: [REDACTED]…"


def test_checks_text_lists_every_check_with_its_result_then_the_usage() -> None:
    checks = [
        CheckRecord("uses-class", "file_contains", None, True, "src/a.py: found 's3cret'"),
        CheckRecord("tests-pass", "command_succeeds", "the tests pass", False, "exit 1"),
    ]
    agent = AgentResult(text="", usage=Usage(input_tokens=10, output_tokens=5), cost_usd=0.01)

    assert messages.checks_text(checks, agent, redact).splitlines() == [
        "PASSED uses-class [file_contains]: src/a.py: found '[REDACTED]'",
        "FAILED tests-pass [command_succeeds] (the tests pass): exit 1",
        "tokens 10 in / 5 out · cost $0.0100",
    ]
    assert messages.checks_text(checks[:1], None, redact) == (
        "PASSED uses-class [file_contains]: src/a.py: found '[REDACTED]'"
    )
