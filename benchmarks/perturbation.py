"""How much each perturbation class changes the prompts of a suite (docs/perturbation.md).

Run from the repository root with ``python benchmarks/perturbation.py`` (a few seconds).
It loads every case of the starter battery (``example_cases/battery``; ``--evals DIR``
for another suite), perturbs each prompt ``--n`` times per class under each of
``--seeds`` seeds, and prints per class:

- **perturbations** made, and the **prompts without** any (a class that cannot change
  a prompt; a case without ``paraphrases:``);
- perturbations **equal to the prompt** (the plugin guarantees 0), and **equal to an
  earlier K**'s perturbation of the same prompt under the same seed;
- **changed**: the characters changed, as a share of the prompt's length (mean and the
  range over the prompts): a deleted or substituted character counts one, an inserted
  one one, two transposed letters two (``difflib`` opcodes, each the longer of its sides);
- **added**: the length added, as a share of the prompt's (``filler``'s tenth).
"""

from __future__ import annotations

import argparse
import difflib
import statistics
from pathlib import Path

from pytest_evalcases.cases.loading import LoadedCase, load_case_file
from pytest_evalcases.run.checks import default_registry
from pytest_evalcases.run.perturb import CLASSES, PerturbPlan, perturb

ROOT = Path(__file__).resolve().parents[1]


def cases(evals: Path) -> list[LoadedCase]:
    """Every case of the suite below ``evals`` that has a prompt."""
    registry = default_registry()
    found = []
    for path in sorted(evals.rglob("*.y*ml")):
        found += [c for c in load_case_file(path, evals, registry) if c.prompt is not None]
    return found


def changed(before: str, after: str) -> int:
    """Characters changed from ``before`` to ``after`` (see the module's docstring)."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def measure(found: list[LoadedCase], n: int, seeds: int) -> list[list[str]]:
    """One row per class: the figures the module's docstring names."""
    rows = []
    for cls in CLASSES:
        made = equal = duplicates = 0
        none_of = 0
        shares: list[float] = []
        added: list[float] = []
        for case in found:
            prompt = case.prompt or ""
            count = PerturbPlan((cls,), n=n).count(cls, prompt, len(case.paraphrases))
            none_of += count == 0
            for seed in range(seeds):
                texts = [perturb(prompt, cls, k, seed, case.paraphrases) for k in range(count)]
                made += len(texts)
                equal += sum(text == prompt for text in texts)
                duplicates += len(texts) - len(set(texts))
                shares += [changed(prompt, text) / len(prompt) for text in texts]
                added += [(len(text) - len(prompt)) / len(prompt) for text in texts]
        rows.append(
            [
                cls,
                str(made),
                str(none_of),
                str(equal),
                str(duplicates),
                _share(shares),
                _share(added),
            ]
        )
    return rows


def _share(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.mean(values):.1%} ({min(values):.1%} to {max(values):.1%})".replace(
        "%", " %"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evals", type=Path, default=ROOT / "example_cases" / "battery" / "evals")
    parser.add_argument("--n", type=int, default=5, help="perturbations per class (K < N)")
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0 to SEEDS-1")
    args = parser.parse_args()
    found = cases(args.evals)
    lengths = [len(c.prompt or "") for c in found]
    print(
        f"{len(found)} prompts of {min(lengths)} to {max(lengths)} characters "
        f"(median {statistics.median(lengths):g}), K < {args.n}, seeds 0 to {args.seeds - 1}"
    )
    header = [
        "class",
        "perturbations",
        "prompts without",
        "equal to the prompt",
        "equal to an earlier K",
        "changed",
        "added",
    ]
    rows = [header, *measure(found, args.n, args.seeds)]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows[1:]:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
