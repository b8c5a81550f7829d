"""What the lint reads in a defended rule: its passages, the words a case tests, and
the words a prompt quotes from the rule."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_evalcases.authoring import ruletext
from pytest_evalcases.cases.loading import load_case_file
from pytest_evalcases.run.checks import default_registry

RULE = "Never add a Co-authored-by trailer or any mention of an AI tool to a commit message."


def test_passages_are_paragraphs_and_list_items_under_their_heading() -> None:
    rule = "Intro line\nwraps here.\n\n## Git\n\n- one\n  continued\n* two\n1. three\n\nlast\n"

    assert list(ruletext.passages(rule)) == [
        ("", "Intro line wraps here."),
        ("Git", "one continued"),
        ("Git", "two"),
        ("Git", "three"),
        ("Git", "last"),
    ]


def test_words_of_a_case_come_from_its_prompt_description_and_checks(tmp_path: Path) -> None:
    path = tmp_path / "evals" / "words.yaml"
    path.parent.mkdir()
    path.write_text(
        textwrap.dedent(
            """\
            id: words
            defends: AGENTS.md
            description: Queries stay in repositories
            prompt: List the orders.
            checks:
              - type: file_not_matches
                path: src/shop/api.py
                pattern: "(?i)\\\\bselect\\\\b"
            """
        )
    )
    (case,) = load_case_file(path, tmp_path / "evals", default_registry())

    # `\bselect\b` is `select`; words of fewer than four letters say nothing.
    assert sorted(ruletext.case_words(case).values()) == [
        *("list", "orders", "queries", "repositories", "select", "shop", "stay")
    ]


def test_seven_shared_words_are_not_a_quote() -> None:
    assert ruletext.quoted_run("please never add a co-authored-by trailer here", RULE) == []
    assert ruletext.quoted_run("please never add a co-authored-by trailer or any", RULE) == [
        *["never", "add", "a", "co", "authored", "by", "trailer", "or", "any"]
    ]


@pytest.mark.slow
def test_a_prompt_pasting_a_long_rule_is_found_in_linear_time() -> None:
    # Scanning the whole rule for every word added took minutes here (seconds for a
    # prompt and a rule at their limits); the bound is the subprocess's timeout.
    code = (
        "import random\n"
        "from pytest_evalcases.authoring.ruletext import quoted_run\n"
        "random.seed(1)\n"
        "rule = ' '.join(f'w{random.randrange(10**6)}' for _ in range(300_000))\n"
        "print(len(quoted_run(rule[: len(rule) // 2], rule)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )

    assert int(out.stdout) >= 150_000


def test_the_quoted_run_is_the_one_a_scan_of_the_whole_rule_finds() -> None:
    def scan(prompt: str, rule: str, minimum: int) -> list[str]:
        """Each run grown while the whole rule holds it, from where the last one ended."""
        ours, theirs = ruletext.words(prompt), ruletext.words(rule)
        best: list[str] = []
        i = 0
        while i <= len(ours) - minimum:
            j = i + minimum
            if not any(theirs[k : k + minimum] == ours[i:j] for k in range(len(theirs))):
                i += 1
                continue
            while j < len(ours) and any(
                theirs[k : k + j + 1 - i] == ours[i : j + 1] for k in range(len(theirs))
            ):
                j += 1
            best = ours[i:j] if j - i > len(best) else best
            i = j
        return best

    random.seed(7)
    for _ in range(500):
        prompt = " ".join(random.choice("ab") for _ in range(random.randint(3, 30)))
        rule = " ".join(random.choice("ab") for _ in range(random.randint(3, 40)))
        assert ruletext.quoted_run(prompt, rule, 3) == scan(prompt, rule, 3), (prompt, rule)
