"""What a variant is made of, and what a comparison says it is about (docs/variants.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.report import summary
from pytest_evalcases.report.compare import lines as compare_lines
from pytest_evalcases.results import baseline, gate, reader, writer
from pytest_evalcases.results.factors import Factors, differing, label
from pytest_evalcases.results.merge import merge
from pytest_evalcases.results.policy import GatePolicy

from .records import doc, run

CC = Factors("claude")
CX = Factors("codex")
CX_MINI = Factors("codex", "gpt-5-mini")
OPUS = Factors("claude", "opus")


@pytest.mark.parametrize(
    ("base", "other", "said"),
    [
        (CC, CX, " (agent)"),
        (CC, OPUS, " (model)"),
        (CC, Factors("claude", args=("--max-turns", "3")), " (args)"),
        (CC, Factors("claude", config="git:main"), " (config)"),
        (CC, CX_MINI, " (confounded: agent and model differ)"),
        (
            CC,
            Factors("codex", "m", ("-x",), "cfg"),
            " (confounded: agent, model, args and config differ)",
        ),
        (CC, Factors("claude"), " (nothing differs)"),
    ],
)
def test_a_comparison_names_the_factors_that_differ(
    base: Factors, other: Factors, said: str
) -> None:
    assert label(differing(base, other)) == said


def test_unknown_factors_say_nothing() -> None:
    assert label(None) == ""


def test_factors_survive_the_results_file(tmp_path: Path) -> None:
    records = [run("alpha", "passed", "cc"), run("alpha", "failed", "cx")]
    written = writer.write(
        doc(records, order=["cc", "cx"], factors={"cc": CC, "cx": CX_MINI}), tmp_path / "r.json"
    )

    read = reader.load(written)

    assert [v.factors for v in read.variants] == [CC, CX_MINI]
    assert read.comparisons[0].differ == ("agent", "model")


def test_a_file_without_factors_reads_as_unknown(tmp_path: Path) -> None:
    written = writer.write(
        doc([run("alpha", "passed", "a"), run("alpha", "passed", "b")]), tmp_path / "r.json"
    )

    read = reader.load(written)

    assert [v.factors for v in read.variants] == [None, None]
    assert read.comparisons[0].differ is None


def test_the_summary_describes_an_agent_matrix_and_labels_its_comparisons() -> None:
    records = [
        run("alpha", "passed", "cc", tokens_in=100, tokens_out=10, cost_usd=0.5),
        run("alpha", "failed", "cx", tokens_in=80, tokens_out=8),
    ]
    report = gate.decide(records, GatePolicy(0.9), order=["cc", "cx"], factors={"cc": CC, "cx": CX})

    out = summary.lines(report)

    assert out[0].startswith("cc (claude): 1/1 cases passed")
    assert out[1] == "  tokens 110 (110 per run) · cost $0.5000 ($0.5000 per run)"
    assert out[2] == "  wall 0.0 s (1 passed)"
    assert out[3].startswith("cx (codex): 0/1 cases passed")
    assert out[4] == "  tokens 88 (88 per run) · cost not reported"
    assert out[7].startswith("cx vs cc (agent): 1 check regressed, 0 improved; cases 1 regressed")


def test_variants_of_configuration_only_are_not_described_again() -> None:
    records = [run("alpha", "passed", "main"), run("alpha", "failed", "pr")]
    factors = {"main": Factors("claude", config="git:main"), "pr": Factors("claude")}

    out = summary.lines(gate.decide(records, GatePolicy(), order=["main", "pr"], factors=factors))

    assert out[0].startswith("main: 1/1")
    assert out[3] == "  wall 0.0 s (1 failed)"
    assert out[5].startswith("pr vs main (config): 1 check regressed")


def test_a_case_skipped_on_one_agent_counts_in_no_comparison() -> None:
    records = [
        run("hook", "passed", "cc"),
        run("hook", "skipped", "cx", checks=[]),
        run("plain", "passed", "cc"),
        run("plain", "passed", "cx"),
    ]

    report = gate.decide(records, GatePolicy(0.9), order=["cc", "cx"], factors={"cc": CC, "cx": CX})

    cmp = report.comparisons[0]
    assert (cmp.regressed_cases, cmp.improved_cases, cmp.b, cmp.c) == ([], [], 0, 0)
    assert report.variants[1].pass_rate == 1.0


def test_merge_keeps_each_variants_factors_and_joins_their_reported_models() -> None:
    pins = {
        "variants": {"cx": {"agent": "codex", "model": None, "models": ["gpt-5"]}},
    }
    other_pins = {
        "variants": {"cx": {"agent": "codex", "model": None, "models": ["gpt-5.1"]}},
    }
    factors = {"cc": CC, "cx": CX}
    first = doc(
        [run("a", "passed", "cc"), run("a", "failed", "cx")],
        shard=(1, 2),
        order=["cc", "cx"],
        factors=factors,
        pins=pins,
    )
    second = doc(
        [run("b", "passed", "cc"), run("b", "passed", "cx")],
        shard=(2, 2),
        order=["cc", "cx"],
        factors=factors,
        pins=other_pins,
    )

    merged = merge([first, second])

    assert [v.factors for v in merged.variants] == [CC, CX]
    assert merged.comparisons[0].differ == ("agent",)
    assert merged.pins["variants"]["cx"]["models"] == ["gpt-5", "gpt-5.1"]
    assert merged.merge_warnings == ()


def test_compare_names_a_variant_whose_model_changed_and_describes_the_matrix() -> None:
    def one(model: str) -> object:
        return doc(
            [run("a", "passed", "cc"), run("a", "passed", "cx")],
            order=["cc", "cx"],
            factors={"cc": CC, "cx": Factors("codex", model)},
            pins={"variants": {"cx": {"agent": "codex", "model": model, "models": [model]}}},
        )

    before, after = one("gpt-5"), one("gpt-5.1")
    result = baseline.check(before, after, 3.0, label="a.json")  # type: ignore[arg-type]

    assert "variant cx: model asked for gpt-5 -> gpt-5.1" in result.pin_differences
    assert "variant cx: models gpt-5 -> gpt-5.1" in result.pin_differences
    out = compare_lines(result, before, after, Path("a.json"), Path("b.json"))  # type: ignore[arg-type]
    assert "   variants: cc (claude), cx (codex, model gpt-5)" in out
    assert "   variants: cc (claude), cx (codex, model gpt-5.1)" in out
