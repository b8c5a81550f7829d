"""Seeded, deterministic perturbations of a case's prompt (docs/perturbation.md).

``perturb(prompt, cls, k, seed)`` returns the K-th perturbation of class ``cls``: the same
arguments always give the same text, on every machine and Python version (the random
generator is seeded from a SHA-256 of the arguments, never from ``hash()``).

What must stay exact is never changed: fenced code blocks, inline code, quoted strings,
URLs and path-like tokens (:func:`protected_spans` says which). The text is split into
fenced blocks, which are kept as they are, and text blocks, in which every other
protected span is replaced by a placeholder before the class's transformation and put
back after it. Plain Python, no model call.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pytest_evalcases import defaults
from pytest_evalcases.errors import UsageError

PerturbClass = Literal["typo", "case", "whitespace", "filler", "format"]
#: The classes, in the order the documentation gives them.
CLASSES: tuple[PerturbClass, ...] = get_args(PerturbClass)

#: Share of the eligible words a ``typo`` perturbation misspells (at least one).
TYPO_RATE = 0.1
#: Shortest word a typo or a case change touches.
MIN_WORD = 4

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n(?:.*?\n)??[ \t]*\1[ \t]*(?:\n|$)", re.M | re.S)
_INDENTED = re.compile(r"^(?:(?: {4}|\t)[^\n]*(?:\n|$))+", re.M)
_BLOCKS = (_FENCE, _INDENTED)
_INLINE = (
    re.compile(r"(`+)[^`\n]+?\1"),
    re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s<>\"'`]*[^\s<>\"'`.,;:!?)\]]"),
    re.compile(r"\"[^\"\n]*\""),
    re.compile(r"“[^”\n]*”"),
    re.compile(r"‘[^’\n]*’"),
    re.compile(r"(?<![\w'])'[^'\n]+'(?![\w'])"),
)
_TOKEN = re.compile(r"\S+")
_PATHLIKE = re.compile(r"[/\\_=@#$%{}\[\]<>|*~^&+0-9]|^[-.]\S|^[\w-]+\.[A-Za-z0-9]{1,8}$")
_WORD = re.compile(rf"\b[^\W\d_]{{{MIN_WORD},}}\b")
_HOLD = re.compile(r"\ue000(\d+)\ue001")
#: A line that is already a heading, a list item or a quotation keeps its form.
_MARKED = re.compile(r"\s*(?:#|>|[-*+]\s|\d+[.)]\s)")
_SENTENCE_END = re.compile(r"(?<=[.!?])[ \t]+(?=\S)")

_KEYBOARD = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_FILLER_BEFORE = (
    "Hi!",
    "Hello,",
    "Hey there.",
    "Quick question:",
    "Please help me with the following.",
    "So, here is what I need.",
)
_FILLER_AFTER = (
    "Thanks!",
    "Thank you in advance.",
    "Cheers.",
    "Let me know if anything is unclear.",
    "Much appreciated.",
)
_HEADINGS = ("## Task", "# Request", "### What to do")
_LABELS = ("Task:", "Request:", "Instructions:")


@dataclass(frozen=True)
class PerturbPlan:
    """``--eval-perturb``: which classes, how many perturbations of each, under which
    seed, and whether the perturbed runs count in the gate (docs/perturbation.md)."""

    classes: tuple[PerturbClass, ...]
    n: int = defaults.PERTURB_N
    seed: int = defaults.PERTURB_SEED
    blocking: bool = False
    #: ``eval_perturb_max_delta``: a drop of more points flags the class (the summary).
    max_delta: float = defaults.PERTURB_MAX_DELTA

    def labels(self) -> list[str]:
        """``CLASS-K`` of every perturbation, in the order items are collected."""
        return [f"{cls}-{k}" for cls in self.classes for k in range(self.n)]

    def pins(self) -> dict[str, Any]:
        """What the results file's pins record of the plan (docs/results.md)."""
        return {
            "classes": list(self.classes),
            "n": self.n,
            "seed": self.seed,
            "blocking": self.blocking,
        }


def parse_classes(values: Iterable[str], where: str) -> tuple[PerturbClass, ...]:
    """The classes named in comma lists ``values``, each once, in the documented order;
    :class:`UsageError` naming ``where`` for an unknown one."""
    named = {name.strip() for value in values for name in value.split(",") if name.strip()}
    unknown = sorted(named - set(CLASSES))
    if unknown:
        raise UsageError(
            f"{where}: unknown perturbation class {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(CLASSES)}"
        )
    return tuple(cls for cls in CLASSES if cls in named)


def split_label(label: str) -> tuple[str, int]:
    """``("typo", 3)`` of ``typo-3``."""
    cls, _, k = label.rpartition("-")
    return cls, int(k)


def protected_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of ``text`` that no perturbation changes, sorted.

    Fenced code blocks, indented lines (four spaces or a tab: Markdown code), inline
    code, URLs, quoted strings (``"…"``, ``“…”``, ``‘…’`` and ``'…'`` when the quote is
    not part of a word) and path-like tokens; see docs/perturbation.md, "What never
    changes".
    """
    spans: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in spans)

    for block in _BLOCKS:
        for match in block.finditer(text):
            if free(*match.span()):
                spans.append(match.span())
    for pattern in _INLINE:
        for match in pattern.finditer(text):
            if free(*match.span()):
                spans.append(match.span())
    for match in _TOKEN.finditer(text):
        token = match.group()
        core = token.lstrip("([{\"'“‘").rstrip(".,;:!?)]}\"'”’")
        if not core or not _PATHLIKE.search(core):
            continue
        start = match.start() + token.index(core)
        if free(start, start + len(core)):
            spans.append((start, start + len(core)))
    return sorted(spans)


def perturb(prompt: str, cls: str, k: int, seed: int) -> str:
    """The ``k``-th perturbation of class ``cls`` of ``prompt`` under ``seed``.

    Deterministic: the same four arguments always give the same text. A prompt in which
    the class finds nothing to change (a typo in a prompt without a word of four letters
    outside the protected spans) comes back unchanged.
    """
    if cls not in CLASSES:
        raise ValueError(f"unknown perturbation class {cls!r}; known: {', '.join(CLASSES)}")
    key = f"{seed}\0{cls}\0{k}\0{prompt}".encode()
    rng = random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))
    if cls == "filler":
        return _filler(prompt, rng)
    if cls == "whitespace":
        return _whitespace(prompt, rng)
    if cls == "format" and k % len(_FORMATS) == 0:
        return f"{rng.choice(_HEADINGS)}\n\n{prompt}"
    if cls == "format" and k % len(_FORMATS) == 4:
        return f"{rng.choice(_LABELS)}\n{prompt}"
    transform = _TEXT_TRANSFORMS[cls] if cls != "format" else _FORMATS[k % len(_FORMATS)]
    return _on_text(prompt, lambda text: transform(text, rng, k))


def _on_text(prompt: str, transform: Callable[[str], str]) -> str:
    """Apply ``transform`` to each text block, the protected spans held by placeholders."""
    spans = protected_spans(prompt)
    held: list[str] = []
    masked: list[str] = []
    position = 0
    for start, end in spans:
        masked.append(prompt[position:start])
        held.append(prompt[start:end])
        masked.append(f"\ue000{len(held) - 1}\ue001")
        position = end
    masked.append(prompt[position:])
    text = "".join(masked)
    blocks = [i for i, span in enumerate(held) if any(b.fullmatch(span) for b in _BLOCKS)]
    # A code block is lines of its own: the text between blocks is transformed piece by
    # piece, so no transformation can join a block to the line before it.
    pieces = [text]
    if blocks:
        pieces = re.split("(" + "|".join(f"\ue000{i}\ue001" for i in blocks) + ")", text)
    out = [
        piece if _HOLD.fullmatch(piece) or not piece.strip() else transform(piece)
        for piece in pieces
    ]
    return _HOLD.sub(lambda match: held[int(match.group(1))], "".join(out))


def _words(text: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(text))


def _typo(text: str, rng: random.Random, k: int) -> str:
    words = _words(text)
    if not words:
        return text
    count = max(1, round(len(words) * TYPO_RATE))
    chosen = sorted(rng.sample(range(len(words)), min(count, len(words))))
    result = text
    for index in reversed(chosen):
        match = words[index]
        result = result[: match.start()] + _misspell(match.group(), rng) + result[match.end() :]
    return result


def _misspell(word: str, rng: random.Random) -> str:
    """One edit of ``word`` that keeps its first letter: swap, drop, double or neighbour key."""
    i = rng.randrange(1, len(word) - 1)
    edit = rng.choice(("swap", "drop", "double", "neighbour"))
    if edit == "swap" and word[i] != word[i + 1]:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if edit == "neighbour":
        near = _neighbours(word[i])
        if near:
            return word[:i] + rng.choice(near) + word[i + 1 :]
    if edit == "double":
        return word[:i] + word[i] + word[i:]
    return word[:i] + word[i + 1 :]


def _neighbours(letter: str) -> str:
    lower = letter.lower()
    for r, row in enumerate(_KEYBOARD):
        c = row.find(lower)
        if c < 0:
            continue
        near = row[max(c - 1, 0) : c] + row[c + 1 : c + 2]
        for other in (r - 1, r + 1):
            if 0 <= other < len(_KEYBOARD):
                near += _KEYBOARD[other][c : c + 1]
        return near.upper() if letter.isupper() else near
    return ""


def _case(text: str, rng: random.Random, k: int) -> str:
    if k == 0:
        return text.lower()
    if k == 1:
        return text.upper()
    if k == 2:
        return _WORD.sub(lambda match: match.group().capitalize(), text)
    words = _words(text)
    result = text
    for match in reversed(words):
        if rng.random() < 0.3:
            change = rng.choice((str.upper, str.lower, str.capitalize))
            result = result[: match.start()] + change(match.group()) + result[match.end() :]
    if result == text and words:
        # Every word drew "no change": one word in capitals, so the prompt does differ.
        match = rng.choice(words)
        word = match.group()
        shouted = word.lower() if word.isupper() else word.upper()
        result = text[: match.start()] + shouted + text[match.end() :]
    return result


def _spaces(text: str, rng: random.Random, k: int) -> str:
    return re.sub(
        r"(?<=\S) (?=\S)",
        lambda m: rng.choice(("  ", "   ", "\t")) if rng.random() < 0.25 else " ",
        text,
    )


def _whitespace(prompt: str, rng: random.Random) -> str:
    spaced = _on_text(prompt, lambda text: _spaces(text, rng, 0))
    return rng.choice(("", " ", "\n", "  \n")) + spaced + rng.choice(("", " ", "\n", "\n\n", " \t"))


def _filler(prompt: str, rng: random.Random) -> str:
    before, after = rng.choice(((True, False), (False, True), (True, True)))
    text = prompt
    if before:
        # A prompt that starts with a heading, a list or a code block keeps it on its line.
        separator = " " if prompt[:1].isalpha() else "\n\n"
        text = f"{rng.choice(_FILLER_BEFORE)}{separator}{text}"
    if after:
        text = f"{text}\n\n{rng.choice(_FILLER_AFTER)}"
    return text


def _one_line(text: str, rng: random.Random, k: int) -> str:
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()) :]
    return lead + re.sub(r"\s*\n\s*", " ", text.strip()) + trail


def _sentence_lines(text: str, rng: random.Random, k: int) -> str:
    return _SENTENCE_END.sub("\n", text)


def _bullets(text: str, rng: random.Random, k: int) -> str:
    lines = _SENTENCE_END.sub("\n", text).split("\n")
    return "\n".join(
        f"- {line.strip()}" if line.strip() and not _MARKED.match(line) else line for line in lines
    )


def _unused(text: str, rng: random.Random, k: int) -> str:
    raise AssertionError("the heading and label formats wrap the whole prompt")


_Transform = Callable[[str, random.Random, int], str]
_TEXT_TRANSFORMS: dict[str, _Transform] = {
    "typo": _typo,
    "case": _case,
}
#: ``format`` by K modulo 5: heading, one line, a sentence per line, bullets, label.
_FORMATS: tuple[_Transform, ...] = (_unused, _one_line, _sentence_lines, _bullets, _unused)
