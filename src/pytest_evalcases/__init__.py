"""pytest-evalcases: eval case files for coding-agent configuration as pytest items."""

from __future__ import annotations

__version__ = "0.1.0"
