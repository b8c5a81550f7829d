"""What a variant is made of, and what differs between two (docs/variants.md).

A variant of ``--eval-variant`` or ``--eval-config`` fixes four factors: the agent, the
model asked of it, the agent's extra arguments and the configuration SOURCE. A
comparison of two variants is about the factors that differ between them; when more
than one does, its outcome cannot be put down to any one of them (it is confounded).
Plain Python: the session describes its variants, the results file stores them, the
summary, ``evalcases compare`` and the HTML report name them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The factors in the order comparisons name them.
FACTORS = ("agent", "model", "args", "config")
#: The configuration of a variant that names none: the working tree's files.
WORKING_TREE = "."


@dataclass(frozen=True)
class Factors:
    """A variant's factors as they took effect: the session's values where the variant
    left one out. ``""`` is "none given": no agent, the agent's default model."""

    agent: str = ""
    model: str = ""
    args: tuple[str, ...] = ()
    config: str = WORKING_TREE

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent or None,
            "model": self.model or None,
            "args": list(self.args),
            "config": self.config,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Factors | None:
        """The factors a results file stored; ``None`` for a file without them (one
        written before variants had factors, a graded directory)."""
        if not isinstance(data, Mapping):
            return None
        args = data.get("args")
        return cls(
            agent=str(data.get("agent") or ""),
            model=str(data.get("model") or ""),
            args=tuple(str(a) for a in args) if isinstance(args, list) else (),
            config=str(data.get("config") or WORKING_TREE),
        )

    def value(self, factor: str) -> str:
        """The factor as a word: ``codex``, ``gpt-5``, ``the agent's default``."""
        if factor == "agent":
            return self.agent or "none"
        if factor == "model":
            return self.model or "the agent's default"
        if factor == "args":
            return " ".join(self.args) or "none"
        return "the working tree" if self.config == WORKING_TREE else self.config

    def describe(self) -> str:
        """``codex, model gpt-5``: the agent, and whichever of the others were given."""
        parts = [self.agent or "no agent"]
        if self.model:
            parts.append(f"model {self.model}")
        if self.args:
            parts.append(f"args {' '.join(self.args)}")
        if self.config != WORKING_TREE:
            parts.append(f"config {self.config}")
        return ", ".join(parts)


def differing(base: Factors, other: Factors) -> tuple[str, ...]:
    """The factors whose values differ, in :data:`FACTORS` order."""
    return tuple(f for f in FACTORS if getattr(base, f) != getattr(other, f))


def label(differ: Sequence[str] | None) -> str:
    """What a comparison is about, for its line: ``(agent)``, ``(confounded: agent and
    model differ)``, ``(nothing differs)``; ``""`` when the variants' factors are not
    known (graded directories, a results file that did not store them)."""
    if differ is None:
        return ""
    if not differ:
        return " (nothing differs)"
    if len(differ) == 1:
        return f" ({differ[0]})"
    named = ", ".join(differ[:-1]) + f" and {differ[-1]}"
    return f" (confounded: {named} differ)"
