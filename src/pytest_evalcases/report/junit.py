"""The JUnit class name of an eval case, and the JUnit XML file pytest wrote changed to
use it (docs/reference.md, "JUnit XML").

pytest names a test's class after its node id's path with ``/`` made ``.``, dropping
``.py`` alone: a case of ``evals/toggles.yaml`` comes out as class ``yaml`` of package
``evals.toggles`` in Jenkins and GitLab. The class is the case file without its
suffix (``evals.toggles``), a task directory's its directory (``tasks.01-service``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from pytest_evalcases.cases.discovery import CASE_SUFFIXES, TASK_FILE


def classname(nodeid: str) -> str:
    """The JUnit class name of an eval item: ``evals/toggles.yaml::x`` gives
    ``evals.toggles``, ``tasks/01-service/checks.yaml::01-service`` ``tasks.01-service``."""
    path = PurePosixPath(nodeid.split("::", 1)[0])
    if path.name == TASK_FILE and path.parent.parts:
        path = path.parent
    elif path.suffix in CASE_SUFFIXES:
        path = path.with_suffix("")
    return ".".join(path.parts)


def rename(path: Path, renamed: Mapping[str, str]) -> None:
    """Give each ``testcase`` of the file at ``path`` whose class ``renamed`` names its
    new class; a file that was not written, or does not parse, stays as it is."""
    try:
        tree = ElementTree.parse(path)
    except (OSError, ElementTree.ParseError):
        return  # not written: pytest says so
    changed = False
    for case in tree.iter("testcase"):
        name = renamed.get(case.get("classname", ""))
        if name is not None:
            case.set("classname", name)
            changed = True
    if changed:
        tree.write(path, encoding="utf-8", xml_declaration=True)
