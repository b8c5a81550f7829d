"""The CI views of a results file (docs/ci.md): workflow commands escaped as GitHub's
toolkit escapes them, errors and repeats as annotations, the job summary's Wilson
interval, GitLab's severities and a stable fingerprint."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pytest_evalcases.report import github, gitlab
from pytest_evalcases.report.findings import BaselineDelta, findings, relative
from pytest_evalcases.results.override import Author, Override
from tests.helpers.results import rec
from tests.unit.results.records import doc as document

ROOT = Path("/repo")


def test_messages_and_properties_are_escaped_as_github_reads_them() -> None:
    assert github.escape_data("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext: a, b"
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_an_errored_case_is_an_error_and_a_message_is_one_command() -> None:
    records = [
        rec("crashy", "error", error_kind="agent_crash", error="exit 3\nstack"),
        rec(
            "wordy",
            "failed",
            line=4,
            checks=[
                {"id": "no-push", "passed": False, "message": "ran: git push, twice\nand more"}
            ],
        ),
        rec("fine", "passed"),
    ]
    found = findings(document(records), ROOT, ROOT)

    assert github.workflow_commands(found) == [
        "::error file=evals/crashy.yaml,line=1,title=eval case crashy reached no verdict"
        "::agent_crash: exit 3",
        "::error file=evals/wordy.yaml,line=5,title=eval case wordy failed (normal)"
        "::no-push: ran: git push, twice",
    ]
    issues = gitlab.codequality(found)
    assert [(i["check_name"], i["severity"], i["location"]) for i in issues] == [
        ("error", "major", {"path": "evals/crashy.yaml", "lines": {"begin": 1}}),
        ("no-push", "major", {"path": "evals/wordy.yaml", "lines": {"begin": 5}}),
    ]
    # The identity of an issue is its case and check: the same from run to run.
    again = gitlab.codequality(findings(document(records[1:]), ROOT, ROOT))
    assert again[0]["fingerprint"] == issues[1]["fingerprint"]


def test_repeats_show_the_runs_pass_rate_with_its_wilson_interval() -> None:
    records = [
        rec("flaky", "passed" if i < 3 else "failed", repetition=i, min_pass_rate=0.8)
        for i in range(5)
    ]
    records += [rec("steady", "passed", repetition=i, severity="critical") for i in range(5)]
    doc = document(records)
    found = findings(doc, ROOT, ROOT)

    summary = github.job_summary(doc, found, None)

    assert "| suite | 1/2 | 8/10 | 0 | 50.0% (runs 8/10, 95% CI 49%–94%) | n/a | n/a |" in summary
    assert github.workflow_commands(found) == [
        "::error file=evals/flaky.yaml,line=1,title=eval case flaky failed (normal)"
        "::passed 3 of 5 graded runs (minimum pass rate 80%25)%0Ac"
    ]


def test_the_comment_is_the_verdict_and_one_line_when_all_is_green() -> None:
    doc = document([rec("a", "passed"), rec("b", "passed")])
    delta = BaselineDelta.from_dict(
        {"file": "main.json", "pass_rate": [0.5, 1.0], "regressed": [], "improved": ["b"]}
    )

    assert github.comment(doc, findings(doc, ROOT, ROOT), delta) == (
        "<!-- pytest-evalcases -->\n"
        "### eval gate: PASS\n"
        "\n"
        "suite: 2/2 cases passed, 2/2 checks; "
        "pass rate (critical and normal) 50.0% -> 100.0% against `main.json`.\n"
    )


def test_a_block_lifted_by_an_override_is_said_with_what_and_who() -> None:
    lifted = Override(
        "flaky upstream",
        "applied",
        "",
        "BLOCKED",
        ("mean cost per run exceeds 1.3x the baseline",),
        by=Author("Ada", "ada@example.com", "git config"),
    )
    doc = replace(document([rec("a", "passed")]), override=lifted)

    comment = github.comment(doc, findings(doc, ROOT, ROOT), None)

    assert "Override: override applied: BLOCKED lifted (mean cost per run exceeds 1.3x" in comment
    assert "the baseline) (by Ada" in comment
    # Not the one-line green comment: the table follows.
    assert "| suite | 1/1 |" in comment


def test_markdown_in_a_message_is_shown_as_it_is() -> None:
    records = [
        rec("md", "failed", checks=[{"id": "c", "passed": False, "message": "<b>x</b> | *y*"}])
    ]
    doc = document(records)
    summary = github.job_summary(doc, findings(doc, ROOT, ROOT), None)

    assert "c: \\<b\\>x\\</b\\> \\| \\*y\\*" in summary


def test_case_files_are_named_from_the_ci_root() -> None:
    assert relative("evals/a.yaml", Path("/repo/sub"), ROOT) == "sub/evals/a.yaml"
    assert relative("/repo/evals/a.yaml", Path("/elsewhere"), ROOT) == "evals/a.yaml"


def test_a_run_without_a_verdict_is_summarised_as_inconclusive() -> None:
    doc = document([rec("a", "passed"), rec("b", "error", error_kind="auth", error="401")])
    summary = github.job_summary(doc, findings(doc, ROOT, ROOT), None)

    assert summary.startswith("## eval gate: INCONCLUSIVE\n")
    assert "- `b` reached no verdict at `evals/b.yaml:1`: auth: 401\n" in summary


def test_a_long_list_of_failures_is_cut_and_counted() -> None:
    records = [rec(f"case-{i:03d}", "failed") for i in range(github.MAX_LISTED + 7)]
    doc = document(records)
    found = findings(doc, ROOT, ROOT)

    summary = github.job_summary(doc, found, None)

    assert summary.count("\n- `case-") == github.MAX_LISTED
    assert summary.endswith("\n- and 7 more\n")
    assert len(github.workflow_commands(found)) == github.MAX_LISTED + 7
