"""Test-suite configuration: pytester drives real pytest sessions in every test module."""

pytest_plugins = ["pytester"]
