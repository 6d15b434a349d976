"""Cross-talk scan (placeholder)."""

from __future__ import annotations

from typing import Any

__all__ = ["scan_crosstalk"]


async def scan_crosstalk(*args: Any, **kwargs: Any) -> tuple[list[Any], list[str]]:
    return [], []
