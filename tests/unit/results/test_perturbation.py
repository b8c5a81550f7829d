"""Originals against perturbed runs per class (docs/perturbation.md, "The summary")."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pytest_evalcases.kinds import Outcome
from pytest_evalcases.report.summary import perturbation_lines
from pytest_evalcases.results import reader, writer
from pytest_evalcases.results.perturbation import ClassScore, scores, to_dict
from pytest_evalcases.results.record import RunRecord
from tests.helpers.results import document

ROOT = Path(__file__).resolve().parents[3]


def run(
    case_id: str, outcome: Outcome, perturbation: str | None = None, variant: str = ""
) -> RunRecord:
    return RunRecord(
        case_id=case_id,
        file=f"evals/{case_id}.yaml",
        line=0,
        defends="AGENTS.md",
        severity="normal",
        variant=variant,
        outcome=outcome,
        perturbation=perturbation,
    )


def test_each_class_is_set_against_the_originals_of_the_cases_it_perturbed() -> None:
    records = [
        run("a", "passed"),
        run("b", "passed"),
        run("exact", "failed"),  # perturb: false, so never perturbed: counts nowhere
        run("a", "passed", "typo-0"),
        run("a", "xfailed", "typo-1"),
        run("b", "passed", "typo-0"),
        run("b", "passed", "typo-1"),
        run("a", "passed", "case-0"),
    ]

    typo, case = scores(records, 15.0)

    assert (typo.cls, typo.original_passes, typo.original_runs) == ("typo", 2, 2)
    assert (typo.perturbed_passes, typo.perturbed_runs) == (3, 4)
    assert typo.delta == pytest.approx(25.0)
    assert typo.flagged
    assert (case.cls, case.original_runs, case.perturbed_runs, case.delta) == ("case", 1, 1, 0.0)
    assert not case.flagged


def test_errored_and_skipped_runs_say_nothing_about_the_wording() -> None:
    records = [
        run("a", "passed"),
        run("a", "error"),
        run("a", "error", "filler-0"),
        run("a", "skipped", "filler-1"),
        run("a", "passed", "filler-2"),
    ]

    (filler,) = scores(records, 15.0)

    assert (filler.original_runs, filler.perturbed_runs) == (1, 1)


def test_only_errored_perturbed_runs_make_no_class() -> None:
    assert scores([run("a", "passed"), run("a", "error", "typo-0")], 15.0) == []


def test_a_drop_of_exactly_the_threshold_is_not_flagged_and_a_rise_never() -> None:
    def score(original: int, perturbed: int) -> ClassScore:
        return ClassScore("", "typo", original, 20, perturbed, 20, max_delta=15.0)

    assert score(20, 17).delta == pytest.approx(15.0)
    assert not score(20, 17).flagged
    assert score(20, 16).flagged
    assert score(10, 20).delta == pytest.approx(-50.0)
    assert not score(10, 20).flagged


def test_variants_are_scored_apart() -> None:
    records = [
        run("a", "passed", variant="main"),
        run("a", "passed", variant="pr"),
        run("a", "failed", "typo-0", variant="main"),
        run("a", "passed", "typo-0", variant="pr"),
    ]

    main, pr = scores(records, 15.0)

    assert (main.variant, main.delta, pr.variant, pr.delta) == ("main", 100.0, "pr", 0.0)
    assert perturbation_lines([main, pr])[1:] == [
        "  main: typo: originals 1/1 (100%, 95% CI 21%–100%) · perturbed 0/1 (0%, 95% CI "
        "0%–79%) · -100.0 points BRITTLE",
        "  pr: typo: originals 1/1 (100%, 95% CI 21%–100%) · perturbed 1/1 (100%, 95% CI "
        "21%–100%) · +0.0 points",
    ]


def test_the_results_file_object() -> None:
    found = scores([run("a", "passed"), run("a", "xfailed", "case-0")], 15.0)

    assert to_dict(found, 15.0) == {
        "max_delta": 15.0,
        "classes": [
            {
                "variant": "",
                "class": "case",
                "original": {
                    "passed": 1,
                    "runs": 1,
                    "pass_rate": 1.0,
                    "interval": [0.2065, 1.0],
                },
                "perturbed": {"passed": 0, "runs": 1, "pass_rate": 0.0, "interval": [0.0, 0.7935]},
                "delta": 100.0,
                "flagged": True,
            }
        ],
    }


def test_the_summary_says_nothing_without_perturbed_runs() -> None:
    assert perturbation_lines([]) == []


def test_the_documented_example() -> None:
    # docs/perturbation.md, "The summary": its lines and its JSON are these scores'.
    doc = (ROOT / "docs" / "perturbation.md").read_text("utf-8")
    typo = ClassScore("", "typo", 4, 4, 19, 20, max_delta=15.0)
    case = ClassScore("", "case", 4, 4, 12, 20, max_delta=15.0)
    shown = "\n".join("    " + line for line in perturbation_lines([typo, case]))
    assert shown in doc
    block = re.search(r'```json\n(\{\n  "perturbation".*?)```', doc, re.S)
    assert block is not None
    assert json.loads(block.group(1)) == {"perturbation": to_dict([case], 15.0)}


def test_the_results_file_keeps_it_and_reads_it_back(tmp_path: Path) -> None:
    records = [run("a", "passed"), run("a", "xfailed", "case-0"), run("a", "passed", "case-1")]
    started = datetime(2026, 12, 2, tzinfo=timezone.utc)
    written = document(records, 0.9, started=started, perturb_max_delta=15.0)
    plain = document(records[:1], 0.9, started=started)

    path = writer.write(written, tmp_path / "r.json")

    assert written.perturbation == to_dict(scores(records, 15.0), 15.0)
    assert list(written.to_dict())[-2:] == ["cases", "perturbation"]
    assert reader.load(path).to_dict() == written.to_dict()
    assert "perturbation" not in plain.to_dict()
    # Perturbed runs are advisory by default: the verdict is the originals'.
    assert (written.counts.passed, written.counts.total, written.verdict) == (1, 1, "PASS")
    blocking = document(records, 0.9, started=started, perturbed_block=True)
    assert blocking.verdict == "BLOCKED"


def test_a_perturbation_that_is_not_text_is_a_clear_error(tmp_path: Path) -> None:
    written = document([run("a", "passed", "typo-0")], 0.9, started=datetime.now())
    data = written.to_dict()
    data["cases"][0]["perturbation"] = 3
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), "utf-8")

    with pytest.raises(reader.ResultsFileError, match=r"r\.json.*cases\[0\]\.perturbation"):
        reader.load(path)


def test_merged_shards_score_the_classes_over_every_shards_runs_and_keep_blocking() -> None:
    from pytest_evalcases.results.merge import merge

    started = datetime(2026, 12, 2, tzinfo=timezone.utc)
    plan = {"perturbation": {"classes": ["case"], "n": 1, "seed": 0, "blocking": True}}
    first = document(
        [run("a", "passed"), run("a", "failed", "case-0")],
        0.9,
        started=started,
        shard=(1, 2),
        pins=plan,
        perturb_max_delta=15.0,
        perturbed_block=True,
    )
    second = document(
        [run("b", "passed"), run("b", "passed", "case-0")],
        0.9,
        started=started,
        shard=(2, 2),
        pins=plan,
        perturb_max_delta=15.0,
        perturbed_block=True,
    )

    merged = merge([first, second])

    records = [*first.cases, *second.cases]
    assert merged.perturbation == to_dict(scores(records, 15.0), 15.0)
    # The perturbed run of a failed as in the shard: blocking, so the verdict is BLOCKED.
    assert (first.verdict, merged.verdict) == ("BLOCKED", "BLOCKED")
