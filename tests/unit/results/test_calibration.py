"""Calibrating judge checks (docs/judge.md, "Calibrating"): Cohen's kappa against
hand-computed values and in its degenerate cases, the threshold, the labels file, the
report the gate reads, and the spot checks and summary lines of judged runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_evalcases.results import judging
from pytest_evalcases.results.calibration import (
    CalibrationError,
    CheckCalibration,
    Confusion,
    Label,
    append_labels,
    calibrate,
    load_labels,
    read_report,
    report_path,
    table,
    write_report,
)
from pytest_evalcases.results.record import CheckRecord, JudgeRecord, RunRecord


@pytest.mark.parametrize(
    ("table", "kappa"),
    [
        # p_o = 35/50 = 0.7; human yes 0.5, judge yes 0.6: p_e = 0.3 + 0.2 = 0.5 -> 0.4.
        ((20, 5, 10, 15), 0.4),
        ((15, 0, 0, 15), 1.0),
        # Never agreeing, each half yes: p_o = 0, p_e = 0.5 -> -1.
        ((0, 15, 15, 0), -1.0),
        # The person always yes, the judge 2/3 yes: p_o = p_e = 2/3 -> 0.
        ((10, 5, 0, 0), 0.0),
        # p_o = 26/30, p_e = 0.5 -> 0.7333.
        ((13, 2, 2, 13), 0.7333),
    ],
)
def test_kappa_is_the_hand_computed_value(table: tuple[int, int, int, int], kappa: float) -> None:
    assert Confusion(*table).kappa == pytest.approx(kappa, abs=1e-4)


@pytest.mark.parametrize("table", [(0, 0, 0, 0), (30, 0, 0, 0), (0, 0, 0, 30)])
def test_kappa_is_undefined_without_labels_or_when_both_always_say_the_same(
    table: tuple[int, int, int, int],
) -> None:
    one = CheckCalibration("c", Confusion(*table))

    assert one.kappa is None
    assert not one.calibrated


def test_a_check_is_calibrated_with_kappa_of_0_6_on_30_labels_and_not_on_fewer() -> None:
    assert CheckCalibration("c", Confusion(12, 3, 3, 12)).calibrated  # kappa 0.6, n 30
    # Exactly 0.6 too where floating point would make it 0.5999999999999996.
    assert CheckCalibration("c", Confusion(4, 1, 3, 27)).kappa == 0.6
    assert CheckCalibration("c", Confusion(4, 1, 3, 27)).calibrated
    assert not CheckCalibration("c", Confusion(11, 4, 3, 12)).calibrated  # kappa < 0.6
    assert not CheckCalibration("c", Confusion(14, 0, 0, 15)).calibrated  # kappa 1, n 29


def test_the_table_counts_human_against_judge() -> None:
    pairs = [(True, True)] * 3 + [(True, False)] * 2 + [(False, True)] + [(False, False)] * 4

    assert Confusion.of(pairs) == Confusion(3, 2, 1, 4)


def test_labels_are_matched_to_the_judged_runs_by_file_run_and_check() -> None:
    labels = [
        Label("explains", "a.json", "n1", True, "ana"),
        Label("explains", "a.json", "n2", False, "ana"),
        Label("explains", "b.json", "n1", True, "ana"),
        Label("other", "a.json", "n1", True, "ana"),
    ]
    judged = {("a.json", "n1", "explains"): True, ("a.json", "n2", "explains"): True}

    found = calibrate(labels, judged)

    assert found["explains"].confusion == Confusion(1, 0, 1, 0)
    assert found["explains"].unmatched == 1
    assert (found["other"].n, found["other"].unmatched) == (0, 1)


def test_a_run_the_judge_gave_no_answer_on_is_left_out_of_n_and_reported() -> None:
    labels = [Label("explains", "a.json", f"n{i}", i < 2, "ana") for i in range(4)]
    judged: dict[tuple[str, str, str], bool | str] = {
        ("a.json", "n0", "explains"): True,
        ("a.json", "n1", "explains"): "the judge's answer is not in the fixed format",
        ("a.json", "n2", "explains"): False,
        ("a.json", "n3", "explains"): "the judge (claude) failed: timed out",
    }

    found = calibrate(labels, judged)["explains"]

    assert (found.confusion, found.errors, found.unmatched) == (Confusion(1, 0, 0, 1), 2, 0)
    assert table({"explains": found})[1:] == [
        "  2 label(s) left out of n: the judge gave no answer on their run"
    ]


def test_the_labels_file_round_trips_and_appends(tmp_path: Path) -> None:
    path = tmp_path / "labels.yaml"
    first = Label("explains", "../r.json", "evals/a.yaml::a[r1]", True, "ana")
    second = Label("explains", "../r.json", "evals/a.yaml::a[r2]", False, "bo")

    append_labels(path, [first])
    append_labels(path, [second])

    assert load_labels(path) == [first, second]
    assert "label: 'yes'" in path.read_text() or 'label: "yes"' in path.read_text()


def test_unquoted_yaml_yes_and_no_are_read_as_answers(tmp_path: Path) -> None:
    path = tmp_path / "labels.yaml"
    path.write_text(
        "labels:\n  - {check: c, results: r.json, run: n, label: yes, labeller: a}\n"
        "  - {check: c, results: r.json, run: m, label: no}\n"
    )

    assert [label.yes for label in load_labels(path)] == [True, False]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("- 1\n", "expected a mapping with a list `labels:`"),
        ("labels:\n  - {check: c, results: r.json, label: yes}\n", "labels[0]: missing run"),
        (
            "labels:\n  - {check: c, results: r.json, run: n, label: maybe}\n",
            "labels[0].label: expected yes or no, got 'maybe'",
        ),
    ],
)
def test_a_bad_labels_file_is_named(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "labels.yaml"
    path.write_text(text)

    with pytest.raises(CalibrationError, match=re.escape(f"{path}: ") + ".*" + re.escape(said)):
        load_labels(path)


def test_the_report_beside_the_labels_is_what_the_gate_reads(tmp_path: Path) -> None:
    labels = tmp_path / "evals" / "judge-labels.yaml"
    report = report_path(labels)
    found = {"explains": CheckCalibration("explains", Confusion(13, 2, 2, 13), 1, 2)}

    write_report(report, found)

    assert report == tmp_path / "evals" / "judge-labels.kappa.json"
    assert read_report(report) == found
    assert read_report(tmp_path / "absent.kappa.json") == {}
    report.write_text('{"checks": {}}')
    with pytest.raises(CalibrationError, match="not a calibration report"):
        read_report(report)


def _run(node: str, yes: bool, *, same: bool = False, blocking: bool = False) -> RunRecord:
    judgement = JudgeRecord(yes, "because", "claude", same_provider=same, blocking=blocking)
    check = CheckRecord("explains", "judge", None, yes, "m", judge=judgement)
    return RunRecord("a", "evals/a.yaml", 1, "AGENTS.md", "critical", nodeid=node, checks=[check])


def test_spot_checks_are_a_tenth_of_the_judged_runs_at_least_one_and_seeded() -> None:
    runs = [_run(f"evals/a.yaml::a[r{i}]", i % 2 == 0) for i in range(25)]

    picked = judging.spot_checks(runs)

    assert len(picked) == 3
    assert picked == judging.spot_checks(list(reversed(runs)))
    assert len(judging.spot_checks(runs[:2])) == 1
    assert judging.spot_checks([]) == []


def test_the_summary_names_uncalibrated_checks_and_a_judge_of_the_agents_provider() -> None:
    lines = judging.summary_lines([_run("n1", False, same=True), _run("n2", True, same=True)])

    assert lines == [
        "judge: uncalibrated, reported and never blocking: explains (no calibration)",
        "judge: same provider as the agent (same-provider bias): explains",
        "judge: 1 judged run to spot-check (results file `judge.spot_checks`; label with "
        "`evalcases calibrate --add`)",
    ]
    assert judging.summary_lines([_run("n1", False, blocking=True)])[:1] == [
        "judge: 1 judged run to spot-check (results file `judge.spot_checks`; label with "
        "`evalcases calibrate --add`)"
    ]
