"""The ``trio-mcp`` command."""

from ._main import main as main

__all__ = ["main"]
