"""docs/case-format.md, "Limits", against cases/limits.py: the table gives the limits the
loader applies, every one of them."""

from __future__ import annotations

import re
from pathlib import Path

from pytest_evalcases.cases import limits

PAGE = Path(__file__).resolve().parents[2] / "docs" / "case-format.md"

#: The table's rows, by the words their first cell starts with, and the limits they say.
ROWS = {
    "a case file (or `task.md`), in bytes": (limits.FILE_BYTES,),
    "a case file's text": (limits.DATA_CHARS,),
    "`id` of a case or a check": (limits.ID_CHARS,),
    "`tags`": (limits.TAGS, limits.TAG_CHARS),
    "`description`, `quarantine`, `task`": (limits.LINE_CHARS,),
    "`defends`, `cwd`": (limits.PATH_CHARS,),
    "`pattern`, `tool`, `input`": (limits.PATTERN_CHARS,),
    "`prompt` (and `task.md`), `setup`, `command`": (limits.TEXT_CHARS,),
    "`checks` of one case": (limits.CHECKS,),
    "`script` turns of one case": (limits.TURNS,),
}


def limits_table() -> list[tuple[str, str]]:
    section = PAGE.read_text("utf-8").split("\n## Limits\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    return [
        (cells[0], cells[1])
        for cells in ([c.strip() for c in r.strip("|").split("|")] for r in rows)
    ]


def test_the_limits_table_says_what_the_loader_applies() -> None:
    table = limits_table()

    assert len(table) == len(ROWS)
    for (what, says), (start, values) in zip(table, ROWS.items(), strict=True):
        assert what.startswith(start), what
        numbers = [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", says + " " + what)]
        assert all(value in numbers for value in values), (what, says)
