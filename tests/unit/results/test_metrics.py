"""results/metrics.py: a run's metrics per variant (docs/results.md, "Metrics"), and how
the gate, the results file, ``evalcases merge`` and ``evalcases compare`` carry them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.report import compare, metrics
from pytest_evalcases.results import baseline, gate
from pytest_evalcases.results.decode import FieldError, from_dict
from pytest_evalcases.results.merge import merge
from pytest_evalcases.results.metrics import compute_metrics
from pytest_evalcases.results.policy import GatePolicy
from pytest_evalcases.results.record import RunRecord

from .records import doc, run


def spent(
    case: str, tokens: int | None, variant: str = "", rep: int = 0, **kw: object
) -> RunRecord:
    """A passed run of ``case`` that reported ``tokens`` (all of them input)."""
    return run(case, "passed", variant, repetition=rep, tokens_in=tokens, **kw)


def test_wall_time_percentiles_of_passed_and_failed_runs_are_apart() -> None:
    passed = [run(f"p{i}", "passed", duration=float(i)) for i in range(1, 11)]
    # An advisory failure is a failure; an errored run's time counts in neither.
    failed = [
        run("f1", "failed", duration=100.0),
        run("f2", "xfailed", duration=200.0),
        run("f3", "failed", duration=300.0),
    ]
    errored = run("e", "error", duration=5000.0, checks=[])

    (m,) = compute_metrics([*passed, *failed, errored]).variants

    assert m.wall_passed.to_dict() == {"runs": 10, "p50": 5.0, "p90": 9.0, "p99": 10.0}
    assert m.wall_failed.to_dict() == {"runs": 3, "p50": 200.0, "p90": 300.0, "p99": 300.0}
    assert (m.runs, m.graded, m.passed) == (14, 13, 10)
    assert m.success_rate == pytest.approx(10 / 13)
    assert m.ci95 == (0.4974, 0.9182)


def test_runs_that_graded_a_directory_have_no_wall_time() -> None:
    # No agent ran in them: their duration is the checks' (docs/results.md, "Metrics").
    graded = [run(f"g{i}", "passed", duration=0.002, graded_dir=True) for i in range(3)]
    live = [run("live", "failed", duration=41.0)]

    (m,) = compute_metrics([*graded, *live]).variants

    assert m.wall_passed.to_dict() == {"runs": 0, "p50": None, "p90": None, "p99": None}
    assert m.wall_failed.to_dict() == {"runs": 1, "p50": 41.0, "p90": 41.0, "p99": 41.0}
    assert (m.runs, m.graded, m.passed) == (4, 4, 3)
    assert [line for line in metrics.lines(m) if "wall" in line] == ["  wall 41.0 s (1 failed)"]


def test_tokens_and_cost_per_run_are_mean_and_sample_sd_of_what_was_reported() -> None:
    records = [
        run("a", "passed", tokens_in=80, tokens_out=20, cost_usd=0.01),
        run("b", "failed", tokens_in=150, tokens_out=50, cost_usd=0.03),
        run("c", "passed", tokens_in=300),
        # Reported nothing (the command agent, a scripted run): not a zero.
        run("d", "passed"),
        run("e", "error", checks=[]),
    ]

    (m,) = compute_metrics(records).variants

    assert m.tokens is not None
    assert (m.tokens.runs, m.tokens.mean, m.tokens.sd) == (3, 200.0, 100.0)
    assert m.cost is not None
    assert (m.cost.runs, m.cost.mean) == (2, pytest.approx(0.02))
    assert m.cost.sd == pytest.approx(0.0141421356)
    assert compute_metrics([run("d", "passed")]).variants[0].tokens is None


def test_a_runaway_is_measured_against_every_run_of_the_file_not_its_own_case() -> None:
    # "hog" always takes 10,000 tokens: against its own runs it is never unusual, against
    # the file's mean (2,583) it is a runaway every time, in whichever variant it ran.
    records = [spent("hog", 10_000, "main", rep) for rep in range(2)]
    records += [spent(f"c{i}", 1000, "main") for i in range(4)]
    records += [spent(f"c{i}", 1000, "pr") for i in range(4)]
    # "spiky" took 5x its other run, but under 3x the file's mean: no runaway.
    records += [spent("spiky", 500, "pr"), spent("spiky", 2500, "pr", 1)]

    m = compute_metrics(records, ["main", "pr"])

    assert m.tokens_mean == pytest.approx(31_000 / 12)
    main, pr = m.variants
    assert [
        (r.case_id, r.variant, r.repetition, r.tokens, r.times_mean) for r in main.runaways
    ] == [
        ("hog", "main", 0, 10_000, 3.87),
        ("hog", "main", 1, 10_000, 3.87),
    ]
    assert pr.runaways == ()
    assert main.runaways[0].to_dict() == {
        "id": "hog",
        "variant": "main",
        "repetition": 0,
        "tokens": 10_000,
        "times_mean": 3.87,
    }


def test_runs_without_tokens_do_not_lower_the_runaway_yardstick() -> None:
    # Were the ten silent runs zeros, the mean would be 615 and 2,000 a runaway.
    records = [spent("a", 2000), spent("b", 1000), spent("c", 1000), spent("d", 1000)]
    records += [spent(f"silent{i}", None) for i in range(10)]

    m = compute_metrics(records)

    assert m.tokens_mean == 1250.0
    assert m.variants[0].runaways == ()
    assert m.variants[0].tokens is not None
    assert m.variants[0].tokens.runs == 4


def test_failures_count_by_mode_and_errors_by_kind_most_first() -> None:
    records = [
        run("a", "failed", failure_mode="tool_misuse"),
        run("b", "failed", failure_mode="tool_misuse"),
        run("c", "xfailed", failure_mode="loop"),
        # Not classified (a file written before failure modes): unclassified.
        run("d", "failed"),
        run("e", "error", error_kind="timeout", checks=[]),
        run("f", "error", error_kind="timeout", checks=[]),
        run("g", "error", checks=[]),
        run("h", "passed"),
    ]

    (m,) = compute_metrics(records).variants

    assert list(m.failures_by_mode.items()) == [
        ("tool_misuse", 2),
        ("loop", 1),
        ("unclassified", 1),
    ]
    assert list(m.errors_by_kind.items()) == [("timeout", 2), ("error", 1)]


def test_skipped_runs_and_broken_files_are_no_runs() -> None:
    records = [
        run("a", "passed", duration=3.0),
        run("b", "skipped", checks=[], tokens_in=10**6),
        run("broken", "error", kind="file", checks=[]),
    ]

    (m,) = compute_metrics(records).variants

    assert (m.runs, m.graded, m.errors_by_kind) == (1, 1, {})
    assert m.tokens is None


def test_the_gate_computes_the_metrics_of_the_runs_it_counts() -> None:
    records = [
        run("a", "passed", "main", duration=1.0),
        run("a", "failed", "pr", duration=2.0),
        # A perturbed run that does not block is the perturbation section's, not here.
        run("a", "failed", "pr", duration=9.0, perturbation="typo-0"),
    ]

    report = gate.decide(records, GatePolicy(), order=["pr", "main"])
    blocking = gate.decide(records, GatePolicy(perturbed_block=True), order=["pr", "main"])

    assert [v.variant for v in report.metrics.variants] == ["pr", "main"]
    assert report.metrics.of("pr") == compute_metrics(records[1:2]).variants[0]
    pr = blocking.metrics.of("pr")
    assert pr is not None
    assert pr.wall_failed.runs == 2


def test_the_results_file_carries_the_metrics_and_reads_them_back() -> None:
    records = [spent("hog", 9000, rep=r) for r in range(2)] + [
        spent(f"c{i}", 100) for i in range(6)
    ]
    written = doc(records, order=[""])

    data = written.to_dict()
    read = from_dict(data)

    assert data["metrics"]["variants"][0]["runaways"][0]["id"] == "hog"
    assert read.metrics is not None
    assert read.metrics.to_dict() == data["metrics"]
    # A file written before metrics were stored has none, and says so.
    del data["metrics"]
    assert from_dict(data).metrics is None


def test_a_malformed_metrics_entry_is_named() -> None:
    data = doc([run("a", "failed")]).to_dict()
    data["metrics"]["variants"][0]["failures_by_mode"]["unclassified"] = "one"

    with pytest.raises(FieldError, match=r"metrics\.variants\[0\]\.failures_by_mode\.unclassified"):
        from_dict(data)


def test_merge_computes_the_metrics_again_from_every_shards_runs() -> None:
    # Shard 1's passed runs take 1..5 s, shard 2's 6 and 100..104 s: the merged median
    # is that of the eleven runs, never the mean of the two medians (3 and 101 s).
    one = [run(f"a{i}", "passed", duration=float(i + 1), tokens_in=100) for i in range(5)]
    two = [run(f"b{i}", "passed", duration=float(100 + i)) for i in range(5)]
    # Shard 2's "hog" is a runaway against the mean of all the runs (657 tokens), not
    # against its own shard's (2,050).
    two += [run("c", "passed", duration=6.0, tokens_in=100)]
    two += [run("hog", "failed", duration=7.0, tokens_in=4000)]

    merged = merge([doc(one, shard=(1, 2)), doc(two, shard=(2, 2))])

    assert merged.metrics is not None
    assert merged.metrics == compute_metrics([*one, *two], [""])
    (m,) = merged.metrics.variants
    assert (m.wall_passed.p50, m.wall_passed.p90) == (6.0, 103.0)
    assert [r.case_id for r in m.runaways] == ["hog"]
    alone = doc(two, shard=(2, 2)).metrics
    assert alone is not None
    assert alone.variants[0].runaways == ()


def test_compare_sets_each_variants_metrics_of_a_and_b_side_by_side() -> None:
    before = doc(
        [run("a", "passed", "main", duration=10.0), run("a", "passed", "pr", duration=20.0)],
        order=["main", "pr"],
    )
    after = doc(
        [
            run("a", "failed", "main", duration=30.0, failure_mode="loop"),
            run("a", "error", "pr", error_kind="timeout", checks=[]),
        ],
        order=["main", "pr"],
    )
    # A file written before metrics were stored is measured from its runs.
    older = before.with_changes(metrics=None)
    result = baseline.check(before, after, label="a.json")

    lines = compare.lines(result, before, after, Path("a.json"), Path("b.json"))
    again = compare.lines(result, older, after, Path("a.json"), Path("b.json"))

    start = lines.index(next(line for line in lines if line.startswith("metrics ")))
    assert lines[start + 2 : start + 10] == [
        "main: runs               1/1 passed (100%, 95% CI 21%–100%)  "
        "0/1 passed (0%, 95% CI 0%–79%)",
        "main: wall time, passed  10.0 s (1 run)                      -",
        "main: wall time, failed  -                                   30.0 s (1 run)",
        "main: failures by mode   -                                   loop 1",
        "pr: runs                 1/1 passed (100%, 95% CI 21%–100%)  -",
        "pr: wall time, passed    20.0 s (1 run)                      -",
        "pr: errors by kind       -                                   timeout 1",
        "",
    ]
    assert again == lines


def test_the_tables_leave_out_the_rows_with_nothing_to_say() -> None:
    (m,) = compute_metrics([run("a", "passed", duration=2.0)]).variants

    assert metrics.rows([m, None]) == [
        ["runs", "1/1 passed (100%, 95% CI 21%–100%)", "-"],
        ["wall time, passed", "2.0 s (1 run)", "-"],
    ]


@pytest.mark.parametrize("blocking", [False, True])
def test_compare_measures_a_file_without_metrics_over_the_runs_its_gate_counted(
    blocking: bool,
) -> None:
    records = [
        run("a", "passed", duration=10.0),
        run("a", "failed", duration=90.0, perturbation="typo-0"),
    ]
    written = doc(records, perturbed_block=blocking)
    older = written.with_changes(metrics=None)

    # As the gate counted them: a perturbed run only when perturbations could block.
    assert compare._measured(older) == written.metrics
    (m,) = compare._measured(older).variants
    assert m.runs == (2 if blocking else 1)
