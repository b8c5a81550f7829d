"""Prompt perturbations: deterministic, one per class, exact spans kept (docs/perturbation.md)."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_evalcases.run.perturb import (
    CLASSES,
    FILLER,
    TYPO_RATE,
    PerturbPlan,
    perturb,
    protected_spans,
    unchangeable,
)

PROMPT = (
    'Commit the staged change. Message: "fix the token expiry off-by-one in auth middleware".\n'
    "Look at src/auth/middleware.py and README.md first, see https://example.com/docs?a=1.\n"
    "Never run `git push --force` while working. Keep the --no-verify flag away.\n"
    "\n"
    "```sh\n"
    'git commit -m "Fix Token Expiry"\n'
    "```\n"
    "Then describe briefly what changed and whether tests passed."
)
#: The checkout (the package may be installed elsewhere, as CI installs it).
ROOT = Path(__file__).resolve().parents[3]
EXACT = (
    '"fix the token expiry off-by-one in auth middleware"',
    "src/auth/middleware.py",
    "README.md",
    "https://example.com/docs?a=1",
    "`git push --force`",
    "--no-verify",
    '```sh\ngit commit -m "Fix Token Expiry"\n```\n',
)


#: The classes that edit the prompt (``paraphrase`` replaces it with the author's).
EDITS = tuple(cls for cls in CLASSES if cls != "paraphrase")
_VOCABULARY = re.findall(
    r"\w+",
    "the order service refuses refunds above the limit and nobody knows why so please "
    "look into it carefully then fix what is wrong add a test for the case and keep the "
    "public interface as it is we ship on friday customers keep asking support about it",
)


def corpus(count: int, low: int = 100, high: int = 600) -> list[str]:
    """``count`` prompts of ``low`` to ``high`` characters: sentences of plain words,
    some with a path, inline code or a quoted string."""
    rng = random.Random(31)
    prompts = []
    for _ in range(count):
        target = rng.randrange(low, high)
        sentences: list[str] = []
        while sum(len(x) + 1 for x in sentences) < target:
            words = rng.sample(_VOCABULARY, rng.randrange(4, 12))
            extra = rng.choice(["", " in src/shop/orders.py", " with `make test`", ' as "v1"'])
            sentences.append(" ".join(words).capitalize() + extra + rng.choice(".?!"))
        prompts.append(" ".join(sentences))
    return prompts


def distance(a: str, b: str) -> int:
    """Levenshtein distance: a deletion, insertion or substitution costs one."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def pythonpath() -> dict[str, str]:
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


def words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+", text)


@pytest.mark.parametrize("cls", EDITS)
def test_the_same_arguments_give_the_same_text_in_another_interpreter(cls: str) -> None:
    # A fresh process has another hash seed: nothing may depend on hash().
    code = (
        "import sys; from pytest_evalcases.run.perturb import perturb; "
        f"sys.stdout.write(repr([perturb({PROMPT!r}, {cls!r}, k, 7) for k in range(5)]))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        # PYTHONPATH kept: the interpreter must import this checkout, as this process does.
        env={"PYTHONHASHSEED": "12345", **pythonpath()},
    ).stdout
    assert other == repr([perturb(PROMPT, cls, k, 7) for k in range(5)])


@pytest.mark.parametrize("cls", EDITS)
def test_each_k_changes_the_prompt_and_the_seed_changes_the_perturbation(cls: str) -> None:
    texts = [perturb(PROMPT, cls, k, 0) for k in range(5)]
    assert all(text != PROMPT for text in texts)
    assert len(set(texts)) >= 4
    if cls not in ("case", "format"):
        assert [perturb(PROMPT, cls, k, 1) for k in range(5)] != texts


@pytest.mark.parametrize("cls", EDITS)
@pytest.mark.parametrize("k", range(8))
def test_protected_spans_come_through_unchanged(cls: str, k: int) -> None:
    text = perturb(PROMPT, cls, k, 3)
    for exact in EXACT:
        assert exact in text, (cls, k, exact, text)


def test_protected_spans_are_found() -> None:
    found = [PROMPT[a:b] for a, b in protected_spans(PROMPT)]
    assert found == [
        '"fix the token expiry off-by-one in auth middleware"',
        "src/auth/middleware.py",
        "README.md",
        "https://example.com/docs?a=1",
        "`git push --force`",
        "--no-verify",
        '```sh\ngit commit -m "Fix Token Expiry"\n```\n',
    ]


def test_apostrophes_are_not_quotes_but_single_quoted_strings_are() -> None:
    prompt = "Don't touch it, it's fine. Write 'Hello World' to the file greeting please."
    assert [prompt[a:b] for a, b in protected_spans(prompt)] == ["'Hello World'"]


def test_indented_code_is_a_protected_block() -> None:
    prompt = "Run this command exactly:\n\n    make Release Build\n\nThen report the result."
    for k in range(5):
        for cls in EDITS:
            assert "\n    make Release Build\n" in perturb(prompt, cls, k, 0)


def test_typo_changes_two_percent_of_the_characters_keeping_first_letters() -> None:
    prompts = corpus(40, 100, 300)
    shares = []
    for prompt in prompts:
        for k in range(3):
            text = perturb(prompt, "typo", k, 0)
            # Edits three characters apart each count: exactly the budget is changed.
            assert distance(prompt, text) == max(1, round(len(prompt) * TYPO_RATE))
            before, after = words(prompt), words(text)
            assert [w[0] for w in before] == [w[0] for w in after]
            shares.append(distance(prompt, text) / len(prompt))
    assert 0.019 <= sum(shares) / len(shares) <= 0.021


def test_typo_leaves_short_words_alone_and_cannot_change_a_prompt_without_long_words() -> None:
    assert unchangeable("Do it now, go.", "typo") == (
        "no word of 4 letters outside the protected spans"
    )
    with pytest.raises(ValueError, match="typo cannot change the prompt: no word of 4"):
        perturb("Do it now, go.", "typo", 0, 0)
    text = perturb("Do it now, go to work.", "typo", 0, 0)
    assert text.startswith("Do it now, go to w")
    assert text != "Do it now, go to work."


def test_case_lowers_uppers_capitalises_then_mixes() -> None:
    prompt = "Please update the Changelog now."
    assert perturb(prompt, "case", 0, 0) == "please update the changelog now."
    assert perturb(prompt, "case", 1, 0) == "PLEASE UPDATE THE CHANGELOG NOW."
    assert perturb(prompt, "case", 2, 0) == "Please Update the Changelog now."
    mixed = perturb(prompt, "case", 3, 0)
    assert mixed.lower() == prompt.lower()


def test_whitespace_changes_only_whitespace() -> None:
    for k in range(5):
        text = perturb(PROMPT, "whitespace", k, 0)
        assert text.split() == PROMPT.split()


def sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.!?])\s+", text.strip())


def test_filler_adds_neutral_sentences_of_a_tenth_of_the_prompt_at_one_place() -> None:
    shares = []
    places = set()
    for prompt in corpus(60, 150, 600):
        for k in range(3):
            text = perturb(prompt, "filler", k, 0)
            # Take the pool's sentences out, and the prompt is left.
            found = sentences(text)
            assert [x for x in found if x not in FILLER] == sentences(prompt)
            added = [i for i, x in enumerate(found) if x in FILLER]
            assert added == list(range(added[0], added[-1] + 1)), text  # at one place
            share = (len(text) - len(prompt)) / len(prompt)
            assert 0.05 <= share <= 0.16, (share, text)
            shares.append(share)
            last = len(found) - 1
            places.add("start" if added[0] == 0 else "end" if added[-1] == last else "inside")
    assert 0.09 <= sum(shares) / len(shares) <= 0.11
    assert places == {"start", "end", "inside"}


def test_filler_goes_after_a_sentence_not_after_an_abbreviation() -> None:
    prompt = "Add a discount code, e.g. SPRING15 takes fifteen percent off. Mr. Lee asked for it."
    texts = [perturb(prompt, "filler", k, seed) for k in range(5) for seed in range(4)]
    assert all("e.g. SPRING15" in text and "Mr. Lee" in text for text in texts)
    assert any("off. " in text and "off. Mr." not in text for text in texts)


def test_filler_never_lands_in_a_protected_span() -> None:
    for k in range(20):
        text = perturb(PROMPT, "filler", k, 0)
        for exact in EXACT:
            assert exact in text


def test_format_modes() -> None:
    prompt = "Fix the bug. Then run the tests.\nReport back."
    heading, one_line, lines, bullets, label = (perturb(prompt, "format", k, 0) for k in range(5))
    assert heading.endswith("\n\n" + prompt)
    assert heading.startswith("#")
    assert one_line == "Fix the bug. Then run the tests. Report back."
    assert lines == "Fix the bug.\nThen run the tests.\nReport back."
    assert bullets == "- Fix the bug.\n- Then run the tests.\n- Report back."
    assert label.endswith(":\n" + prompt)


def test_format_never_joins_a_fence_to_a_line() -> None:
    for k in range(5):
        text = perturb(PROMPT, "format", k, 0)
        assert re.search(r"(^|\n)```sh\n", text), text
        assert re.search(r"\n```\n", text), text


def test_an_unknown_class_is_an_error_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown perturbation class 'typos'.*typo, case"):
        perturb(PROMPT, "typos", 0, 0)


TRICKY = (
    "fix the bug.",
    "FIX THE BUG.",
    "Fix The Bug.",
    "push",
    "a b c",
    "Run `make test`.",
    "x",
    "# Task\n\n```sh\nmake\n```\n",
    "Use src/app.py and `ls -la` with 'Hello World'.",
)


@pytest.mark.parametrize("cls", EDITS)
def test_no_perturbation_equals_its_prompt_and_none_repeats_an_earlier_k(cls: str) -> None:
    for prompt in (*TRICKY, *corpus(20, 20, 200)):
        why = unchangeable(prompt, cls)
        if why:
            with pytest.raises(ValueError, match=why):
                perturb(prompt, cls, 0, 0)
            continue
        assert prompt not in [perturb(prompt, cls, k, seed) for seed in (0, 1) for k in range(6)]
    # A short prompt ("x", "fix the bug.") has few perturbations of a class to tell
    # apart; a prompt of a sentence or two has plenty.
    for prompt in corpus(20, 100, 300):
        for seed in (0, 1):
            texts = [perturb(prompt, cls, k, seed) for k in range(6)]
            assert len(set(texts)) == len(texts), (cls, prompt)


def test_only_typo_and_case_can_find_nothing_to_change() -> None:
    code = "`make release` src/app.py"
    assert {cls: unchangeable(code, cls) for cls in EDITS} == {
        "typo": "no word of 4 letters outside the protected spans",
        "case": "no letter outside the protected spans",
        "whitespace": "",
        "filler": "",
        "format": "",
    }
    assert all(unchangeable(None, cls) == "no prompt" for cls in CLASSES)


def test_paraphrase_is_the_cases_own_kth_paraphrase() -> None:
    prompt = "Fix the failing test."
    paraphrases = ("Please fix the test that fails.", "The failing test needs fixing.")
    assert [perturb(prompt, "paraphrase", k, 3, paraphrases) for k in (0, 1)] == [*paraphrases]
    with pytest.raises(ValueError, match="no paraphrase 2 of the prompt"):
        perturb(prompt, "paraphrase", 2, 0, paraphrases)
    plan = PerturbPlan(("typo", "paraphrase"), n=3)
    assert plan.labels(prompt, 2) == [
        "typo-0",
        "typo-1",
        "typo-2",
        "paraphrase-0",
        "paraphrase-1",
    ]
    assert plan.labels(prompt, 7)[-1] == "paraphrase-2"
    assert plan.gaps(prompt, 0) == [("paraphrase", "no paraphrases")]


def test_the_documented_example() -> None:
    # docs/perturbation.md, "Example": the lines there are these, ⏎ a line break, · a space.
    prompt = (
        'Commit the staged change. Message: "fix the token expiry off-by-one in auth '
        'middleware". Then show me the log of src/auth/ with `git log --oneline`.'
    )
    doc = (ROOT / "docs" / "perturbation.md").read_text(encoding="utf-8")
    listed = re.findall(r"^    (typo|case|whitespace|filler|format) (\d) +(.*)$", doc, re.M)
    assert len(listed) == 8
    for cls, k, line in listed:
        text = perturb(prompt, cls, int(k), 0).replace("\n", "⏎")
        if cls == "whitespace":
            text = re.sub(r"(?<= ) | (?= )|^ | $", "·", text)
        assert text == line, (cls, k)


def test_the_documented_measurements_are_the_benchmarks() -> None:
    # docs/perturbation.md, "Measured": the table is benchmarks/perturbation.py's output.
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "perturbation.py")],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ},
    ).stdout
    rows = [line for line in out.splitlines() if line.startswith("|")]
    doc = (ROOT / "docs" / "perturbation.md").read_text(encoding="utf-8")
    assert len(rows) == 8
    assert "\n".join(rows) in doc


def test_the_docs_list_every_filler_sentence() -> None:
    text = " ".join((ROOT / "docs" / "perturbation.md").read_text("utf-8").split())
    assert [s for s in FILLER if f"`{s}`" not in text] == []
