"""Which skills an agent's transcript shows it loading (docs/skills.md).

Each agent CLI loads a skill its own way, and its transcript shows it so:

- Claude Code calls its ``Skill`` tool with ``{"skill": NAME}``;
- Codex reads the skill's ``SKILL.md`` from the filesystem with a shell command, so a
  shell call whose command names ``…/skills/NAME/SKILL.md`` is a load;
- Gemini CLI calls ``activate_skill`` with ``{"name": NAME}``, which its transcript
  (``-o stream-json``) shows; its plain JSON output counts tool calls by name without
  their inputs: it shows *that* a skill was activated, not which one.

- the ``command`` agent's trajectory (docs/trajectories.md) shows a load in any of
  these ways: a ``Skill`` or ``activate_skill`` call, or a shell or read call naming
  ``…/skills/NAME/SKILL.md``.

An agent not listed here shows no skills at all: the skill checks are an error for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_evalcases.agents.base import ToolCall


@dataclass(frozen=True)
class SkillLoads:
    """The skill loads a transcript shows."""

    #: The names of the skills loaded, one per load, in order.
    names: tuple[str, ...]
    #: Loads whose skill the transcript does not name (Gemini CLI's JSON output).
    unnamed: int = 0

    def count(self, skill: str) -> int:
        """How many loads name ``skill``."""
        return sum(1 for name in self.names if name == skill)


def _claude(call: ToolCall) -> str | None:
    if call.name != "Skill":
        return None
    name = _json_field(call.input, "skill", "command")
    # A plugin's skill is `PLUGIN:NAME`; a model may write a slash command's `/NAME`.
    return name.rsplit(":", 1)[-1].lstrip("/") if name else ""


#: A path to a skill's entry point: ``skills/NAME/SKILL.md``.
_SKILL_PATH = re.compile(r"(?:^|[/\s'\"=])skills/([^/\s'\"]+)/SKILL\.md\b")


def _codex(call: ToolCall) -> str | None:
    if call.kind not in ("shell", "read"):
        return None
    found = _SKILL_PATH.search(call.input)
    return found.group(1) if found else None


def _gemini(call: ToolCall) -> str | None:
    if call.name != "activate_skill":
        return None
    return _json_field(call.input, "name") or ""


def _json_field(text: str, *keys: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return ""
    if isinstance(data, dict):
        for key in keys:
            value = data.get(key)
            if isinstance(value, str):
                return value
    return ""


def _trajectory(call: ToolCall) -> str | None:
    for reader in (_claude, _gemini, _codex):
        name = reader(call)
        if name is not None:
            return name
    return None


#: Per agent: the skill a tool call loads (``""``: a load that does not say which),
#: or ``None`` for a call that loads none.
READERS: dict[str, Callable[[ToolCall], str | None]] = {
    "claude": _claude,
    "codex": _codex,
    "gemini": _gemini,
    "command": _trajectory,
}


def skill_loads(agent: str | None, calls: Sequence[ToolCall]) -> SkillLoads | None:
    """The skill loads in ``calls``, the transcript of ``agent``; ``None`` when that
    agent's transcript cannot show skills."""
    reader = READERS.get(agent or "")
    if reader is None:
        return None
    names: list[str] = []
    unnamed = 0
    for call in calls:
        name = reader(call)
        if name:
            names.append(name)
        elif name is not None:
            unnamed += 1
    return SkillLoads(tuple(names), unnamed)
