"""What each optional extra brings, and the error a module raises when its extra is missing.

``import trio_mcp.http`` without the ``http`` extra used to fail deep inside with a bare
``ModuleNotFoundError: No module named 'httpx'``; the public modules that need an extra
call :func:`require_extra` first, so the error says which extra to install.
"""

from __future__ import annotations

from typing import Final

__all__ = ["EXTRAS", "MissingExtra", "require_extra"]

#: The third-party modules each extra installs (as imported, not as named on PyPI).
EXTRAS: Final = {
    "http": ("hypercorn", "httptools", "httpx", "httpx_sse", "trio_websocket"),
    "auth": ("joserfc", "cryptography", "httpx"),
    "testing": ("hypothesis",),
    "tasks-redis": ("coredis",),
}


class MissingExtra(ModuleNotFoundError):
    """A module of trio_mcp needs an extra that is not installed. The message names the
    extra and the command that installs it; ``name`` is the first missing module."""


def require_extra(extra: str, needed_by: str, *modules: str) -> None:
    """Raise :exc:`MissingExtra` unless ``modules`` (by default every module of ``extra``)
    all import. They are imported: ``needed_by`` imports them next anyway."""
    missing = []
    for module in modules or EXTRAS[extra]:
        try:
            __import__(module)
        except ModuleNotFoundError:
            missing.append(module)
    if missing:
        raise MissingExtra(
            f"{needed_by} needs the {extra!r} extra, which is not installed (no module "
            f"{', '.join(repr(m) for m in missing)}): pip install 'trio-mcp[{extra}]'",
            name=missing[0],
        )
