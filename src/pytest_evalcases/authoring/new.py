"""``evalcases new ID``: a commented case file to start from.

The template validates as written, and its first check is a negative one: most rules a
team writes for an agent are prohibitions, and a case that only checks that something
happened rarely catches the agent doing what it was told not to.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pytest_evalcases.errors import UsageError

_KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

YAML_TEMPLATE = """\
# Eval case {id}: a frozen task (fixture + prompt) and what must hold after the agent ran.
# Reference: docs/case-format.md. Editor completion: `evalcases schema > {dir}/_schema.json`
# (files starting with _ are not collected), then keep the next line:
# yaml-language-server: $schema=_schema.json
#
# Workflow: write the case, confirm it FAILS against the current configuration
#   pytest {path} --eval-red-first
# then strengthen the rule it defends until it passes; `evalcases lint` finds weak cases.

id: {id}  # kebab-case, unique in the suite, equal to the file name
# The rule, skill, hook or config file this case protects, relative to the rootdir.
defends: AGENTS.md
severity: normal  # critical (blocks the merge) | normal (fails the run) | advisory (reported)
description: What must hold, in one line (shown in reports)
# Fixture directory, relative to this evals directory, copied into a fresh workspace for
# every run. Leave it out for an empty workspace.
# cwd: fixtures/repo-api
# Shell run in the workspace before the agent (e.g. make the fixture a git repository):
# setup: >-
#   git init -q -b main && git add -A &&
#   git -c user.name=dev -c user.email=dev@example.com commit -qm 'initial import'
# What a user would really type. Never hint at the rule: the configuration must supply it.
prompt: >-
  Replace this with the task, word for word as a user would ask it.
tags: []
checks:  # all must pass
  # First what must NOT happen: most rules are prohibitions.
  - id: no-forbidden-text
    type: output_not_matches
    pattern: "(?i)replace this with what the agent must never say"
    description: the answer does not contain the forbidden thing
  # Then what must happen, e.g.:
  # - type: file_not_matches      # the file exists and does not match
  #   path: src/app.py
  #   pattern: "password\\\\s*=\\\\s*['\\"]"
  # - type: tool_not_called       # shell, read, write, edit, search, web, other
  #   tool: shell
  #   input: "grep -r"
  # - type: file_exists
  #   path: tests/test_*.py
  # - type: command_succeeds
  #   command: python -m pytest -q
"""

JSON_GUIDANCE = (
    "Replace this description with what must hold, in one line. Guidance (JSON has no "
    "comments): defends is the rule/skill/config file this case protects, relative to the "
    "rootdir; severity is critical, normal or advisory; add cwd (a fixture directory "
    "relative to the evals directory) and setup (shell run before the agent) when the task "
    "needs files; the prompt is what a user would really type, with no hint of the rule; "
    "start with negative checks (output_not_matches, file_not_matches, tool_not_called), "
    "then positive ones. Confirm the case fails first: pytest {path} --eval-red-first. "
    "Reference: docs/case-format.md; editor schema: evalcases schema."
)


def render(case_id: str, directory: str, path: str, fmt: str) -> str:
    """The text of a new case file."""
    if fmt == "yaml":
        return YAML_TEMPLATE.format(id=case_id, dir=directory, path=path)
    data = {
        "id": case_id,
        "defends": "AGENTS.md",
        "severity": "normal",
        "description": JSON_GUIDANCE.format(path=path),
        "prompt": "Replace this with the task, word for word as a user would ask it.",
        "tags": [],
        "checks": [
            {
                "id": "no-forbidden-text",
                "type": "output_not_matches",
                "pattern": "(?i)replace this with what the agent must never say",
                "description": "the answer does not contain the forbidden thing",
            }
        ],
    }
    return json.dumps(data, indent=2) + "\n"


def create(case_id: str, directory: Path, fmt: str = "yaml") -> Path:
    """Write the case file ``directory/ID.yaml`` (or ``.json``); never overwrite."""
    if not _KEBAB.match(case_id):
        raise UsageError(
            f"case id {case_id!r} is not kebab-case (lowercase letters, digits and single "
            "hyphens, e.g. attribution-no-trailer)"
        )
    if fmt not in ("yaml", "json"):
        raise UsageError(f"--format expects yaml or json, got {fmt!r}")
    target = directory / f"{case_id}.{fmt}"
    for suffix in (".yaml", ".yml", ".json"):
        existing = directory / f"{case_id}{suffix}"
        if existing.exists():
            raise UsageError(f"{existing} already exists; not overwriting it")
    directory.mkdir(parents=True, exist_ok=True)
    text = render(case_id, directory.as_posix(), target.as_posix(), fmt)
    with target.open("x", encoding="utf-8") as handle:
        handle.write(text)
    return target
