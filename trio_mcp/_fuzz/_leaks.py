"""Leaks scan (placeholder)."""

from __future__ import annotations

from typing import Any

__all__ = ["scan_leaks"]


async def scan_leaks(*args: Any, **kwargs: Any) -> tuple[list[Any], list[str]]:
    return [], []
