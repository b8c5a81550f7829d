"""``--junitxml``: the class name of an eval case reads as its case file
(:mod:`pytest_evalcases.report.junit`, docs/reference.md, "JUnit XML"). pytest gives a
plugin no say in the name, so the file pytest wrote is changed once it is written, by
the controller."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_evalcases.report.junit import classname, rename


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
        rename(self.path, self.renamed)
