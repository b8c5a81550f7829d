"""Test-suite configuration: pytester drives real pytest sessions in every test module."""

# The plugin imports its loader (PyYAML, pydantic) only when a case file is collected.
# pytester's in-process runs restore sys.modules afterwards, and a C extension such as
# PyYAML's parser cannot be imported a second time into fresh Python modules: import
# them once, here, so that every in-process run shares them.
import pytest

import pytest_evalcases.authoring.lint
import pytest_evalcases.cases.loading
import pytest_evalcases.run.runner  # noqa: F401

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _not_on_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest prints whole failure messages in the short summary when ``CI`` or
    ``BUILD_NUMBER`` is set; the sessions our tests drive behave the same everywhere."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
