"""The small core hooks the HTTP transports use: MRTR answers without a request state,
``Session.handle_request``, and server requests routed by the request they belong to."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from trio_mcp import Context, Server, connect_client, jsonrpc
from trio_mcp._server._dispatch import Dispatcher
from trio_mcp.protocol import Dispatch
from trio_mcp.session import Session
from trio_mcp.transports import MemoryMessageStream, memory_stream_pair
from trio_mcp.types import ElicitResult

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


def make_server() -> Server:
    server = Server("hooks")

    @server.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"properties": {"name": {"type": "string"}}}, key="who")
        return f"Hello, {(answer.content or {}).get('name')}!"

    @server.tool()
    async def two_steps(ctx: Context) -> str:
        first = await ctx.elicit("A?", {"properties": {"a": {"type": "string"}}}, key="a")
        second = await ctx.elicit("B?", {"properties": {"b": {"type": "string"}}}, key="b")
        return f"{(first.content or {})['a']}{(second.content or {})['b']}"

    return server


async def call(stream: MemoryMessageStream, id: int, params: dict[str, Any]) -> dict[str, Any]:
    await stream.send(jsonrpc.JsonRpcRequest(id, "tools/call", {**params, "_meta": META}))
    while True:
        message = await stream.receive()
        if isinstance(message, (jsonrpc.ResultResponse, jsonrpc.ErrorResponse)):
            assert message.id == id
            if isinstance(message, jsonrpc.ErrorResponse):
                return {"error": message.error.code}
            return message.result


def accept(**content: str) -> dict[str, Any]:
    return {"action": "accept", "content": content}


async def test_input_responses_without_a_request_state_complete_the_call() -> None:
    server = make_server()
    client, ours = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, ours)
        first = await call(client, 1, {"name": "greet"})
        assert first["resultType"] == "input_required"
        assert list(first["inputRequests"]) == ["who"]
        # Answers with no state (and unknown extra keys) are taken as they are.
        done = await call(
            client,
            2,
            {"name": "greet", "inputResponses": {"who": accept(name="Ada"), "extra": {"x": 1}}},
        )
        assert done["resultType"] == "complete"
        assert done["content"][0]["text"] == "Hello, Ada!"
        await client.aclose()


async def test_the_states_earlier_answers_win_and_tampered_states_are_refused() -> None:
    server = make_server()
    client, ours = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, ours)
        r1 = await call(client, 1, {"name": "two_steps"})
        r2 = await call(
            client,
            2,
            {
                "name": "two_steps",
                "requestState": r1["requestState"],
                "inputResponses": {"a": accept(a="x")},
            },
        )
        assert list(r2["inputRequests"]) == ["b"]
        # The retry tries to replace the answer to "a": the state's answer stands.
        r3 = await call(
            client,
            3,
            {
                "name": "two_steps",
                "requestState": r2["requestState"],
                "inputResponses": {"a": accept(a="CHANGED"), "b": accept(b="y")},
            },
        )
        assert r3["content"][0]["text"] == "xy"
        tampered = await call(
            client,
            4,
            {
                "name": "two_steps",
                "requestState": r2["requestState"] + "-TAMPERED",
                "inputResponses": {"b": accept(b="y")},
            },
        )
        assert tampered == {"error": -32602}
        not_an_object = await call(client, 5, {"name": "greet", "inputResponses": [1]})
        assert not_an_object == {"error": -32602}
        await client.aclose()


async def test_handle_request_answers_one_request_in_the_calling_task() -> None:
    server = make_server()
    ours, peer = memory_stream_pair()
    connection = server.connection()
    event = connection.receive(
        jsonrpc.JsonRpcRequest(7, "tools/call", {"name": "greet", "_meta": META})
    )
    assert isinstance(event, Dispatch)
    session = Session(ours, connection, handler=Dispatcher(server).handle)
    await session.handle_request(event.request)  # no receive loop, no tasks
    answer = await peer.receive()
    assert isinstance(answer, jsonrpc.ResultResponse)
    assert answer.id == 7
    assert answer.result["resultType"] == "input_required"


class Recording(MemoryMessageStream):
    """Records what is sent with the request it belongs to."""

    def __init__(self, inner: MemoryMessageStream) -> None:
        super().__init__(inner._send_channel, inner._receive_channel)
        self.log: list[tuple[jsonrpc.Message, Any]] = []

    async def send(self, message: jsonrpc.Message, *, related: Any = None) -> None:
        self.log.append((message, related))
        await super().send(message, related=related)

    def send_nowait(self, message: jsonrpc.Message, *, related: Any = None) -> None:
        super().send_nowait(message, related=related)
        self.log.append((message, related))


async def test_legacy_server_requests_carry_the_request_they_belong_to() -> None:
    server = make_server()
    client_end, inner = memory_stream_pair()
    server_end = Recording(inner)

    async def elicit(params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Bo"})

    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, server_end)
        client = await connect_client(
            nursery, client_end, protocol_version="2025-11-25", elicitation=elicit
        )
        result = await client.call_tool("greet", {})
        assert result.content[0].text == "Hello, Bo!"
        await client.aclose()
    asked = [r for m, r in server_end.log if isinstance(m, jsonrpc.JsonRpcRequest)]
    answered = [
        r
        for m, r in server_end.log
        if isinstance(m, jsonrpc.ResultResponse) and "content" in m.result
    ]
    assert len(asked) == 1
    assert asked == answered  # the elicitation is tagged with the tools/call it serves


async def test_a_listen_that_starts_after_end_subscriptions_ends_at_once() -> None:
    server = make_server()
    ours, peer = memory_stream_pair()
    dispatcher = Dispatcher(server)
    dispatcher.end_subscriptions()  # shutdown began before this request was handled
    connection = server.connection()
    event = connection.receive(
        jsonrpc.JsonRpcRequest(
            "l",
            "subscriptions/listen",
            {"notifications": {"toolsListChanged": True}, "_meta": META},
        )
    )
    assert isinstance(event, Dispatch)
    session = Session(ours, connection, handler=dispatcher.handle)
    with trio.fail_after(5):
        await session.handle_request(event.request)
    ack = await peer.receive()
    assert isinstance(ack, jsonrpc.JsonRpcNotification)
    assert ack.method == "notifications/subscriptions/acknowledged"
    final = await peer.receive()
    assert isinstance(final, jsonrpc.ResultResponse) and final.id == "l"
