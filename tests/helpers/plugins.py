"""pytest plugins that some tests run beside this one and that are no dependency of the
project (pytest-rerunfailures, pytest-timeout): installed apart with ``pip install
--target DIR`` and named in ``EVALCASES_TEST_PLUGINS`` (``.ci/run`` does both). The
sessions that use them run in a subprocess with ``DIR`` on ``PYTHONPATH``; without them
those tests skip, except in CI, where they fail."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

#: Where the plugins were installed apart.
DIR = os.environ.get("EVALCASES_TEST_PLUGINS", "")
#: Read as the module loads: pytester removes ``CI`` from the environment of each test.
IN_CI = bool(os.environ.get("CI"))


def load_apart(monkeypatch: pytest.MonkeyPatch, module: str, requirement: str) -> None:
    """Make the plugin ``module`` load in the pytest subprocesses of the test: from this
    environment when it is installed here, else from :data:`DIR` on ``PYTHONPATH``; when
    neither has it, skip the test (fail it in CI) saying how to install ``requirement``."""
    if importlib.util.find_spec(module) is not None:
        return
    if DIR and (Path(DIR) / f"{module}.py").is_file():
        path = os.environ.get("PYTHONPATH", "")
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [DIR, path])))
        return
    reason = (
        f"{requirement} is not installed: pip install --target DIR {requirement}, and set "
        "EVALCASES_TEST_PLUGINS=DIR"
    )
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)
