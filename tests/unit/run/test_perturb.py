"""Prompt perturbations: deterministic, one per class, exact spans kept (docs/perturbation.md)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_evalcases.run.perturb import CLASSES, perturb, protected_spans

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


def words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+", text)


@pytest.mark.parametrize("cls", CLASSES)
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
        env={"PYTHONHASHSEED": "12345"},
    ).stdout
    assert other == repr([perturb(PROMPT, cls, k, 7) for k in range(5)])


@pytest.mark.parametrize("cls", CLASSES)
def test_each_k_changes_the_prompt_and_the_seed_changes_the_perturbation(cls: str) -> None:
    texts = [perturb(PROMPT, cls, k, 0) for k in range(5)]
    assert all(text != PROMPT for text in texts)
    assert len(set(texts)) >= 4
    if cls not in ("case", "format"):
        assert [perturb(PROMPT, cls, k, 1) for k in range(5)] != texts


@pytest.mark.parametrize("cls", CLASSES)
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
        for cls in CLASSES:
            assert "\n    make Release Build\n" in perturb(prompt, cls, k, 0)


def test_typo_misspells_one_word_in_ten_keeping_first_letters() -> None:
    prompt = " ".join(["alpha", "bravo", "charlie", "delta", "echo"] * 4)
    for k in range(5):
        before, after = words(prompt), words(perturb(prompt, "typo", k, 0))
        changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
        assert len(changed) == 2
        assert all(a[0] == b[0] and abs(len(a) - len(b)) <= 1 for a, b in changed)


def test_typo_leaves_short_words_and_a_prompt_without_long_words_alone() -> None:
    assert perturb("Do it now, go.", "typo", 0, 0) == "Do it now, go."


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


def test_filler_adds_a_greeting_or_a_closing_around_the_prompt() -> None:
    for k in range(5):
        text = perturb(PROMPT, "filler", k, 0)
        start = text.index(PROMPT)
        assert text != PROMPT
        assert text[:start].strip() in ("", *FILLER_BEFORE)
        assert text[start + len(PROMPT) :].strip() in ("", *FILLER_AFTER)


def test_filler_keeps_a_leading_heading_on_its_own_line() -> None:
    prompt = "# Task\nDo it."
    texts = [perturb(prompt, "filler", k, 0) for k in range(10)]
    assert all("\n# Task\n" in text or text.startswith("# Task\n") for text in texts)


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


FILLER_BEFORE = (
    "Hi!",
    "Hello,",
    "Hey there.",
    "Quick question:",
    "Please help me with the following.",
    "So, here is what I need.",
)
FILLER_AFTER = (
    "Thanks!",
    "Thank you in advance.",
    "Cheers.",
    "Let me know if anything is unclear.",
    "Much appreciated.",
)


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
