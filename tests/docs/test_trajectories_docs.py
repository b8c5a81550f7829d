"""The trajectory that docs/trajectories.md shows is what the plugin writes: valid
ATIF-v1.7 by the tests' own schema and by the plugin's models, and the pinned version
the page names is the one written."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pytest_evalcases.agents import atif
from tests.helpers import atif as independent

PAGE = Path(__file__).resolve().parents[2] / "docs" / "trajectories.md"


def test_the_example_trajectory_is_valid_atif() -> None:
    text = PAGE.read_text(encoding="utf-8")
    [block] = re.findall(r"^```json\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    document = json.loads(block)
    assert independent.errors(document) == []
    assert atif.parse(document, "docs/trajectories.md").schema_version == atif.SCHEMA_VERSION


def test_the_page_names_the_pinned_version() -> None:
    assert f"**`{atif.SCHEMA_VERSION}`**" in PAGE.read_text(encoding="utf-8")
