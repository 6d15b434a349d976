"""The HTTP request the resource server's ASGI edge answers, as the edge sees it.

The auth layer sits below the HTTP server (``tests/test_architecture.py`` checks that no
module of ``_auth`` imports ``_http.server``): it names what it needs of a request in
:class:`HttpExchange`, and the HTTP server's request object is one.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import Any, Protocol

#: A header as ASGI carries it: ``(name, value)``, lower-case name, both bytes.
Header = tuple[bytes, bytes]

__all__ = ["Header", "HttpExchange"]


class HttpExchange(Protocol):
    """One HTTP request and the means to answer it (the ASGI app's request object)."""

    #: The request method (``"GET"``, ``"POST"``).
    method: str
    #: The path inside the app (without the prefix it is mounted at).
    path: str
    #: The ASGI scope (the edge removes credential headers from it and puts the verified
    #: token in it).
    scope: MutableMapping[str, Any]
    #: The request headers by lower-case name (the first of each).
    headers: dict[str, str]

    async def respond(
        self,
        status: int,
        body: bytes = b"",
        *,
        content_type: bytes | None = b"application/json",
        headers: Sequence[Header] = (),
    ) -> None:
        """Send a whole response; blocks until the server took it."""
        ...

    async def respond_error(
        self,
        status: int,
        code: int,
        message: str,
        *,
        id: Any = None,
        data: Any = None,
        headers: Sequence[Header] = (),
    ) -> None:
        """Send a JSON-RPC error response with ``status``; blocks until the server took
        it."""
        ...
