"""The ``evalcases`` console command: one module per subcommand, argument parsing only."""

from __future__ import annotations

from pytest_evalcases.cli.main import main

__all__ = ["main"]
