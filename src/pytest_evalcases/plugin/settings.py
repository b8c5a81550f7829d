"""The settings of a pytest session, read once from its config (:func:`read`): pytest's
options and ini values are what :func:`pytest_evalcases.session.settings.build` is
given; an xdist worker takes from its controller what the controller decided."""

from __future__ import annotations

import shlex
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from pytest_evalcases.run.workspace import WorkspaceDirs
from pytest_evalcases.session.places import WorkerInput
from pytest_evalcases.session.settings import Settings, build

#: The key of ``workerinput`` under which the controller hands its decisions to its
#: xdist workers (:class:`~pytest_evalcases.session.places.WorkerInput`).
WORKER_INPUT = "evalcases"


@dataclass(frozen=True)
class ConfigGiven:
    """pytest's options and ini values, as the settings read them."""

    config: pytest.Config

    @property
    def rootdir(self) -> Path:
        return self.config.rootpath

    @property
    def invocation_dir(self) -> Path:
        return self.config.invocation_params.dir

    def option(self, name: str) -> Any:
        return self.config.getoption(name)

    def ini(self, name: str) -> Any:
        """pytest 8.0 fails on a ``paths`` ini option given as ``-o NAME=...`` where
        there is no configuration file (an assertion, an INTERNALERROR for the user):
        the override is read then, relative to the invocation directory, as later
        pytest does."""
        try:
            return self.config.getini(name)
        except AssertionError:
            if self.config.inipath is not None:
                raise
        values: list[str] = []
        for item in self.config.getoption("override_ini") or ():
            key, sep, value = str(item).partition("=")
            if sep and key.strip() == name:
                values = shlex.split(value)
        return [self.invocation_dir / v for v in values]

    def session_dir(self, prefix: str) -> Path:
        made = Path(tempfile.mkdtemp(prefix=prefix))
        self.config.add_cleanup(lambda: shutil.rmtree(made, ignore_errors=True))
        return made


def read(config: pytest.Config, started: datetime) -> Settings:
    """The settings of this session; :class:`~pytest_evalcases.errors.UsageError`
    names a bad option or ini value."""
    given = getattr(config, "workerinput", {}).get(WORKER_INPUT)
    worker = WorkerInput.from_json(given) if given is not None else None
    return build(ConfigGiven(config), started=started, worker=worker)


def workspace_dirs(config: pytest.Config) -> WorkspaceDirs:
    """Where this process makes workspaces: in pytest's temporary directory, as
    ``tmp_path`` is (docs/agents.md, "Where workspaces live")."""

    # pytest gives a non-Python item no public way to its tmp_path_factory; the attribute
    # has been on the config since pytest 3. Without it (-p no:tmpdir) the workspaces go
    # in a session directory of our own, kept as pytest's retention count says.
    # Looked up at the first run: pytest's tmpdir plugin sets it in a pytest_configure
    # that runs after ours.
    def mktemp(label: str) -> Path | None:
        factory = getattr(config, "_tmp_path_factory", None)
        return None if factory is None else Path(factory.mktemp(label, numbered=True))

    try:
        keep = int(config.getini("tmp_path_retention_count"))
    except (TypeError, ValueError, KeyError):
        keep = 3
    return WorkspaceDirs(mktemp, keep=max(keep, 1))
