"""The one suite builder: an eval suite written into a pytester directory."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.helpers.results import COMMAND_AGENT, case_yaml

#: How the ini runs the suite's agent script: ``agent.py`` in the rootdir, given the prompt.
COMMAND = "{python} {rootdir}/agent.py {prompt}"


def eval_configs(*specs: str) -> list[str]:
    """The options naming each ``NAME=SOURCE`` in ``specs`` as a configuration variant."""
    return [arg for spec in specs for arg in ("--eval-config", spec)]


def write(path: Path, content: str | bytes | None) -> None:
    """Write a text or binary file, making its parents; ``None`` makes a directory."""
    if content is None:
        path.mkdir(parents=True, exist_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


class SuiteBuilder:
    """Writes an eval suite into ``pytester.path`` and returns that directory.

    ``make_suite(agent, cases, fixtures=..., variants=..., ini=..., command=..., **named)``:

    * ``agent``: the text of a command agent script, written (dedented) to ``agent.py``;
      the ini then runs it with ``command`` (:data:`COMMAND` unless told otherwise);
    * ``cases``: case id -> YAML text, written (dedented) to ``evals/<id>.yaml``; an id
      with a ``/`` or a suffix is a path below the rootdir instead;
    * ``named``: more cases as keywords, ``_`` in the name read as ``-``;
    * ``fixtures``: any other file (path -> text, bytes, or ``None`` for a directory):
      graded directories, workspace fixtures, broken files written byte for byte;
    * ``variants``: configuration variant name -> its ``AGENTS.md`` text, written to
      ``<variants_dir>/<name>/AGENTS.md``;
    * ``ini``: more ini lines after ``[pytest]`` and the agent command.

    A test module that needs the same settings everywhere overrides the fixture with
    :meth:`with_ini`.
    """

    def __init__(self, pytester: pytest.Pytester, base_ini: str = "") -> None:
        self.pytester = pytester
        self.base_ini = base_ini

    @property
    def root(self) -> Path:
        return self.pytester.path

    def with_ini(self, ini: str) -> SuiteBuilder:
        """This builder with ``ini`` written into every suite it makes."""
        return SuiteBuilder(self.pytester, self.base_ini + ini)

    def steered(
        self,
        ids: list[str],
        *,
        ini: str = "",
        severities: dict[str, str] | None = None,
        agent: str = "command",
    ) -> Path:
        """The results-file suite: cases ``evals/<id>.yaml`` answered by the steerable
        command agent of :mod:`tests.helpers.results` (or ``agent``), and AGENTS.md."""
        cases = {
            case_id: case_yaml(case_id, (severities or {}).get(case_id, "normal"))
            for case_id in ids
        }
        return self(
            COMMAND_AGENT,
            cases,
            fixtures={"AGENTS.md": "Answer with ok.\n"},
            command="{python} {rootdir}/agent.py {rootdir} {prompt}",
            ini=f"eval_agent = {agent}\neval_timeout = 120\n" + ini,
        )

    def __call__(
        self,
        agent: str | None = None,
        cases: Mapping[str, str | bytes] | None = None,
        *,
        fixtures: Mapping[str, str | bytes | None] | None = None,
        variants: Mapping[str, str] | None = None,
        variants_dir: str = "",
        ini: str = "",
        command: str = COMMAND,
        **named: str,
    ) -> Path:
        root = self.root
        lines = "[pytest]\n"
        if agent is not None:
            write(root / "agent.py", textwrap.dedent(agent))
            lines += f"eval_agent_command = {command}\n"
        if "eval_sandbox" not in self.base_ini + ini:
            # The test agents keep their counters and records in the rootdir: under the
            # sandbox (docs/sandbox.md) they may, as a toolchain's cache would be let.
            # (Absolute: the xdist tests run copies of the suite in subdirectories.)
            lines += f"eval_sandbox_rw = {root}\n"
        self.pytester.makeini(lines + self.base_ini + ini)
        for rel, content in (fixtures or {}).items():
            write(root / rel, content)
        all_cases: dict[str, str | bytes] = {**(cases or {})}
        all_cases.update({name.replace("_", "-"): text for name, text in named.items()})
        for key, text in all_cases.items():
            path = root / key if "/" in key or "." in key else root / "evals" / f"{key}.yaml"
            write(path, textwrap.dedent(text) if isinstance(text, str) else text)
        for name, rules in (variants or {}).items():
            write(root / variants_dir / name / "AGENTS.md", rules)
        # The pytester directory always has an evals/ directory, even for a suite of none.
        (root / "evals").mkdir(exist_ok=True)
        return root
