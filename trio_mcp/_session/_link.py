"""The session as its parts see it: the connection, the stream, and sending.

The parts of a :class:`~._engine.Session` (:mod:`._inbound`, :mod:`._outbound`,
:mod:`._call`) are given the session as a :class:`Link`, never as the class itself, so
imports run one way, as in h11: the session module imports its parts, and no part
imports it (``tests/test_architecture.py`` checks).
"""

from __future__ import annotations

from typing import Any, Protocol

from .. import _jsonrpc as rpc
from .._errors import ConnectionClosed
from .._protocol._connection import Connection
from .._transports._stream import MessageStream


class Link(Protocol):
    """What a session's parts need of it. :class:`~._engine.Session` is one."""

    @property
    def connection(self) -> Connection:
        """The protocol state the session drives."""
        ...

    @property
    def stream(self) -> MessageStream:
        """The transport (its ``send_nowait`` sends without a scheduling point)."""
        ...

    @property
    def closed(self) -> bool:
        """Whether nothing more can be sent."""
        ...

    @property
    def cancel_send_timeout(self) -> float:
        """How long telling the peer about a cancellation may take (shielded)."""
        ...

    def check_open(self) -> None:
        """Raise :exc:`~trio_mcp.ConnectionClosed` if no answer can come any more."""
        ...

    async def send_message(self, message: rpc.Message, *, related: Any = None) -> None:
        """Send ``message``; blocks until the transport takes it. Raises
        :exc:`~trio_mcp.ConnectionClosed` (and fails every waiting request) when the
        connection is gone."""
        ...


async def send_quietly(link: Link, message: rpc.Message, *, related: Any = None) -> None:
    """Send ``message`` over ``link`` if the connection still works; nothing if it is gone.
    Blocks until the transport takes it."""
    try:
        await link.send_message(message, related=related)
    except ConnectionClosed:
        pass
