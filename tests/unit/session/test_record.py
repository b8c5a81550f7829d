"""session/record.py: a run's record from what the run left, without pytest."""

from __future__ import annotations

from pathlib import Path

from pytest_evalcases.agents.base import AgentResult, ToolCall, Usage
from pytest_evalcases.cases.loading import LoadedCase
from pytest_evalcases.cases.parsecache import CaseEntry
from pytest_evalcases.cases.schema import FileExists
from pytest_evalcases.errors import CaseFileError, RunError
from pytest_evalcases.kinds import Outcome, Severity
from pytest_evalcases.results.record import CheckRecord, RunRecord
from pytest_evalcases.run.runner import RunReport
from pytest_evalcases.run.workspace import Variant
from pytest_evalcases.session.record import file_record, json_metadata, run_record

HERE = Path("/work/repo")
ENTRY = CaseEntry("fix-bug", 4, "critical", ("db", "fast"), "AGENTS.md")
CASE = LoadedCase(
    id="fix-bug",
    file=HERE / "evals" / "cases.yaml",
    line=4,
    evals_root=HERE / "evals",
    defends="AGENTS.md",
    severity="critical",
    checks=(),
    description="fixes the bug",
    fixture=HERE / "evals" / "fixtures" / "repo",
    min_pass_rate=0.5,
)


def redact(text: str) -> str:
    return text.replace("s3cret", "[REDACTED]")


def build(case: LoadedCase | CaseFileError, result: RunReport | None) -> RunRecord:
    return run_record(
        ENTRY,
        case,
        Variant(name="b"),
        2,
        "failed",
        result,
        redact=redact,
        file="evals/cases.yaml",
        nodeid="evals/cases.yaml::fix-bug[b-r2]",
        invocation_dir=HERE,
    )


def test_a_run_that_reached_a_verdict() -> None:
    report = RunReport(
        checks=[
            CheckRecord("a", "file_exists", None, True, "ok"),
            CheckRecord("b", "output_matches", "says it", False, "output was s3cret"),
        ],
        agent=AgentResult(
            text="done",
            usage=Usage(input_tokens=10, output_tokens=5),
            cost_usd=0.25,
            # A model's name comes from the agent's output like everything else.
            models=("m1", "m2-s3cret"),
        ),
        workspace=Path("/tmp/ws0"),
        attempts=2,
        duration=1.5,
    )

    assert build(CASE, report) == RunRecord(
        case_id="fix-bug",
        file="evals/cases.yaml",
        line=4,
        defends="AGENTS.md",
        severity="critical",
        variant="b",
        repetition=2,
        outcome="failed",
        kind="case",
        description="fixes the bug",
        tags=["db", "fast"],
        min_pass_rate=0.5,
        checks=[
            CheckRecord("a", "file_exists", None, True, "ok"),
            CheckRecord("b", "output_matches", "says it", False, "output was [REDACTED]"),
        ],
        duration=1.5,
        tokens_in=10,
        tokens_out=5,
        cost_usd=0.25,
        model="m1, m2-[REDACTED]",
        workspace="/tmp/ws0",
        attempts=2,
        nodeid="evals/cases.yaml::fix-bug[b-r2]",
        fixture="/work/repo/evals/fixtures/repo",
        failure_severity="critical",
        failure_mode="unclassified",
    )


def test_a_run_without_usage_has_no_model() -> None:
    record = build(CASE, RunReport(agent=AgentResult(text="")))

    assert (record.tokens_in, record.tokens_out, record.cost_usd, record.model) == (
        None,
        None,
        None,
        None,
    )
    assert record.workspace is None


def test_a_run_error_gives_its_kind_message_workspace_and_attempts() -> None:
    error = RunError("token s3cret refused", kind="authentication")

    record = build(CASE, RunReport(error=error, workspace=Path("/tmp/ws3"), attempts=3))

    assert (record.error_kind, record.error, record.workspace, record.attempts) == (
        "authentication",
        "token [REDACTED] refused",
        "/tmp/ws3",
        3,
    )
    assert record.checks == []


def test_a_case_that_did_not_run_keeps_what_the_case_says() -> None:
    record = build(CASE, None)

    assert (record.kind, record.description, record.min_pass_rate) == (
        "case",
        "fixes the bug",
        0.5,
    )
    assert (record.error_kind, record.error, record.attempts) == (None, None, 1)


def test_a_case_file_that_stopped_loading() -> None:
    error = CaseFileError(str(HERE / "evals" / "cases.yaml"), "bad", line=7, field="checks")

    record = build(error, None)

    assert record.error_kind == "case-file"
    assert record.error == "case file error: evals/cases.yaml:7: checks: bad"
    assert (record.kind, record.description, record.fixture) == ("case", None, None)
    assert record.tags == ["db", "fast"]


def test_a_broken_file_is_an_erroring_record_of_kind_file() -> None:
    error = CaseFileError("/work/repo/evals/x.yaml", "not YAML", line=3)

    record = file_record(
        error, name="x.yaml", file="evals/x.yaml", nodeid="evals/x.yaml::x.yaml", message="m"
    )

    assert record == RunRecord(
        case_id="x.yaml",
        file="evals/x.yaml",
        line=2,
        defends="",
        severity="normal",
        outcome="error",
        kind="file",
        error_kind="case-file",
        error="m",
        nodeid="evals/x.yaml::x.yaml",
    )


def test_a_broken_file_without_a_line_points_at_the_first() -> None:
    error = CaseFileError("/work/repo/evals/x.yaml", "empty")

    record = file_record(error, name="x.yaml", file="x", nodeid="n", message="m")

    assert record.line == 0


def test_a_failed_run_is_as_severe_as_its_most_severe_failed_check() -> None:
    # A task directory's checks: HIGH `a`, MEDIUM `b`, LOW `c` (docs/case-format.md).
    task = LoadedCase(
        id="fix-bug",
        file=HERE / "tasks" / "fix-bug" / "checks.yaml",
        line=0,
        evals_root=HERE / "tasks" / "fix-bug",
        defends="AGENTS.md",
        severity="critical",
        checks=tuple(FileExists(type="file_exists", id=name, path=f"{name}.txt") for name in "abc"),
        kind="task",
        check_severities=("critical", "normal", "advisory"),
    )

    def failing(*ids: str, outcome: Outcome = "failed") -> Severity | None:
        checks = [CheckRecord(i, "file_exists", None, i not in ids, "") for i in "abc"]
        return run_record(
            ENTRY,
            task,
            Variant(name=""),
            0,
            outcome,
            RunReport(checks=checks),
            redact=redact,
            file="tasks/fix-bug/checks.yaml",
            nodeid="tasks/fix-bug/checks.yaml::fix-bug",
            invocation_dir=HERE,
        ).failure_severity

    assert failing("c", outcome="xfailed") == "advisory"
    assert failing("b", "c") == "normal"
    assert failing("a", "c") == "critical"
    assert failing(outcome="passed") is None


def test_a_failed_run_is_classified_into_its_failure_mode_and_no_other_run_is() -> None:
    """docs/results.md, "Failure modes": the first failing check's mode, else a loop by
    ``eval_loop_threshold``, else unclassified; passed and errored runs have none."""
    looping = AgentResult(text="", tool_calls=(ToolCall("Bash", "shell", "make"),) * 3)

    def mode(checks: list[CheckRecord], outcome: Outcome = "failed", **kw: int) -> str | None:
        report = RunReport(checks=checks, agent=looping)
        return run_record(
            ENTRY,
            CASE,
            Variant(name=""),
            0,
            outcome,
            report,
            redact=redact,
            file="evals/cases.yaml",
            nodeid="evals/cases.yaml::fix-bug",
            invocation_dir=HERE,
            **kw,
        ).failure_mode

    refused = CheckRecord("a", "output_matches", None, False, "", mode="refusal")
    plain = CheckRecord("b", "output_matches", None, False, "")
    passed = CheckRecord("c", "output_matches", None, True, "", mode="hallucination")
    assert mode([passed, plain, refused]) == "refusal"
    assert mode([refused], outcome="xfailed") == "refusal"
    assert mode([plain]) == "unclassified"
    assert mode([plain], loop_threshold=3) == "loop"
    assert mode([passed], outcome="passed") is None
    errored = build(CASE, RunReport.failed(RunError("boom", kind="crash")))
    assert errored.failure_mode is None


def test_the_json_report_metadata_carries_the_case_and_its_usage() -> None:
    record = build(CASE, RunReport(agent=AgentResult(text="", cost_usd=0.5)))

    found = json_metadata(record)["evalcases"]

    assert (found["id"], found["variant"], found["repetition"]) == ("fix-bug", "b", 2)
    assert found["usage"]["cost_usd"] == 0.5


def test_a_run_of_a_graded_directory_says_so_and_a_live_run_does_not() -> None:
    report = RunReport(checks=[CheckRecord("a", "file_exists", None, True, "ok")], duration=0.002)
    graded = Variant(name="snapshot", graded_dir=HERE / "snapshots" / "snapshot")

    def record(variant: Variant) -> RunRecord:
        return run_record(
            ENTRY, CASE, variant, 0, "passed", report,
            redact=redact, file="evals/cases.yaml", nodeid="n", invocation_dir=HERE,
        )  # fmt: skip

    assert record(graded).graded_dir is True
    assert record(Variant(name="b")).graded_dir is False
    assert RunRecord.from_dict(record(graded).to_dict()).graded_dir is True
