"""How ``evalcases show`` finds a run of a results file by the name pytest gave its item
(docs/replay.md, "Reading a run")."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evalcases.report.show import ShowError, find
from pytest_evalcases.results import writer as resultsfile

from ..results.records import doc, run


@pytest.fixture
def results(tmp_path: Path) -> Path:
    records = [
        run("alpha", "passed", "main"),
        run("alpha", "failed", "pr", repetition=0),
        run("alpha", "passed", "pr", repetition=1),
        run("beta", "passed", "main"),
        run("gamma", "passed", "main-r1"),
    ]
    return resultsfile.write(doc(records), tmp_path / "r.json")


@pytest.mark.parametrize(
    ("name", "variant", "repetition", "called"),
    [
        ("alpha[main]", "main", 0, "alpha[main-r0]"),
        ("alpha[pr-r1]", "pr", 1, "alpha[pr-r1]"),
        ("evals/alpha.yaml::alpha[pr-r0]", "pr", 0, "alpha[pr-r0]"),
        ("beta", "main", 0, "beta[main]"),
        # A variant whose name looks like a repetition's is still found.
        ("gamma[main-r1]", "main-r1", 0, "gamma[main-r1]"),
    ],
)
def test_a_run_is_found_by_its_item_name(
    results: Path, name: str, variant: str, repetition: int, called: str
) -> None:
    found, shown = find(results, name)

    assert (found.record.variant, found.record.repetition) == (variant, repetition)
    assert shown == called


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("alpha", "alpha names 3 runs: say which (alpha[main-r0], alpha[pr-r0], alpha[pr-r1])"),
        ("alpha[pr]", "alpha[pr] names 2 runs: say which"),
        ("alpha[qa]", "no run alpha[qa]; the runs of alpha are alpha[main-r0], alpha[pr-r0]"),
        ("alfa", "no case 'alfa'; did you mean alpha?"),
        ("zzz", "no case 'zzz'"),
    ],
)
def test_a_name_that_is_not_one_run_is_refused(results: Path, name: str, said: str) -> None:
    with pytest.raises(ShowError) as caught:
        find(results, name)

    assert str(caught.value).startswith(f"{results}: {said}")
