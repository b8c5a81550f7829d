"""``--junitxml``: the class name of an eval case reads as its case file.

pytest names a test's class after its node id's path with ``/`` made ``.``, dropping
``.py`` alone: a case of ``evals/toggles.yaml`` comes out as class ``yaml`` of package
``evals.toggles`` in Jenkins and GitLab. The class is the case file without its
suffix (``evals.toggles``), a task directory's its directory (``tasks.01-service``;
docs/reference.md, "JUnit XML"). pytest gives a plugin no say in the name, so the file
pytest wrote is changed once it is written, by the controller.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path, PurePosixPath

import pytest

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


class JunitHooks:
    """Notes the class names pytest gives eval items, and renames them in the file."""

    def __init__(self, config: pytest.Config, xmlpath: str) -> None:
        # Where pytest's junitxml plugin writes, resolved as it does at configuration.
        self.path = Path(os.path.abspath(os.path.expanduser(os.path.expandvars(xmlpath))))
        self.prefix = config.getoption("junitprefix", None) or ""
        #: pytest's class name of each eval item's file -> the plugin's.
        self.renamed: dict[str, str] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not hasattr(report, "evalcases"):
            return  # not an eval item, or a session that runs no case
        file = report.nodeid.split("::", 1)[0]
        given = ".".join(p for p in (self.prefix, file.replace("/", ".")) if p)
        self.renamed[given] = ".".join(p for p in (self.prefix, classname(report.nodeid)) if p)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        # After the junitxml plugin's own, which writes the file.
        if not self.renamed:
            return
        try:
            tree = ElementTree.parse(self.path)
        except (OSError, ElementTree.ParseError):
            return  # not written: pytest says so
        changed = False
        for case in tree.iter("testcase"):
            name = self.renamed.get(case.get("classname", ""))
            if name is not None:
                case.set("classname", name)
                changed = True
        if changed:
            tree.write(self.path, encoding="utf-8", xml_declaration=True)
