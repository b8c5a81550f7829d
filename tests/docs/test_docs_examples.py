"""Every fenced ```yaml / ```json block in README.md and docs/*.md parses, and every block
that looks like a case (``checks`` or ``cases``) or a list of checks loads with the real
loader. Blocks fenced ```yaml broken must fail to load."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from pytest_evalcases.cases.loading import load_case_file, load_task_dir
from pytest_evalcases.errors import CaseFileError
from pytest_evalcases.run.checks import default_registry

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class Block:
    file: Path
    line: int
    lang: str
    broken: bool
    text: str

    @property
    def label(self) -> str:
        return f"{self.file.relative_to(ROOT)}:{self.line}"


def doc_files() -> list[Path]:
    files = sorted((ROOT / "docs").glob("*.md"))
    readme = ROOT / "README.md"
    return ([readme] if readme.is_file() else []) + files


def blocks() -> list[Block]:
    found = []
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            words = match.group("info").strip().split()
            if not words or words[0] not in ("yaml", "yml", "json"):
                continue
            indent = match.group("indent")
            body = "\n".join(
                line[len(indent) :] if line.startswith(indent) else line
                for line in match.group("body").splitlines()
            )
            found.append(
                Block(
                    file=path,
                    line=text.count("\n", 0, match.start()) + 1,
                    lang="json" if words[0] == "json" else "yaml",
                    broken="broken" in words[1:],
                    text=body + "\n",
                )
            )
    return found


BLOCKS = blocks()


def parse(block: Block) -> Any:
    if block.lang == "json":
        return json.loads(block.text)
    return yaml.safe_load(block.text)


def load(block: Block, tmp_path: Path) -> None:
    """Load the block as the plugin would; raises CaseFileError / ValidationError."""
    data = parse(block)
    registry = default_registry()
    evals = tmp_path / "evals"
    evals.mkdir()
    if isinstance(data, dict) and "task" in data and "cases" not in data:
        task = tmp_path / "tasks" / "example-task"
        task.mkdir(parents=True)
        (task / "checks.yaml").write_text(block.text, encoding="utf-8")
        load_task_dir(task / "checks.yaml", registry)
        return
    if isinstance(data, list):
        for check in data:
            registry.check_adapter.validate_python(check)
        return
    cases = data.get("cases", [data]) if isinstance(data, dict) else []
    for case in cases:
        cwd = case.get("cwd") if isinstance(case, dict) else None
        if isinstance(cwd, str):
            (evals / cwd).mkdir(parents=True, exist_ok=True)
    path = evals / f"{_stem(data)}.{block.lang}"
    path.write_text(block.text, encoding="utf-8")
    load_case_file(path, evals, registry)


def _stem(data: Any) -> str:
    if isinstance(data, dict) and isinstance(data.get("id"), str):
        return re.sub(r"[^A-Za-z0-9_-]", "-", data["id"])
    return "example"


def looks_like_case(block: Block) -> bool:
    try:
        data = parse(block)
    except (yaml.YAMLError, json.JSONDecodeError):
        return block.broken
    if isinstance(data, dict):
        # A results file also has `cases` (and `checks` per case); a case file's `cases:`
        # stands alone at the top level, and no case has an `outcome`.
        return "outcome" not in data and ("checks" in data or set(data) == {"cases"})
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(c, dict) and "type" in c for c in data)
    )


def test_docs_have_examples() -> None:
    names = {b.file.name for b in BLOCKS}
    assert {"case-format.md", "writing-cases.md"} <= names
    assert sum(looks_like_case(b) for b in BLOCKS) >= 10


@pytest.mark.parametrize("block", BLOCKS, ids=[b.label for b in BLOCKS])
def test_block(block: Block, tmp_path: Path) -> None:
    if block.broken:
        with pytest.raises((CaseFileError, ValidationError, yaml.YAMLError, json.JSONDecodeError)):
            load(block, tmp_path)
        return
    data = parse(block)  # every block parses
    if looks_like_case(block):
        load(block, tmp_path)
    else:
        assert data is not None or not block.text.strip() or block.text.lstrip().startswith("#")


def test_broken_example_fails_as_documented(tmp_path: Path) -> None:
    """The broken example in case-format.md fails with the message the page shows."""
    page = (ROOT / "docs" / "case-format.md").read_text(encoding="utf-8")
    (broken,) = [b for b in BLOCKS if b.broken and b.file.name == "case-format.md"]
    with pytest.raises(CaseFileError) as info:
        load(broken, tmp_path)
    shown = f"case file error: evals/attribution.yaml:{info.value.line}: {info.value.field}: "
    assert shown + info.value.reason.splitlines()[0] in page


def ini_blocks() -> list[tuple[str, str]]:
    """Every fenced ```ini block of the docs, as (file:line, text)."""
    found = []
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group("info").strip().split()[:1] == ["ini"]:
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{path.relative_to(ROOT)}:{line}", match.group("body")))
    return found


def test_every_documented_eval_variants_line_parses() -> None:
    import configparser

    from pytest_evalcases.run.variants import parse_variant

    parsed = 0
    for label, text in ini_blocks():
        ini = configparser.ConfigParser(interpolation=None)
        ini.read_string(text, source=label)
        for section in ini.sections():
            for line in ini[section].get("eval_variants", "").splitlines():
                if line.strip():
                    spec = parse_variant(line.strip(), f"{label}: eval_variants")
                    assert spec.agent or spec.model or spec.args or spec.source, label
                    parsed += 1
    assert parsed >= 3
