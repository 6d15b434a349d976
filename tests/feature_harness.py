"""A harness for the server/client feature tests: a :class:`Server` and a client joined in
memory, with every message each side sends recorded, and a *raw* client whose requests
the test writes itself (to control ``requestState``, ``_meta`` and the like)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import attrs
import trio

from trio_mcp import Client, Server, connect_client, jsonrpc as rpc
from trio_mcp.protocol import Connection
from trio_mcp.session import Session, connect_session
from trio_mcp.transports import MessageStream, memory_stream_pair
from trio_mcp.types import ClientCapabilities, Implementation

#: The two eras' newest revisions: every feature is tested in both.
ERAS = ["2025-11-25", "2026-07-28"]
MODERN = "2026-07-28"
LEGACY = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
ALL_VERSIONS = [MODERN, *LEGACY]


class RecordingStream(MessageStream):
    """A message stream that remembers every message sent through it."""

    def __init__(self, inner: MessageStream) -> None:
        self.inner = inner
        self.sent: list[rpc.Message] = []
        #: The ``related`` request id of each message in :attr:`sent`.
        self.related: list[Any] = []
        #: Called with each message as it is sent (to act at an exact moment).
        self.on_send: Callable[[rpc.Message], None] | None = None

    async def send(self, message: rpc.Message, *, related: Any = None) -> None:
        self.sent.append(message)
        self.related.append(related)
        if self.on_send is not None:
            self.on_send(message)
        await self.inner.send(message, related=related)

    def related_to(self, message: rpc.Message) -> Any:
        return next(r for m, r in zip(self.sent, self.related, strict=True) if m is message)

    async def receive(self) -> Any:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def notifications(self, method: str | None = None) -> list[rpc.JsonRpcNotification]:
        return [
            m
            for m in self.sent
            if isinstance(m, rpc.JsonRpcNotification) and (method is None or m.method == method)
        ]

    def responses_to(self, request_id: Any) -> list[rpc.Message]:
        return [
            m
            for m in self.sent
            if isinstance(m, (rpc.ResultResponse, rpc.ErrorResponse)) and m.id == request_id
        ]

    def requests(self, method: str | None = None) -> list[rpc.JsonRpcRequest]:
        return [
            m
            for m in self.sent
            if isinstance(m, rpc.JsonRpcRequest) and (method is None or m.method == method)
        ]


@attrs.define
class Pair:
    client: Client
    #: What the client sent / what the server sent.
    client_sent: RecordingStream
    server_sent: RecordingStream


@asynccontextmanager
async def open_pair(
    server: Server, *, server_options: dict[str, Any] | None = None, **client_options: Any
) -> AsyncIterator[Pair]:
    """A typed :class:`Client` talking to ``server`` in memory, both sides recorded."""
    client_end, server_end = memory_stream_pair()
    client_stream, server_stream = RecordingStream(client_end), RecordingStream(server_end)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: server.serve(server_stream, **(server_options or {})))
        client = await connect_client(nursery, client_stream, **client_options)
        try:
            yield Pair(client, client_stream, server_stream)
        finally:
            await client.aclose()


@attrs.define
class RawPeer:
    """A bare client session: :meth:`Session.send_request` with params the test writes."""

    session: Session
    connection: Connection
    client_sent: RecordingStream
    server_sent: RecordingStream

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self.session.send_request(method, params)


@asynccontextmanager
async def open_raw(
    server: Server,
    version: str,
    *,
    capabilities: ClientCapabilities | None = None,
    handler: Any = None,
    server_options: dict[str, Any] | None = None,
) -> AsyncIterator[RawPeer]:
    """A raw client session talking ``version`` to ``server`` (the handshake done for a
    legacy revision). ``handler`` answers the server's requests (legacy era);
    ``server_options`` go to :meth:`Server.serve`."""
    client_end, server_end = memory_stream_pair()
    client_stream, server_stream = RecordingStream(client_end), RecordingStream(server_end)
    connection = Connection(
        "client",
        info=Implementation(name="raw", version="0"),
        capabilities=capabilities or ClientCapabilities(),
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: server.serve(server_stream, **(server_options or {})))
        options = {"handler": handler} if handler is not None else {}
        session = await connect_session(nursery, client_stream, connection, **options)
        try:
            if version == MODERN:
                connection.use_modern(version)
            else:
                pending, message = connection.initialize_request(version)
                async with session.track(pending, message) as call:
                    answer = await call.answer()
                _, note = connection.complete_initialize(answer)
                await session.send_message(note)
            yield RawPeer(session, connection, client_stream, server_stream)
        finally:
            await session.aclose()


@asynccontextmanager
async def open_scripted(
    answers: dict[str, Any],
    version: str,
    *,
    capabilities: Any = None,
    **client_options: Any,
) -> AsyncIterator[Client]:
    """A :class:`Client` talking to a fake server whose answer to each method is
    ``answers[method]`` (a result dict, or a function of the request's params). For
    testing what the client does with answers a real server would not give."""
    from trio_mcp.types import ServerCapabilities, ToolsCapability

    async def handler(session: Session, request: Any) -> Any:
        answer = answers[request.method]
        return answer(request.params) if callable(answer) else answer

    client_end, server_end = memory_stream_pair()
    connection = Connection(
        "server",
        info=Implementation(name="scripted", version="0"),
        capabilities=capabilities or ServerCapabilities(tools=ToolsCapability()),
    )
    async with trio.open_nursery() as nursery:
        server = await connect_session(nursery, server_end, connection, handler=handler)
        client = await connect_client(
            nursery, client_end, protocol_version=version, **client_options
        )
        try:
            yield client
        finally:
            await client.aclose()
            await server.aclose()
