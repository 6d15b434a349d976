"""``trio_mcp.testing.check_transport`` on the HTTP client stream, in every mode.

* 2024-11-05 HTTP+SSE is a duplex pipe (every client message is a POST, every server
  message an event on one stream): the default ``"stream"`` profile, both orientations,
  against a small server-side peer written here.
* Legacy Streamable HTTP (2025-03-26 ... 2025-11-25): each client message is a POST of
  its own, so separate sends have no order between them: the ``"http"`` profile. The peer
  here puts everything it sends on the standalone GET stream, the one ordered stream that
  wire has (responses included, which a real server sends there only when resuming: the
  request's own response stream is tested in ``test_http_client.py``). Client first only:
  the server of a Streamable HTTP session has no way to end it that the client would see
  before its next request, so "the peer closed" is not observable from the client side.
* Stateless Streamable HTTP (2026-07-28): the client sends only requests and the server
  only the answers to them (and notifications related to them), each on the request's own
  response: the ``"request-response"`` profile, client as the requester, against a
  responder peer written here. A memory pair passes that profile too, and transports that
  break what it checks fail it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from scripted_http import Reply, ScriptedApp, Seen, serving

from trio_mcp import jsonrpc as rpc
from trio_mcp.http import HttpClientStream, open_http_stream
from trio_mcp.testing import check_transport
from trio_mcp.transports import MessageStream, Received, memory_stream_pair

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120), pytest.mark.usefixtures("front_end")]


class PeerStream(MessageStream):
    """The server's end of one HTTP+SSE conversation."""

    def __init__(self, buffer: int) -> None:
        self._out_send, self.out_receive = trio.open_memory_channel[bytes](buffer)
        self.in_send, self._in_receive = trio.open_memory_channel[Received](buffer)

    async def send(self, message: rpc.Message, *, related: Any = None) -> None:
        await self._out_send.send(rpc.dumps(message))

    async def send_raw(self, data: bytes) -> None:
        await self._out_send.send(data)

    async def receive(self) -> Received:
        return await self._in_receive.receive()

    async def aclose(self) -> None:
        self._out_send.close()
        self._in_receive.close()
        await trio.lowlevel.checkpoint()


class EventStreamServer:
    """GET /sse opens a conversation (first event: the endpoint); POST /messages feeds it."""

    def __init__(self, buffer: int) -> None:
        self.buffer = buffer
        self.app = ScriptedApp(self.handle)
        self.new_peers, self.peers = trio.open_memory_channel[PeerStream](1)
        self.peer: PeerStream | None = None

    async def handle(self, seen: Seen, reply: Reply) -> None:
        if seen.method == "GET":
            peer = self.peer = PeerStream(self.buffer)
            await reply.sse()
            await reply.event("/messages", event="endpoint")
            await self.new_peers.send(peer)
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    await reply.wait_disconnect()
                    peer.in_send.close()  # the client left: the peer's input ends
                    peer.out_receive.close()  # and its sends fail
                    nursery.cancel_scope.cancel()

                nursery.start_soon(watch)
                async for data in peer.out_receive:
                    await reply.raw(b"event: message\ndata: " + data + b"\n\n")
                nursery.cancel_scope.cancel()
            return
        assert self.peer is not None
        message = rpc.parse(seen.body)
        try:
            await self.peer.in_send.send(message)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await reply.empty(404)
            return
        await reply.empty(202)


@asynccontextmanager
async def http_sse_pair(buffer: int) -> AsyncIterator[tuple[HttpClientStream, PeerStream]]:
    server = EventStreamServer(buffer)
    async with (
        serving(server.app) as base,
        open_http_stream(base + "/sse", transport="sse", buffer=buffer) as client,
    ):
        peer = await server.peers.receive()
        try:
            yield client, peer
        finally:
            await peer.aclose()


def client_first(buffer: int) -> Any:
    return lambda: http_sse_pair(buffer)


def server_first(buffer: int) -> Any:
    @asynccontextmanager
    async def maker() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
        async with http_sse_pair(buffer) as (client, peer):
            yield peer, client

    return maker


async def test_the_http_sse_mode_passes_check_transport_client_first() -> None:
    await check_transport(client_first(16), client_first(0))


async def test_the_http_sse_mode_passes_check_transport_server_first() -> None:
    # (server first, its raw sends check that garbage from the server reaches the client
    # as an InvalidMessage and the stream goes on)
    await check_transport(
        server_first(16),
        server_first(0),
        send_raw=lambda stream, data: stream.send_raw(data),  # type: ignore[attr-defined]
    )


class StreamableServer:
    """Legacy Streamable HTTP with one session: POST ``initialize`` starts it (the peer's
    first message, its answer, comes on that POST's stream); each POSTed message goes to
    the peer (a request's POST then stays open with no events: its answer comes on the GET
    stream); GET is the standalone stream, which carries everything the
    peer sends; DELETE ends the session (the peer's input ends)."""

    SESSION = "session-1"

    def __init__(self, buffer: int) -> None:
        self.buffer = buffer
        self.app = ScriptedApp(self.handle)
        self.peer = PeerStream(buffer)
        self.gets = 0

    async def handle(self, seen: Seen, reply: Reply) -> None:
        peer = self.peer
        if seen.method == "DELETE":
            peer.in_send.close()
            peer.out_receive.close()
            await reply.empty(200)
            return
        if seen.headers.get("mcp-session-id") not in (None, self.SESSION):
            await reply.empty(404)
            return
        if seen.method == "GET":
            self.gets += 1
            if self.gets > 1:
                await reply.empty(405)  # one standalone stream: no second after a drop
                return
            await reply.sse()
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    await reply.wait_disconnect()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(watch)
                async for data in peer.out_receive:
                    await reply.raw(b"event: message\ndata: " + data + b"\n\n")
                nursery.cancel_scope.cancel()
            return
        message = rpc.parse(seen.body)
        try:
            await peer.in_send.send(message)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await reply.empty(404)
            return
        if type(message) is not rpc.JsonRpcRequest:
            await reply.empty(202)
            return
        if message.method == "initialize":  # answered here: there is no GET stream yet
            await reply.sse(headers={"mcp-session-id": self.SESSION})
            await reply.raw(b"event: message\ndata: " + await peer.out_receive.receive() + b"\n\n")
            return
        await reply.sse()
        await reply.wait_disconnect()  # the client closes it once the GET stream answered


@asynccontextmanager
async def streamable_pair(buffer: int) -> AsyncIterator[tuple[HttpClientStream, PeerStream]]:
    """A client stream in a legacy Streamable HTTP session (initialized) and its peer."""
    server = StreamableServer(buffer)
    async with (
        serving(server.app) as base,
        open_http_stream(base + "/mcp", buffer=buffer) as client,
    ):
        peer = server.peer
        hello = rpc.JsonRpcRequest("init", "initialize", {"protocolVersion": "2025-11-25"})
        await client.send(hello)
        assert await peer.receive() == hello
        await peer.send(rpc.ResultResponse("init", {"protocolVersion": "2025-11-25"}))
        assert isinstance(await client.receive(), rpc.ResultResponse)
        async with trio.open_nursery() as nursery:
            # (the client opens the GET stream once the initialized notification is taken)
            nursery.start_soon(client.send, rpc.JsonRpcNotification("notifications/initialized"))
            assert await peer.receive() == rpc.JsonRpcNotification("notifications/initialized")
        assert client.session_id == StreamableServer.SESSION
        try:
            yield client, peer
        finally:
            await peer.aclose()


async def test_legacy_streamable_http_passes_check_transport_http_profile() -> None:
    await check_transport(lambda: streamable_pair(16), lambda: streamable_pair(0), profile="http")


# -- stateless Streamable HTTP (2026-07-28): the request-response profile --------------------


class ResponderStream(MessageStream):
    """The server's end of stateless HTTP: ``receive`` gives the POSTed requests, ``send``
    puts an answer (or a notification ``related`` to a request) on that request's response.
    Messages for a request that is gone (its client left) are dropped."""

    def __init__(self, buffer: int) -> None:
        self.buffer = buffer
        self.in_send, self._in_receive = trio.open_memory_channel[Received](buffer)
        self.exchanges: dict[Any, trio.MemorySendChannel[bytes]] = {}
        self.closed = False

    def open_exchange(self, id: Any) -> trio.MemoryReceiveChannel[bytes]:
        send, receive = trio.open_memory_channel[bytes](self.buffer)
        self.exchanges[id] = send
        return receive

    async def send(self, message: rpc.Message, *, related: Any = None) -> None:
        if self.closed:
            await trio.lowlevel.checkpoint()
            raise trio.ClosedResourceError
        answer = isinstance(message, rpc.ResultResponse | rpc.ErrorResponse)
        target = message.id if answer else related  # type: ignore[union-attr]
        outbox = self.exchanges.get(target)
        if outbox is None:
            await trio.lowlevel.checkpoint()
            return
        try:
            await outbox.send(rpc.dumps(message))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        if answer:
            del self.exchanges[target]
            outbox.close()

    async def receive(self) -> Received:
        return await self._in_receive.receive()

    async def aclose(self) -> None:
        self.closed = True
        self.in_send.close()
        self._in_receive.close()
        for outbox in self.exchanges.values():
            outbox.close()  # what was sent still goes out; then those responses end
        self.exchanges.clear()
        await trio.lowlevel.checkpoint()


class StatelessServer:
    """Each POST carries one request, handed to the peer; its response is an SSE stream of
    what the peer sends for it, ending with the answer. 503 once the peer closed."""

    def __init__(self, buffer: int) -> None:
        self.app = ScriptedApp(self.handle)
        self.peer = ResponderStream(buffer)

    async def handle(self, seen: Seen, reply: Reply) -> None:
        peer = self.peer
        if seen.method != "POST":
            await reply.empty(405)
            return
        if peer.closed:
            await reply.empty(503)
            return
        request = rpc.parse(seen.body)
        assert type(request) is rpc.JsonRpcRequest, request  # the client sends nothing else
        outbox = peer.open_exchange(request.id)
        await peer.in_send.send(request)
        await reply.sse()
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                await reply.wait_disconnect()  # the client cancelled: stop here
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            async for data in outbox:
                await reply.raw(b"event: message\ndata: " + data + b"\n\n")
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def stateless_pair(buffer: int) -> AsyncIterator[tuple[HttpClientStream, ResponderStream]]:
    """A client stream in the stateless era (after one modern request) and its responder."""
    server = StatelessServer(buffer)
    async with (
        serving(server.app) as base,
        open_http_stream(base + "/mcp", buffer=buffer) as client,
    ):
        peer = server.peer
        envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
        discover = rpc.JsonRpcRequest("discover", "server/discover", {"_meta": envelope})
        await client.send(discover)
        assert await peer.receive() == discover
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                peer.send, rpc.ResultResponse("discover", {"resultType": "complete"})
            )
            assert isinstance(await client.receive(), rpc.ResultResponse)
        assert client.mode == "modern"
        try:
            yield client, peer
        finally:
            await peer.aclose()


async def test_stateless_streamable_http_passes_check_transport_request_response() -> None:
    await check_transport(
        lambda: stateless_pair(16), lambda: stateless_pair(0), profile="request-response"
    )


@asynccontextmanager
async def memory_pair(buffer: int) -> AsyncIterator[tuple[MessageStream, MessageStream]]:
    a, b = memory_stream_pair(buffer)
    async with a, b:
        yield a, b


async def test_a_duplex_memory_pair_passes_the_request_response_profile(
    autojump_clock: Any,
) -> None:
    await check_transport(
        lambda: memory_pair(64),
        lambda: memory_pair(0),
        profile="request-response",
        send_raw=lambda stream, data: stream.send_raw(data),  # type: ignore[attr-defined]
    )


class Faulty(MessageStream):
    """The responder's end of a memory pair, with one fault, to show that the profile
    catches it."""

    def __init__(self, inner: MessageStream, fault: str) -> None:
        self.inner = inner
        self.fault = fault
        self.previous: dict[str, Any] | None = None

    async def send(self, message: rpc.Message, *, related: Any = None) -> None:
        if isinstance(message, rpc.JsonRpcNotification) and self.fault == "drops notifications":
            await trio.lowlevel.checkpoint()
            return
        if isinstance(message, rpc.ResultResponse) and self.fault == "mixes up answers":
            result, self.previous = self.previous or message.result, message.result
            message = rpc.ResultResponse(message.id, result)  # the one before's result
        if isinstance(message, rpc.ResultResponse) and self.fault == "answers twice":
            await self.inner.send(message)
        await self.inner.send(message)

    async def receive(self) -> Received:
        return await self.inner.receive()

    async def aclose(self) -> None:
        if self.fault == "leaves pending requests hanging":
            # Close as if the requester's side were not connected: it is never told.
            self.inner._send_channel = trio.open_memory_channel[bytes](0)[0]  # type: ignore[attr-defined]
        await self.inner.aclose()


@pytest.mark.parametrize(
    ("fault", "failure", "complaint"),
    [
        ("answers twice", AssertionError, "received ResultResponse"),
        ("drops notifications", AssertionError, "sent JsonRpcNotification"),
        ("mixes up answers", AssertionError, "sent ResultResponse(id='rt-3'"),
        ("leaves pending requests hanging", AssertionError, "the transport hangs"),
    ],
)
async def test_the_request_response_profile_catches_faults(
    fault: str, failure: type[Exception], complaint: str | None, autojump_clock: Any
) -> None:
    @asynccontextmanager
    async def faulty() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
        async with memory_pair(64) as (a, b):
            yield a, Faulty(b, fault)

    with pytest.raises(failure, match=None if complaint is None else re.escape(complaint)):
        await check_transport(faulty, profile="request-response", wait=5)


async def test_a_duplicate_answer_fails_the_concurrency_check(autojump_clock: Any) -> None:
    """Answered twice only under load: the round trip passes, the burst does not."""

    class TwiceUnderLoad(Faulty):
        async def send(self, message: rpc.Message, *, related: Any = None) -> None:
            if isinstance(message, rpc.ResultResponse) and message.id == "c3-7":
                await self.inner.send(message)
            await self.inner.send(message)

    @asynccontextmanager
    async def faulty() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
        async with memory_pair(64) as (a, b):
            yield a, TwiceUnderLoad(b, "")

    with pytest.raises(AssertionError, match="'c3-7' was answered twice"):
        await check_transport(faulty, profile="request-response")
