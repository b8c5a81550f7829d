"""Test-suite configuration: pytester drives real pytest sessions in every test module."""

# The plugin imports most of its modules (and PyYAML, pydantic) only when they are
# needed. pytester's in-process runs restore sys.modules afterwards, dropping what a run
# imported: a C extension such as PyYAML's parser cannot be imported a second time, and a
# module imported afresh by the next run defines new classes that no longer match those
# the older modules still hold (a driver's ``Requirements`` failing the preflight's
# ``isinstance``). Import every module once, here, so every in-process run shares them.
import importlib
import pkgutil

import pytest

import pytest_evalcases

for _module in pkgutil.walk_packages(pytest_evalcases.__path__, "pytest_evalcases."):
    importlib.import_module(_module.name)

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _not_on_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest prints whole failure messages in the short summary when ``CI`` or
    ``BUILD_NUMBER`` is set; the sessions our tests drive behave the same everywhere."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
