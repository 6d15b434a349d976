"""The one error the commands raise on purpose."""

from __future__ import annotations

__all__ = ["CliError"]


class CliError(Exception):
    """An expected failure: printed as one line, exit status 1."""
