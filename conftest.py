"""Test-suite configuration: pytester drives real pytest sessions in every test module."""

# The plugin imports its loader (PyYAML, pydantic) only when a case file is collected.
# pytester's in-process runs restore sys.modules afterwards, and a C extension such as
# PyYAML's parser cannot be imported a second time into fresh Python modules: import
# them once, here, so that every in-process run shares them.
import pytest_evalcases.lint
import pytest_evalcases.loading
import pytest_evalcases.runner  # noqa: F401

pytest_plugins = ["pytester"]
