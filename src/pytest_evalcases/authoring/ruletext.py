"""What a defended rule says, as the lint reads it (docs/writing-cases.md): the rule's
text, read only below the project; its passages and the prohibitions among them; the
words of what a case tests; and the words a prompt quotes from the rule."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from pytest_evalcases.cases.loading import LoadedCase

#: How many consecutive words a prompt may share with the defended file.
QUOTE_WORDS = 8
#: What the lint reads of a defended directory (a skill): at most this many Markdown
#: files, and this many bytes of them in all.
RULE_FILES = 200
RULE_BYTES = 1_000_000
_PROHIBITION = re.compile(r"(?i)\b(never|must not|do not|don't|don’t)\b")
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")

#: Words of four letters or more that say nothing of what a case tests.
_COMMON_WORDS = frozenset(
    (
        *("about", "after", "also", "always", "before", "being", "could", "does", "done"),
        *("each", "every", "from", "have", "here", "into", "just", "like", "make", "more"),
        *("most", "much", "must", "never", "only", "other", "please", "should", "some"),
        *("such", "sure", "than", "that", "their", "them", "then", "there", "these"),
        *("they", "this", "those", "very", "what", "when", "where", "which", "while"),
        *("will", "with", "would", "your"),
    )
)
#: Letters of a word compared: `commit`, `commits` and `committed` are one word.
_STEM = 5
#: A Markdown heading, or a list item (each item is a rule of its own).
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
#: A regular expression's escape of a letter (`\b`, `\s`, `\d`).
_ESCAPE = re.compile(r"\\[A-Za-z]")


def _topical(word: str) -> bool:
    """Whether ``word`` can say what a text is about."""
    return len(word) >= 4 and word not in _COMMON_WORDS and not word.isdigit()


def case_words(case: LoadedCase) -> dict[str, str]:
    """What the case tests, as words (by their first :data:`_STEM` letters, each with a
    word it stands for): those of its prompt, its description and its checks
    (patterns, paths, commands, tools, descriptions)."""
    texts = [case.prompt or "", case.description or ""]
    for check in case.checks:
        for value in check.model_dump(exclude={"type", "id"}).values():
            if isinstance(value, str):
                # `\bselect\b` is the word `select`, not `bselect`.
                texts.append(_ESCAPE.sub(" ", value))
    found: dict[str, str] = {}
    for text in texts:
        for word in words(text):
            if _topical(word):
                found.setdefault(word[:_STEM], word)
    return found


def passages(rule: str) -> Iterator[tuple[str, str]]:
    """The rule's passages, each a paragraph or a list item, with the heading it is
    under: the unit in which the lint judges whether a rule forbids something."""
    heading = ""
    block: list[str] = []
    for text_line in [*rule.splitlines(), ""]:
        starts = _HEADING.match(text_line) or _ITEM.match(text_line)
        if block and (not text_line.strip() or starts):
            yield heading, " ".join(block)
            block = []
        if _HEADING.match(text_line):
            heading = text_line.strip().lstrip("#").strip()
        elif text_line.strip():
            block.append(_ITEM.sub("", text_line, count=1).strip())


def prohibition_about(rule: str, topic: dict[str, str]) -> tuple[str, str, str] | None:
    """The first passage of ``rule`` that forbids something (never, must not, do not,
    don't) and shares a word with ``topic`` (a heading's words count for the passages
    under it): its prohibiting word, the shared word and the passage; ``None`` when no
    passage about what the case tests is a prohibition."""
    for heading, body in passages(rule):
        word = _PROHIBITION.search(body) or _PROHIBITION.search(heading)
        if word is None:
            continue
        for candidate in words(f"{heading} {body}"):
            stem = candidate[:_STEM]
            if _topical(candidate) and stem in topic:
                quoted = body if _PROHIBITION.search(body) else f"{heading}: {body}"
                return word.group(0), topic[stem], quoted
    return None


def defended(root: Path, defends: str) -> tuple[Path | None, str | None]:
    """The defended path when it exists below ``root`` (symbolic links followed), and
    where it resolves to when that is outside ``root`` (then nothing is read there)."""
    target = root / defends
    real = os.path.realpath(target)
    if not _below(real, os.path.realpath(root)):
        return None, real
    return (target if os.path.exists(real) else None), None


def _below(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def rule_text(target: Path, root: Path) -> str:
    """The defended file's text; for a directory (a skill), its Markdown files', up to
    :data:`RULE_FILES` files and :data:`RULE_BYTES` bytes. Only regular files below
    ``root`` are read, symbolic links followed: never a FIFO, nor a link out."""
    base = os.path.realpath(root)
    texts = []
    budget = RULE_BYTES
    for file in sorted(_rule_files(target)):
        try:
            if not (stat.S_ISREG(os.stat(file).st_mode) and _below(os.path.realpath(file), base)):
                continue
            with open(file, "rb") as handle:
                raw = handle.read(budget)
            texts.append(raw.decode("utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        budget -= len(raw)
        if budget <= 0:
            break
    return "\n".join(texts)


def _rule_files(target: Path) -> Iterator[Path]:
    """``target`` itself, or its first :data:`RULE_FILES` Markdown files (a walk that
    passes over what it cannot list and follows no link to a directory)."""
    if not os.path.isdir(target):
        yield target
        return
    count = 0
    for dirpath, dirnames, filenames in os.walk(target):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".md"):
                yield Path(dirpath, name)
                count += 1
                if count >= RULE_FILES:
                    return


def words(text: str) -> list[str]:
    """Lower-case words without punctuation or Markdown: the unit of quoting."""
    return _WORD.findall(text.lower().replace("’", "'"))


def quoted_run(prompt: str, rule: str, minimum: int = QUOTE_WORDS) -> list[str]:
    """The longest run of at least ``minimum`` consecutive words that ``prompt`` shares
    with ``rule``, or ``[]``.

    Each run is extended from the places where its first ``minimum`` words stand in
    the rule (the first :data:`_QUOTE_PLACES` of them): linear in the texts' length for
    a prompt that pastes the whole rule, where scanning the rule for every word
    added took seconds."""
    ours, theirs = words(prompt), words(rule)
    if len(ours) < minimum or len(theirs) < minimum:
        return []
    places: dict[tuple[str, ...], list[int]] = {}
    for k in range(len(theirs) - minimum + 1):
        found = places.setdefault(tuple(theirs[k : k + minimum]), [])
        if len(found) < _QUOTE_PLACES:
            found.append(k)
    best: list[str] = []
    i = 0
    while i <= len(ours) - minimum:
        starts = places.get(tuple(ours[i : i + minimum]))
        if starts is None:
            i += 1
            continue
        j = i + minimum
        for k in starts:
            if theirs[k : k + j - i] != ours[i:j]:
                continue  # this place cannot hold the run found so far
            while j < len(ours) and k + j - i < len(theirs) and theirs[k + j - i] == ours[j]:
                j += 1
        if j - i > len(best):
            best = ours[i:j]
        i = j
    return best


#: How many places of a run's first words in the rule :func:`quoted_run` extends from.
_QUOTE_PLACES = 1_000
