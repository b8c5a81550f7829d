"""Seeded, deterministic perturbations of a case's prompt (docs/perturbation.md).

``perturb(prompt, cls, k, seed)`` returns the K-th perturbation of class ``cls``: the same
arguments always give the same text, on every machine and Python version (the random
generator is seeded from a SHA-256 of the arguments, never from ``hash()``).

What must stay exact is never changed: fenced code blocks, inline code, quoted strings,
URLs and path-like tokens (:func:`protected_spans` says which). The text is split into
fenced blocks, which are kept as they are, and text blocks, in which every other
protected span is replaced by a placeholder before the class's transformation and put
back after it. A perturbation never equals the prompt: a draw that changes nothing is
drawn again (the draw's number is part of the seed), and a class that cannot change a
prompt at all (:func:`unchangeable` says why) makes no perturbation of it. ``paraphrase``
is no edit: its K-th perturbation is the K-th of the case's own ``paraphrases:``. Plain
Python, no model call.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pytest_evalcases import defaults
from pytest_evalcases.errors import UsageError

PerturbClass = Literal["typo", "case", "whitespace", "filler", "format", "paraphrase"]
#: The classes, in the order the documentation gives them.
CLASSES: tuple[PerturbClass, ...] = get_args(PerturbClass)

#: Share of the prompt's characters a ``typo`` perturbation changes (at least one).
TYPO_RATE = 0.02
#: Length of the text a ``filler`` perturbation adds, as a share of the prompt's.
FILLER_RATE = 0.10
#: How far past its tenth (as a share of it) filler may grow by one more sentence.
FILLER_SLACK = 0.05
#: Draws of a perturbation before the class's last resort (every class but ``format``
#: has one; ``format`` changes every prompt within five, one per layout).
DRAWS = 16
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
#: Where filler may go inside a prompt: after a sentence (one whose last word ends in
#: two small letters: never after "e.g." or "Mr."), or between paragraphs.
_BREAK = re.compile(r"(?<=[a-z][a-z][.!?])[ \t]+(?=[A-Z])|\n[ \t]*\n")

_KEYBOARD = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
#: Neutral sentences (docs/perturbation.md lists them): irrelevant to any task, asking
#: nothing and telling nothing; short ones too, so that a short prompt's filler stays
#: near its tenth.
FILLER = (
    "So.",
    "Anyway.",
    "Long week.",
    "Hello again.",
    "Good morning.",
    "Busy day here.",
    "It is raining here.",
    "Lunch was late today.",
    "The office is quiet today.",
    "I had a coffee a moment ago.",
    "It has been a long week so far.",
    "The weather is mild out here today.",
    "My laptop fan is rather loud this afternoon.",
    "The team had a long planning meeting this morning.",
    "Someone brought cake to the office, which was nice.",
    "I am writing this from the train on my way home tonight.",
    "We moved desks last week, so I sit by the window on the third floor now.",
    "The heating in our building was switched on yesterday, a little early this year.",
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

    def labels(self, prompt: str | None, paraphrases: int = 0) -> list[str]:
        """``CLASS-K`` of every perturbation of ``prompt`` (of a case with
        ``paraphrases`` of it), in the order items are collected: ``n`` per class, the
        first ``n`` paraphrases, none of a class that cannot change the prompt."""
        return [
            f"{cls}-{k}"
            for cls in self.classes
            for k in range(self.count(cls, prompt, paraphrases))
        ]

    def count(self, cls: str, prompt: str | None, paraphrases: int) -> int:
        """How many perturbations of class ``cls`` the prompt gets."""
        if prompt is None:
            return 0
        if cls == "paraphrase":
            return min(self.n, paraphrases)
        return 0 if unchangeable(prompt, cls) else self.n

    def gaps(self, prompt: str | None, paraphrases: int) -> list[tuple[str, str]]:
        """``(class, why)`` of each class of the plan that gets no perturbation."""
        return [
            (cls, "no paraphrases" if cls == "paraphrase" and prompt else unchangeable(prompt, cls))
            for cls in self.classes
            if not self.count(cls, prompt, paraphrases)
        ]

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


def unchangeable(prompt: str | None, cls: str) -> str:
    """Why class ``cls`` cannot change ``prompt`` whatever its seed (no prompt; for
    ``typo``, no word of four letters outside the protected spans; for ``case``, no
    letter); ``""`` when it can. ``paraphrase`` asks the case, not the prompt."""
    if prompt is None:
        return "no prompt"
    if cls == "typo" and not _sites(prompt, protected_spans(prompt)):
        return f"no word of {MIN_WORD} letters outside the protected spans"
    if cls == "case" and _cased(prompt, protected_spans(prompt)) is None:
        return "no letter outside the protected spans"
    return ""


def perturb(prompt: str, cls: str, k: int, seed: int, paraphrases: Sequence[str] = ()) -> str:
    """The ``k``-th perturbation of class ``cls`` of ``prompt`` under ``seed``
    (``paraphrase``: the ``k``-th of ``paraphrases``).

    Deterministic: the same arguments always give the same text, and never ``prompt``
    itself: a draw that changes nothing, or gives a smaller K's text, is followed by the
    next (each seeded by its number too), then by the class's smallest change.
    ``ValueError`` for a class that cannot change the prompt (:func:`unchangeable`), and
    for a paraphrase that is not there or is the prompt.
    """
    if cls not in CLASSES:
        raise ValueError(f"unknown perturbation class {cls!r}; known: {', '.join(CLASSES)}")
    if cls == "paraphrase":
        if not 0 <= k < len(paraphrases) or paraphrases[k] == prompt:
            raise ValueError(f"no paraphrase {k} of the prompt ({len(paraphrases)} given)")
        return paraphrases[k]
    why = unchangeable(prompt, cls)
    if why:
        raise ValueError(f"{cls} cannot change the prompt: {why}")
    earlier: list[str] = []
    for j in range(k + 1):
        earlier.append(_distinct(prompt, cls, j, seed, earlier))
    return earlier[-1]


def _distinct(prompt: str, cls: str, k: int, seed: int, earlier: Sequence[str]) -> str:
    """The first draw that changes the prompt and, when one of :data:`DRAWS` does, that
    differs from the ``earlier`` perturbations too."""
    found = ""
    for draw in range(DRAWS):
        # Draw 0's seed is the documented one; a draw that changed nothing adds its number.
        key = f"{seed}\0{cls}\0{k}\0{prompt}" + (f"\0{draw}" if draw else "")
        rng = random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))
        text = _draw(prompt, cls, k + draw if cls == "format" else k, rng, draw)
        if text != prompt and text not in earlier:
            return text
        found = found or (text if text != prompt else "")
    return found or _last_resort(prompt, cls)


def _draw(prompt: str, cls: str, k: int, rng: random.Random, draw: int) -> str:
    if cls == "typo":
        return _typo(prompt, rng)
    if cls == "filler":
        return _filler(prompt, rng)
    if cls == "whitespace":
        return _whitespace(prompt, rng)
    if cls == "case":
        # A draw that changed nothing takes the next mode: lower, upper, capitalised, mixed.
        mode = (min(k, 3) + draw) % 4
        return _on_text(prompt, lambda text: _case(text, rng, mode))
    if k % len(_FORMATS) == 0:
        return f"{rng.choice(_HEADINGS)}\n\n{prompt}"
    if k % len(_FORMATS) == 4:
        return f"{rng.choice(_LABELS)}\n{prompt}"
    transform = _FORMATS[k % len(_FORMATS)]
    return _on_text(prompt, lambda text: transform(text, rng, k))


def _last_resort(prompt: str, cls: str) -> str:
    """The smallest change of the class, when every draw changed nothing."""
    spans = protected_spans(prompt)
    if cls == "typo":
        site = _sites(prompt, spans)[0][0]
        return prompt[:site] + prompt[site + 1 :]
    letter = _cased(prompt, spans)
    if cls == "case" and letter is not None:
        return prompt[:letter] + prompt[letter].swapcase() + prompt[letter + 1 :]
    if cls == "whitespace":
        return prompt + "\n"
    raise ValueError(f"{cls} did not change the prompt in {DRAWS} draws")


def _outside(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    return all(end <= a or start >= b for a, b in spans)


def _sites(prompt: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Where a typo may go: ``(position, end of its word)`` of every letter but the first
    of each word of :data:`MIN_WORD` letters or more outside the protected spans."""
    return [
        (at, word.end())
        for word in _WORD.finditer(prompt)
        if _outside(spans, *word.span())
        for at in range(word.start() + 1, word.end())
    ]


def _cased(prompt: str, spans: Sequence[tuple[int, int]]) -> int | None:
    """The first letter with a case outside the protected spans."""
    for at, char in enumerate(prompt):
        if char.lower() != char.upper() and _outside(spans, at, at + 1):
            return at
    return None


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


def _typo(prompt: str, rng: random.Random) -> str:
    """About :data:`TYPO_RATE` of the prompt's characters changed: letters transposed
    (two characters), dropped or replaced by a keyboard neighbour (one each), at places
    at least three characters apart, so that each edit counts on its own."""
    sites = _sites(prompt, protected_spans(prompt))
    budget = max(1, round(len(prompt) * TYPO_RATE))
    edits: dict[int, str] = {}
    spent = 0
    for at, end in rng.sample(sites, len(sites)):
        if spent >= budget:
            break
        if any(abs(at - other) < 3 for other in edits):
            continue
        kinds = ["drop", "replace"]
        if spent + 2 <= budget and at + 1 < end and prompt[at] != prompt[at + 1]:
            kinds.append("swap")
        edits[at] = rng.choice(kinds)
        spent += 2 if edits[at] == "swap" else 1
    text = prompt
    for at in sorted(edits, reverse=True):
        edit = edits[at]
        if edit == "swap":
            text = text[:at] + text[at + 1] + text[at] + text[at + 2 :]
        elif edit == "drop":
            text = text[:at] + text[at + 1 :]
        else:
            near = _neighbours(text[at]) or _other_letters(text[at])
            text = text[:at] + rng.choice(near) + text[at + 1 :]
    return text


def _other_letters(letter: str) -> str:
    """Any other letter, for a letter that is not on the keyboard's rows."""
    others = "".join(c for c in "etaoinsrhl" if c != letter.lower())
    return others.upper() if letter.isupper() else others


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


def _case(text: str, rng: random.Random, mode: int) -> str:
    if mode == 0:
        return text.lower()
    if mode == 1:
        return text.upper()
    if mode == 2:
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
    """Neutral sentences of about :data:`FILLER_RATE` of the prompt's length, at a
    seeded place: before the prompt, after it, or between two of its sentences or
    paragraphs outside the protected spans."""
    target = len(prompt) * FILLER_RATE
    # A prompt longer than the pool's ten times gets the pool more than once.
    rounds = 1 + int(target // sum(len(sentence) + 1 for sentence in FILLER))
    pool = [s for _ in range(rounds) for s in rng.sample(FILLER, len(FILLER))]
    chosen: list[str] = []
    size = 0
    for sentence in pool:
        # Each sentence with its space; a little over the tenth beats far under it.
        if size + len(sentence) + 1 <= target + max(3.0, target * FILLER_SLACK):
            chosen.append(sentence)
            size += len(sentence) + 1
    if not chosen:
        # A prompt too short for any: one of the shortest sentences.
        chosen = [rng.choice(sorted(FILLER, key=len)[:3])]
    filler = " ".join(chosen)
    spans = protected_spans(prompt)
    inside = [
        m.span()
        for m in _BREAK.finditer(prompt)
        if m.start() > 0 and m.end() < len(prompt) and _outside(spans, *m.span())
    ]
    places: list[tuple[int, int] | None] = [None, (len(prompt), len(prompt)), *inside]
    place = rng.choice(places)
    if place is None:
        # A prompt that starts with a heading, a list or a code block keeps it on its line.
        return filler + (" " if prompt[:1].isalpha() else "\n\n") + prompt
    start, end = place
    gap = prompt[start:end]
    if start == len(prompt):
        between = " " if prompt.rstrip()[-1:] in (".", "!", "?") and "\n" not in prompt else "\n\n"
        return prompt + between + filler
    return prompt[:start] + gap + filler + gap + prompt[end:]


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
#: ``format`` by K modulo 5: heading, one line, a sentence per line, bullets, label.
_FORMATS: tuple[_Transform, ...] = (_unused, _one_line, _sentence_lines, _bullets, _unused)
