"""A deterministic corpus of mutated case files, for the fuzz test and the campaign.

:func:`corpus` turns a few valid case files (YAML and JSON, a single case, a ``cases:``
list, a task directory's ``checks.yaml``) into a few hundred mutations: byte flips,
truncations, deleted, duplicated and swapped lines, a wrong type in each field, huge
values, unicode oddities (lone surrogates, NUL, BOMs, control and line-separator
characters, other encodings), deep nesting, anchors and aliases, duplicate keys, YAML
tags and directives, odd file kinds (symlinks that dangle or loop, a FIFO, a link to
``/dev/null``, a hard link) and ids that collide with the valid case beside them.

The same seed gives the same corpus, byte for byte, on every machine. Every mutation
has a stable name; a test marks the names that fail today (and why) by that name.
Plain standard library: ``benchmarks/campaign.py`` imports it too.
"""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

#: The seed of :func:`corpus`; a changed corpus is a changed test, on purpose.
SEED = 20261202

#: The id of the valid case that stands beside every mutation (``evals/valid.yaml``).
VALID_ID = "valid"
VALID_CASE = f"""\
id: {VALID_ID}
defends: rules/valid.md
checks:
  - type: file_exists
    path: ok.txt
"""

#: Files every suite of the corpus has: the fixture its bases name with ``cwd:``, a
#: graded directory (``--eval-workspace graded``) whose checks the bases pass.
FIXTURE_DIR = "fixtures/repo"
GRADED = {
    "ok.txt": "ok\n",
    "sub/keep.txt": "kept\n",
    ".evalcases/output.txt": "fix: done\n",
}

#: The case file that a ``symlink-to-outside`` mutation links to, outside the evals root.
OUTSIDE_CASE = (
    "id: from-outside\ndefends: rules/o.md\nchecks:\n  - type: file_exists\n    path: ok.txt\n"
)

Kind = Literal["file", "symlink", "fifo", "hardlink", "unreadable"]


@dataclass(frozen=True)
class Mutation:
    """One mutated case file, written at ``name`` (relative to the evals root)."""

    #: Stable name, unique in the corpus: ``<base>-<category>-<detail>``.
    key: str
    category: str
    #: Where the file goes, relative to the evals root (its suffix decides the format;
    #: ``checks.yaml`` in a directory of its own is a task directory).
    name: str
    #: The bytes of a ``file`` (also of an ``unreadable`` one); ``b""`` for other kinds.
    content: bytes = b""
    kind: Kind = "file"
    #: A symlink's target (relative to the link's directory, or absolute); a hard
    #: link's source, relative to the evals root.
    target: str = ""
    #: Whether a parser can point at a line (false for a file that cannot be read).
    line_known: bool = True

    @property
    def is_task(self) -> bool:
        return self.name.endswith("/checks.yaml")

    def write(self, evals_root: Path) -> Path:
        """Create the mutation under ``evals_root``; its path."""
        path = evals_root / self.name
        path.parent.mkdir(parents=True, exist_ok=True)
        if self.kind == "symlink":
            path.symlink_to(self.target)
        elif self.kind == "fifo":
            os.mkfifo(path)
        elif self.kind == "hardlink":
            os.link(evals_root / self.target, path)
        else:
            path.write_bytes(self.content)
            if self.kind == "unreadable":
                path.chmod(0)
        return path


def write_suite(evals_root: Path) -> Path:
    """The valid case, the fixture the bases need, the graded directory beside
    ``evals_root`` and a directory ``outside`` beside it (a case file and a fixture
    that symlinks point to); the valid case's path."""
    fixture = evals_root / FIXTURE_DIR
    outside = evals_root.parent / "outside"
    for rel, text in GRADED.items():
        for base in (fixture, evals_root.parent / "graded", outside):
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(text, encoding="utf-8")
    (outside / "case.yaml").write_text(OUTSIDE_CASE, encoding="utf-8")
    (evals_root / "fixtures" / "link-out").symlink_to(outside)
    valid = evals_root / "valid.yaml"
    valid.write_text(VALID_CASE, encoding="utf-8")
    return valid


# The bases. ``@ID@`` is replaced by the mutation's own id, so that many mutations can
# stand side by side in one suite without colliding.

YAML_CASE = """\
# Every field of a case (docs/case-format.md)
id: @ID@
defends: rules/git.md
severity: critical
description: The agent fixes the bug without a co-author trailer
cwd: fixtures/repo
setup: "true"
prompt: |
  Fix the bug in app.py and commit it.
  Use a conventional commit message.
bare: true
timeout: 30
min_pass_rate: 0.5
tags: [git, style]
checks:
  - type: file_exists
    path: ok.txt
  - type: file_absent
    path: "**/*.orig"
  - type: directory_exists
    path: sub
  - type: file_matches
    path: ok.txt
    pattern: "^ok$"
  - type: file_not_matches
    path: ok.txt
    pattern: DROP TABLE
  - type: file_contains
    file: ok.txt
    pattern: ok
  - type: file_unchanged
    path: ok.txt
  - type: command_succeeds
    command: "true"
    timeout: 20
  - type: command_fails
    command: "false"
  - type: output_matches
    pattern: "^fix"
  - type: output_not_matches
    id: no-trailer
    description: no co-author trailer
    pattern: "(?i)co-authored-by"
"""

YAML_LIST = """\
cases:
  - id: @ID@-a
    defends: rules/a.md
    severity: normal
    tags: [a]
    checks:
      - {type: file_exists, path: ok.txt}
      - {type: file_matches, path: ok.txt, pattern: "ok"}

  - id: @ID@-b
    defends: rules/b.md
    severity: advisory
    prompt: "Say ok"
    checks:
      - type: output_matches
        pattern: fix
      - type: file_absent
        path: "*.bak"
"""

YAML_TASK = """\
task: Fix the bug and keep the tests green
defends: rules/tasks.md
description: A task directory's checks
tags: [task]
timeout: 60
checks:
  - id: has-ok
    type: file_exists
    path: ok.txt
    severity: HIGH
  - id: ok-text
    type: file_contains
    file: ok.txt
    pattern: ok
    severity: LOW
"""

JSON_CASE_DATA: dict[str, Any] = {
    "id": "@ID@",
    "defends": "rules/json.md",
    "severity": "normal",
    "description": "A JSON case with most fields",
    "cwd": "fixtures/repo",
    "prompt": "Fix it.\nCommit it.",
    "bare": False,
    "timeout": 45.5,
    "min_pass_rate": 1,
    "tags": ["json", "fuzz"],
    "checks": [
        {"type": "file_exists", "path": "ok.txt"},
        {"type": "file_matches", "path": "ok.txt", "pattern": "^ok"},
        {"type": "command_succeeds", "command": "test -f ok.txt", "timeout": 10},
        {"type": "output_not_matches", "id": "no-sorry", "pattern": "(?i)sorry"},
    ],
}

JSON_LIST_DATA: dict[str, Any] = {
    "cases": [
        {
            "id": "@ID@-a",
            "defends": "rules/a.md",
            "checks": [{"type": "file_exists", "path": "ok.txt"}],
        },
        {
            "id": "@ID@-b",
            "defends": "rules/b.md",
            "severity": "advisory",
            "checks": [{"type": "directory_exists", "path": "sub"}],
        },
    ]
}


@dataclass(frozen=True)
class _Base:
    name: str
    suffix: Literal[".yaml", ".json", "task"]
    text: str


BASES = (
    _Base("ycase", ".yaml", YAML_CASE),
    _Base("ylist", ".yaml", YAML_LIST),
    _Base("ytask", "task", YAML_TASK),
    _Base("jcase", ".json", json.dumps(JSON_CASE_DATA, indent=2) + "\n"),
    _Base("jlist", ".json", json.dumps(JSON_LIST_DATA, separators=(",", ":"))),
)

#: Bytes a flip writes: YAML and JSON syntax, whitespace, and bytes that are not text.
_FLIP_BYTES = b"\x00\x07\x09\x0a\x0d\x1b \"#&'*,-:>[\\]{|}!%@`\x7f\x80\xc3\xff"

#: Wrong values for any field, as JSON (which YAML reads too).
_WRONG: tuple[Any, ...] = (
    None,
    0,
    -1,
    True,
    "",
    "not the right kind",
    [],
    {},
    ["a", ["b"]],
    {"nested": {"deeper": 1}},
    1.5e308,
    -0.0,
)

#: Fields of the YAML case base, top level and in checks, each as a regex of its line.
_YAML_FIELDS = (
    "id",
    "defends",
    "severity",
    "description",
    "cwd",
    "setup",
    "bare",
    "timeout",
    "min_pass_rate",
    "tags",
    "checks",
    "  - type",
    "    path",
    "    pattern",
    "    file",
    "    command",
    "    id",
    "    description",
)


class _Builder:
    """Collects the mutations of one corpus, naming them and keeping them unique."""

    def __init__(self) -> None:
        self.items: dict[str, Mutation] = {}
        self.counter = 0

    def next_id(self) -> str:
        self.counter += 1
        return f"fz-{self.counter:03d}"

    def add(
        self,
        base: _Base | str,
        category: str,
        detail: str,
        content: str | bytes = b"",
        **more: Any,
    ) -> None:
        base_name = base.name if isinstance(base, _Base) else base
        suffix = base.suffix if isinstance(base, _Base) else more.pop("suffix", ".yaml")
        key = f"{base_name}-{category}-{detail}"
        assert key not in self.items, key
        fid = self.next_id()
        if isinstance(content, str):
            data = content.replace("@ID@", fid).encode("utf-8", "surrogatepass")
        else:
            data = content.replace(b"@ID@", fid.encode())
        name = more.pop("name", None)
        if name is None:
            name = f"{fid}/checks.yaml" if suffix == "task" else f"{fid}{suffix}"
        self.items[key] = Mutation(key, category, name, data, **more)


def corpus(seed: int = SEED) -> list[Mutation]:
    """Every mutation, in a stable order."""
    rng = random.Random(seed)
    b = _Builder()
    for base in BASES:
        _byte_flips(b, rng, base, 10)
        _truncations(b, rng, base, 6)
        _line_edits(b, rng, base, 4)
    _wrong_types(b, rng)
    _huge_values(b)
    _unicode(b)
    _nesting(b)
    _aliases(b)
    _duplicate_keys(b)
    _yaml_tags(b)
    _yaml_scalars(b)
    _odd_kinds(b)
    _duplicate_ids(b)
    _cwd_escapes(b)
    return list(b.items.values())


def by_key(seed: int = SEED) -> dict[str, Mutation]:
    return {m.key: m for m in corpus(seed)}


def _byte_flips(b: _Builder, rng: random.Random, base: _Base, count: int) -> None:
    raw = base.text.encode("utf-8")
    for n in range(count):
        data = bytearray(raw)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(data))
            if rng.random() < 0.5:
                data[at] ^= 1 << rng.randrange(8)
            else:
                data[at] = rng.choice(_FLIP_BYTES)
        b.add(base, "flip", f"{n:02d}", bytes(data))


def _truncations(b: _Builder, rng: random.Random, base: _Base, count: int) -> None:
    raw = base.text.encode("utf-8")
    cuts = sorted(
        {len(raw) // 2, len(raw) - 1, *(rng.randrange(1, len(raw)) for _ in range(count))}
    )
    for cut in cuts[:count]:
        b.add(base, "truncate", f"at-{cut}", raw[:cut])


def _line_edits(b: _Builder, rng: random.Random, base: _Base, count: int) -> None:
    lines = base.text.splitlines(keepends=True)
    if len(lines) < 3:
        lines = base.text.replace(",", ",\n").splitlines(keepends=True)
    picks = rng.sample(range(len(lines)), min(count, len(lines)))
    for at in picks:
        b.add(base, "delete-line", f"{at:02d}", "".join(lines[:at] + lines[at + 1 :]))
    for at in rng.sample(range(len(lines)), min(count, len(lines))):
        b.add(base, "duplicate-line", f"{at:02d}", "".join(lines[: at + 1] + lines[at:]))
    for at in rng.sample(range(len(lines) - 1), min(2, len(lines) - 1)):
        swapped = [*lines[:at], lines[at + 1], lines[at], *lines[at + 2 :]]
        b.add(base, "swap-lines", f"{at:02d}", "".join(swapped))


def _set_yaml_field(text: str, field: str, value: str) -> str:
    """``text`` with the first line of ``field`` (a regex of its indentation and key)
    holding ``value`` instead, its block continuation (``|`` lines) dropped."""
    indent, key = re.match(r"^(\s*(?:- )?)(\S+)$", field).groups()  # type: ignore[union-attr]
    lines = text.splitlines(keepends=True)
    pattern = re.compile(rf"^{re.escape(indent)}{re.escape(key)}:")
    for at, line in enumerate(lines):
        if pattern.match(line):
            end = at + 1
            if line.rstrip().endswith(("|", ">")) or (
                key == "checks" and line.strip() == "checks:"
            ):
                while end < len(lines) and lines[end].startswith((" ", "\n")):
                    end += 1
            lines[at:end] = [f"{line[: line.index(':') + 1]} {value}\n"]
            return "".join(lines)
    raise KeyError(field)


def _wrong_types(b: _Builder, rng: random.Random) -> None:
    yaml_case = BASES[0]
    for field in _YAML_FIELDS:
        # Three picks, the first two that change the file (`true` is right for `bare`).
        picks = rng.sample(_WRONG, 3)
        changing = [
            v for v in picks if _set_yaml_field(YAML_CASE, field, json.dumps(v)) != YAML_CASE
        ]
        for value in changing[:2]:
            rendered = json.dumps(value)
            detail = f"{field.strip(' -')}-{_value_name(value)}"
            if field.startswith(" "):
                detail = "check-" + detail
            b.add(yaml_case, "wrong-type", detail, _set_yaml_field(YAML_CASE, field, rendered))
    json_case = BASES[3]
    for field in JSON_CASE_DATA:
        value = rng.choice(_WRONG)
        data = json.loads(json.dumps(JSON_CASE_DATA))
        data[field] = value
        b.add(json_case, "wrong-type", f"{field}-{_value_name(value)}", json.dumps(data, indent=2))
    for field in ("type", "path", "pattern", "command", "timeout", "id"):
        value = rng.choice(_WRONG)
        data = json.loads(json.dumps(JSON_CASE_DATA))
        check = next(c for c in data["checks"] if field in c)
        check[field] = value
        detail = f"check-{field}-{_value_name(value)}"
        b.add(json_case, "wrong-type", detail, json.dumps(data, indent=2))
    task = BASES[2]
    for field in ("task", "defends", "tags", "timeout", "checks", "    severity", "  - id"):
        value = rng.choice(_WRONG)
        detail = f"{field.strip(' -')}-{_value_name(value)}"
        b.add(task, "wrong-type", detail, _set_yaml_field(YAML_TASK, field, json.dumps(value)))


def _value_name(value: Any) -> str:
    """A short name of a wrong value, for the mutation's key."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, float):
        return "minus-zero" if value == 0 else "huge-float"
    if isinstance(value, int):
        return "zero" if value == 0 else "minus-one"
    if isinstance(value, str):
        return "str" if value else "empty-str"
    if isinstance(value, list):
        return "list" if value else "empty-list"
    return "map" if value else "empty-map"


def _json_case(**fields: Any) -> str:
    data = {**JSON_CASE_DATA, **fields}
    return json.dumps(data, indent=2)


def _yaml_case(**fields: str) -> str:
    text = YAML_CASE
    for field, value in fields.items():
        text = _set_yaml_field(text, field, value)
    return text


MIB = 1 << 20


def _huge_values(b: _Builder) -> None:
    y, j = "ycase", "jcase"
    b.add(y, "huge", "id-1mib", _yaml_case(id="A" * MIB))
    b.add(j, "huge", "id-1mib", _json_case(id="b" * MIB), suffix=".json")
    b.add(y, "huge", "prompt-1mib", YAML_CASE.replace("  Use a", "  " + "p" * MIB + "\n  Use a"))
    b.add(y, "huge", "description-1mib", _yaml_case(description="d" * MIB))
    b.add(j, "huge", "tags-20k", _json_case(tags=[f"t{n}" for n in range(20_000)]), suffix=".json")
    b.add(y, "huge", "tag-1mib", _yaml_case(tags=f"[{'t' * MIB}]"))
    b.add(y, "huge", "timeout-5000-digits", _yaml_case(timeout="9" * 5000))
    b.add(
        j,
        "huge",
        "timeout-5000-digits",
        _json_case(timeout=0).replace('"timeout": 0', '"timeout": ' + "9" * 5000),
        suffix=".json",
    )
    b.add(y, "huge", "min-pass-rate-5000-digits", _yaml_case(min_pass_rate="1" + "0" * 4999))
    b.add(y, "huge", "timeout-400-digits", _yaml_case(timeout="9" * 400))
    b.add(y, "huge", "timeout-1e308", _yaml_case(timeout="1.0e+308"))
    b.add(y, "huge", "timeout-denormal", _yaml_case(timeout="4.9e-324"))
    b.add(
        j,
        "huge",
        "timeout-1e-400",
        _json_case(timeout=0).replace('"timeout": 0', '"timeout": 1e-400'),
        suffix=".json",
    )
    b.add(
        y,
        "huge",
        "pattern-20k",
        _set_yaml_field(YAML_CASE, "    pattern", "'" + "a?" * 10_000 + "'"),
    )
    b.add(y, "huge", "path-deep", _set_yaml_field(YAML_CASE, "    path", "a/" * 20_000 + "b"))
    b.add(y, "huge", "checks-2000", YAML_CASE + "  - {type: file_exists, path: ok.txt}\n" * 2000)
    b.add(
        "ylist",
        "huge",
        "cases-500",
        "cases:\n"
        + "".join(
            f"  - {{id: @ID@-{n}, defends: r.md, checks: [{{type: file_exists, path: ok.txt}}]}}\n"
            for n in range(500)
        ),
    )
    b.add(y, "huge", "line-2mib", "# " + "x" * (2 * MIB) + "\n" + YAML_CASE)


def _unicode(b: _Builder) -> None:
    y, j = "ycase", "jcase"
    for field in ("description", "prompt", "defends", "id", "tags"):
        for name, escape in (
            ("high", "\\ud800"),
            ("low", "\\udc00"),
            ("reversed", "\\udc00\\ud800"),
        ):
            value = '["x' + escape + 'y"]' if field == "tags" else '"x' + escape + 'y"'
            text = _json_case(**{field: "@@"}).replace('"@@"', value)
            b.add(j, "surrogate", f"{field}-{name}", text, suffix=".json")
    b.add(
        j,
        "surrogate",
        "check-pattern",
        _json_case().replace('"^ok"', '"^o\\ud8ffk"'),
        suffix=".json",
    )
    b.add(j, "surrogate", "key", _json_case().replace('"bare"', '"ba\\ud800re"'), suffix=".json")
    b.add(
        j,
        "surrogate",
        "pair-ok",
        _json_case(description="@@").replace('"@@"', '"\\ud83d\\ude00"'),
        suffix=".json",
    )
    b.add(y, "surrogate", "yaml-escape", _yaml_case(description='"x\\ud800y"'))
    b.add(
        y,
        "surrogate",
        "yaml-raw-bytes",
        YAML_CASE.replace("fixes the bug", "fi\udcffxes").encode("utf-8", "surrogatepass"),
    )
    for field in ("description", "prompt", "setup", "defends", "cwd"):
        b.add(y, "nul", f"yaml-{field}", _yaml_case(**{field: '"a\\0b"'}))
    b.add(y, "nul", "yaml-check-path", _set_yaml_field(YAML_CASE, "    path", '"ok\\0.txt"'))
    b.add(y, "nul", "yaml-check-command", _set_yaml_field(YAML_CASE, "    command", '"tr\\0ue"'))
    b.add(y, "nul", "yaml-check-pattern", _set_yaml_field(YAML_CASE, "    pattern", '"o\\0k"'))
    b.add(y, "nul", "yaml-raw-byte", YAML_CASE.replace("the bug", "the\x00bug"))
    for field in ("description", "prompt", "tags"):
        value = '["a\\u0000b"]' if field == "tags" else '"a\\u0000b"'
        b.add(
            j,
            "nul",
            f"json-{field}",
            _json_case(**{field: "@@"}).replace('"@@"', value),
            suffix=".json",
        )
    b.add(
        j,
        "nul",
        "json-raw-byte",
        _json_case().replace("most fields", "most\x00fields"),
        suffix=".json",
    )
    b.add(y, "bom", "one", "\ufeff" + YAML_CASE)
    b.add(y, "bom", "two", "\ufeff\ufeff" + YAML_CASE)
    b.add(j, "bom", "one", "\ufeff" + _json_case(), suffix=".json")
    b.add(y, "bom", "only", "\ufeff")
    b.add(y, "encoding", "utf16", YAML_CASE.replace("@ID@", "fz-utf16").encode("utf-16"))
    b.add(
        j,
        "encoding",
        "utf32",
        _json_case().replace("@ID@", "fz-utf32").encode("utf-32"),
        suffix=".json",
    )
    b.add(y, "encoding", "latin1", YAML_CASE.replace("bug", "b\u00fcg").encode("latin-1"))
    b.add(y, "encoding", "overlong", YAML_CASE.encode().replace(b"bug", b"b\xc0\xafg"))
    b.add(y, "encoding", "cesu8-surrogate", YAML_CASE.encode().replace(b"bug", b"b\xed\xa0\x80g"))
    b.add(y, "lines", "crlf", YAML_CASE.replace("\n", "\r\n"))
    b.add(y, "lines", "cr-only", YAML_CASE.replace("\n", "\r"))
    b.add(y, "lines", "u2028", _yaml_case(description="a\u2028b"))
    b.add(y, "lines", "nel", _yaml_case(description="a\u0085b"))
    b.add(y, "lines", "formfeed", YAML_CASE.replace("checks:\n", "\x0cchecks:\n"))
    b.add(y, "control", "bell", _yaml_case(description="a\x07b"))
    b.add(y, "control", "escape", _yaml_case(description="\x1b[31mred\x1b[0m"))
    b.add(y, "control", "delete", _yaml_case(description="a\x7fb"))
    b.add(j, "control", "escaped", _json_case(description="\x1b[2J\x07\x08"), suffix=".json")
    b.add(
        j,
        "control",
        "raw-in-string",
        _json_case().replace("most fields", "most\x07fields"),
        suffix=".json",
    )
    b.add(y, "odd-chars", "noncharacter", _yaml_case(description="a\ufffeb\uffffc"))
    b.add(y, "odd-chars", "rtl-override", _yaml_case(description="abc\u202edcba"))
    b.add(y, "odd-chars", "zero-width-id", _yaml_case(id="fz\u200b-zw"))
    b.add(y, "odd-chars", "fullwidth-key", YAML_CASE.replace("defends:", "\uff44efends:"))
    b.add(y, "odd-chars", "emoji-tag", _yaml_case(tags="[\U0001f600, e\u0301]"))
    b.add(y, "odd-chars", "private-use", _yaml_case(description="\U000f0000"))


def _nesting(b: _Builder) -> None:
    j, y = "jcase", "ycase"
    for depth in (1_000, 5_000, 100_000):
        b.add(
            "jlist",
            "nesting",
            f"top-{depth}",
            "[" * depth + "]" * depth,
            suffix=".json",
            line_known=False,
        )
        text = _json_case(description="@@").replace('"@@"', "[" * depth + "]" * depth)
        b.add(j, "nesting", f"field-{depth}", text, suffix=".json", line_known=False)
    b.add(
        j,
        "nesting",
        "objects-5000",
        '{"a":' * 5000 + "1" + "}" * 5000,
        suffix=".json",
        line_known=False,
    )
    for depth in (1_000, 100_000):
        b.add(y, "nesting", f"yaml-flow-{depth}", _yaml_case(description="[" * depth + "]" * depth))
    b.add(y, "nesting", "yaml-flow-maps", _yaml_case(description="{a: " * 2000 + "1" + "}" * 2000))
    block = "".join(" " * n + "- \n" for n in range(0, 2000, 2))
    b.add(y, "nesting", "yaml-block-1000", _yaml_case(description="") + "extra:\n" + block)
    block_maps = "".join(" " * n + "k:\n" for n in range(0, 4000, 2)) + " " * 4000 + "k: 1\n"
    b.add(
        y, "nesting", "yaml-block-maps-2000", _yaml_case(description="") + "extra:\n" + block_maps
    )


def _aliases(b: _Builder) -> None:
    y = "ycase"
    laughs = "".join(f"  l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]\n" for n in range(1, 10))
    b.add(y, "alias", "billion-laughs", "x-laughs:\n  l0: &l0 [lol]\n" + laughs + YAML_CASE)
    b.add(
        y,
        "alias",
        "laughs-in-description",
        "x-laughs:\n  l0: &l0 [lol]\n" + laughs + _yaml_case(description="*l9"),
    )
    big = "x" * 10_000
    tags = ", ".join(["*big"] * 1000)
    b.add(y, "alias", "tags-blowup", _yaml_case(tags=f"[&big {big}, {tags}]"))
    b.add(
        y,
        "alias",
        "description-blowup",
        _yaml_case(description=f"&d {big}") + "x: [" + ", ".join(["*d"] * 1000) + "]\n",
    )
    b.add(y, "alias", "self-list", _yaml_case(tags="&t [a, *t]"))
    b.add(y, "alias", "self-map", _yaml_case(description="&m {a: *m}"))
    b.add(y, "alias", "self-checks", _set_yaml_field(YAML_CASE, "checks", "&c [*c]"))
    b.add(y, "alias", "undefined", _yaml_case(description="*nowhere"))
    b.add(
        y,
        "alias",
        "shared-check",
        YAML_CASE.replace(
            "  - type: file_exists\n    path: ok.txt\n",
            "  - &chk {type: file_exists, path: ok.txt}\n  - *chk\n",
        ),
    )
    b.add(
        y,
        "alias",
        "merge-key",
        "x-defaults: &d {severity: advisory, bare: false}\n"
        + YAML_CASE.replace("severity: critical\n", "<<: *d\n"),
    )
    b.add(
        y,
        "alias",
        "merge-into-case",
        YAML_CASE.replace("severity: critical\n", "<<: {severity: advisory}\n"),
    )
    b.add(
        y,
        "alias",
        "merge-list",
        YAML_CASE.replace("severity: critical\n", "<<: [{severity: advisory}, {bare: false}]\n"),
    )
    b.add(y, "alias", "merge-scalar", YAML_CASE.replace("severity: critical\n", "<<: advisory\n"))
    b.add(y, "alias", "anchor-on-key", YAML_CASE.replace("defends:", "&k defends:"))
    b.add(y, "alias", "alias-as-key", "x: &k defends\n" + YAML_CASE.replace("defends:", "*k :"))


def _duplicate_keys(b: _Builder) -> None:
    y, j = "ycase", "jcase"
    b.add(y, "dup-key", "top-id", YAML_CASE.replace("defends:", "id: other\ndefends:"))
    b.add(y, "dup-key", "checks", YAML_CASE + "checks: []\n")
    b.add(
        y,
        "dup-key",
        "in-check",
        YAML_CASE.replace('pattern: "^ok$"', 'pattern: "^ok$"\n    pattern: x'),
    )
    b.add(y, "dup-key", "quoted", YAML_CASE.replace("defends:", '"severity": normal\ndefends:'))
    b.add(
        y,
        "dup-key",
        "merge-override",
        YAML_CASE.replace("severity: critical\n", "<<: {severity: advisory}\nseverity: critical\n"),
    )
    b.add(y, "dup-key", "flow", _yaml_case(tags="{a: 1, a: 2}"))
    b.add(
        y, "dup-key", "trailing-space-key", YAML_CASE.replace("defends:", '"defends ": x\ndefends:')
    )
    b.add(
        j,
        "dup-key",
        "top-id",
        _json_case().replace('"defends"', '"id": "other",\n  "defends"'),
        suffix=".json",
    )
    b.add(
        j,
        "dup-key",
        "in-check",
        _json_case().replace('"path": "ok.txt"', '"path": "ok.txt", "path": "x"', 1),
        suffix=".json",
    )
    b.add(
        j,
        "dup-key",
        "escaped-same",
        _json_case().replace('"bare"', '"b\\u0061re": true,\n  "bare"'),
        suffix=".json",
    )
    b.add(
        "jlist",
        "dup-key",
        "in-list-item",
        json.dumps(JSON_LIST_DATA).replace(
            '"defends": "rules/a.md"', '"defends": "rules/a.md", "defends": "x"'
        ),
        suffix=".json",
    )
    b.add(
        j,
        "dup-key",
        "cases-twice",
        '{"cases": [], "cases": ' + json.dumps(JSON_LIST_DATA["cases"]) + "}",
        suffix=".json",
    )


def _yaml_tags(b: _Builder) -> None:
    y = "ycase"
    tags = {
        "python-object": "!!python/object:os.system {}",
        "python-name": "!!python/name:os.system",
        "binary": "!!binary aGVsbG8=",
        "timestamp": "2024-01-01 10:00:00",
        "date": "2024-01-01",
        "set": "!!set {a, b}",
        "omap": "!!omap [{a: 1}]",
        "custom": "!local thing",
        "str-on-map": "!!str {a: 1}",
        "float-nan": ".nan",
    }
    for name, value in tags.items():
        b.add(y, "yaml-tag", name, _yaml_case(description=value))
    b.add(y, "yaml-tag", "timeout-nan", _yaml_case(timeout=".nan"))
    b.add(y, "yaml-tag", "timeout-inf", _yaml_case(timeout=".inf"))
    b.add(y, "yaml-tag", "timeout-str-tag", _yaml_case(timeout="!!str 30"))
    b.add(y, "yaml-tag", "bare-yes", _yaml_case(bare="yes"))
    b.add(y, "yaml-tag", "severity-octal", _yaml_case(severity="0o17"))
    b.add(y, "yaml-doc", "two-documents", YAML_CASE + "---\nid: second\n")
    b.add(y, "yaml-doc", "explicit-start-end", "---\n" + YAML_CASE + "...\n")
    b.add(y, "yaml-doc", "end-then-garbage", YAML_CASE + "...\n{{{\n")
    b.add(y, "yaml-doc", "directive-1-1", "%YAML 1.1\n---\n" + YAML_CASE)
    b.add(y, "yaml-doc", "directive-9-9", "%YAML 9.9\n---\n" + YAML_CASE)
    b.add(
        y,
        "yaml-doc",
        "tag-directive",
        "%TAG !e! tag:example.com,2000:\n---\n" + _yaml_case(description="!e!thing x"),
    )
    b.add(y, "yaml-doc", "tab-indent", YAML_CASE.replace("    path: ok.txt", "\tpath: ok.txt", 1))
    b.add(y, "yaml-doc", "int-key", "1: one\n" + YAML_CASE)
    b.add(y, "yaml-doc", "null-key", "~: nothing\n" + YAML_CASE)
    b.add(y, "yaml-doc", "list-key", "? [a, b]\n: x\n" + YAML_CASE)
    b.add(y, "yaml-doc", "bool-key", "true: x\n" + YAML_CASE)


def _yaml_scalars(b: _Builder) -> None:
    """Plain and tagged scalars that PyYAML resolves to a type and then fails to build."""
    y = "ycase"
    for name, value in (
        ("int-tag-word", "!!int abc"),
        ("int-tag-empty-hex", "!!int 0x"),
        ("float-tag-word", "!!float abc"),
        ("bool-tag-word", "!!bool abc"),
        ("timestamp-tag-word", "!!timestamp abc"),
        ("map-tag-on-list", "!!map [a]"),
        ("seq-tag-on-map", "!!seq {a: 1}"),
        ("date-month-13", "2020-13-45"),
        ("date-feb-30", "2020-02-30"),
        ("hex-5000-digits", "0x" + "f" * 5000),
        ("binary-20000-digits", "0b" + "1" * 20000),
        ("sexagesimal", "190:20:30"),
    ):
        b.add(y, "yaml-scalar", name, _yaml_case(description=value))
    b.add(y, "yaml-scalar", "timeout-date", _yaml_case(timeout="2020-02-30"))


def _odd_kinds(b: _Builder) -> None:
    y = "ycase"
    for name, text in (
        ("empty", ""),
        ("whitespace", " \n\t\n"),
        ("comment", "# nothing\n"),
        ("null", "null\n"),
        ("tilde", "~\n"),
        ("list", "[]\n"),
        ("map", "{}\n"),
        ("zero", "0\n"),
        ("bool", "true\n"),
        ("string", '"id: x"\n'),
    ):
        b.add(y, "content", name, text)
    b.add("jcase", "content", "empty", "", suffix=".json")
    b.add("jcase", "content", "number", "42", suffix=".json")
    b.add("jcase", "content", "string", '"{}"', suffix=".json")
    b.add("jcase", "content", "yaml-in-json", YAML_CASE, suffix=".json")
    b.add("jcase", "content", "two-values", _json_case() + "\n" + _json_case(), suffix=".json")
    garbage = bytes(random.Random(7).randrange(256) for _ in range(1024))
    b.add(y, "content", "random-bytes", garbage)
    b.add(y, "content", "elf", b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56)
    b.add(y, "content", "gzip", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\x00" * 20)
    b.add(y, "content", "task-yml", YAML_TASK, suffix=".yml")
    for name, target in (
        ("dangling", "nowhere.yaml"),
        ("dev-null", "/dev/null"),
    ):
        b.add(y, "kind", f"symlink-{name}", kind="symlink", target=target, line_known=False)
    b.add(
        y,
        "kind",
        "symlink-loop",
        kind="symlink",
        target="fz-loop-b.yaml",
        name="fz-loop-a.yaml",
        line_known=False,
    )
    b.add(
        y,
        "kind",
        "symlink-self",
        kind="symlink",
        target="fz-self.yaml",
        name="fz-self.yaml",
        line_known=False,
    )
    b.add(y, "kind", "fifo", kind="fifo", line_known=False)
    b.add(y, "kind", "unreadable", YAML_CASE, kind="unreadable", line_known=False)
    b.add(
        y,
        "kind",
        "symlink-to-outside",
        kind="symlink",
        target="../outside/case.yaml",
        line_known=False,
    )
    b.add(y, "kind", "symlink-to-dir", kind="symlink", target=".", line_known=False)
    # File names: pytest and the plugin print them, and write them into every report.
    b.add(y, "name", "not-utf8", YAML_CASE, name="fz-\udcff.yaml", line_known=False)
    b.add(y, "name", "newline", YAML_CASE, name="fz-new\nline.yaml")
    b.add(y, "name", "brackets-colons", YAML_CASE, name="fz-[a]::b.yaml")
    b.add(y, "name", "spaces", YAML_CASE, name="fz with spaces.yaml")


def _duplicate_ids(b: _Builder) -> None:
    same = VALID_CASE.replace("rules/valid.md", "rules/copy.md")
    b.add("ycase", "dup-id", "sorted-before", same, name="aaa-dup.yaml")
    b.add("ycase", "dup-id", "sorted-after", same, name="zzz-dup.yaml")
    b.add(
        "ycase",
        "dup-id",
        "hardlink",
        kind="hardlink",
        target="valid.yaml",
        name="aab-hardlink.yaml",
    )
    b.add(
        "ylist",
        "dup-id",
        "in-own-list",
        "cases:\n  - {id: @ID@, defends: a.md, checks: [{type: file_exists, path: ok.txt}]}\n"
        "  - {id: @ID@, defends: b.md, checks: [{type: file_exists, path: ok.txt}]}\n",
    )
    b.add(
        "ylist",
        "dup-id",
        "valid-in-list",
        "cases:\n  - {id: @ID@, defends: a.md, checks: [{type: file_exists, path: ok.txt}]}\n"
        f"  - {{id: {VALID_ID}, defends: b.md, checks: [{{type: file_exists, path: ok.txt}}]}}\n",
        name="aac-list.yaml",
    )


def _cwd_escapes(b: _Builder) -> None:
    for name, cwd in (
        ("parent", "../.."),
        ("absolute-etc", "/etc"),
        ("root", "/"),
        ("dotdot-inside", "fixtures/../../.."),
        ("symlinked-out", "fixtures/link-out"),
        ("evals-root-itself", "."),
    ):
        b.add("ycase", "cwd", name, _yaml_case(cwd=cwd))
