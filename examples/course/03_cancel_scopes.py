"""Chapter 3: cancel scopes. The client gives up on a call after 2.5 s with
``trio.move_on_after``; the session sends ``notifications/cancelled`` (a wiretap on the
client's end of the wire shows it); the server cancels the handler's task, which sees
``trio.Cancelled`` at its checkpoint.

Run it: ``python examples/course/03_cancel_scopes.py`` (see docs/course/03-cancel-scopes.md)
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import Client, Context, Server, jsonrpc as rpc, open_client
from trio_mcp.transports import MessageStream, Received, memory_stream_pair
from trio_mcp.types import RequestId

server = Server("slow")
handler_done = trio.Event()


@server.tool()
async def report(pages: int, ctx: Context) -> str:
    """Write a report, one second per page."""
    written = 0
    try:
        for _ in range(pages):
            await trio.sleep(1)  # the checkpoint where Cancelled arrives
            written += 1
        return f"{written} page(s)"
    except trio.Cancelled:
        now = trio.current_time()
        print(f"  [server] cancelled at t={now:.1f} after {written} pages;")
        print(f"  [server] ctx.cancelled: {ctx.cancelled}")
        raise  # always let it go on: the scope that was cancelled catches it
    finally:
        handler_done.set()


class Wiretap(MessageStream):
    """The client's end of the wire: prints each request and notification it sends."""

    def __init__(self, inner: MessageStream) -> None:
        self.inner = inner

    async def send(self, message: rpc.Message, *, related: RequestId | None = None) -> None:
        if isinstance(message, rpc.JsonRpcRequest):
            print(f"  --> request {message.id}: {message.method}")
        elif isinstance(message, rpc.JsonRpcNotification):
            print(f"  --> {message.method} {message.params}")
        await self.inner.send(message, related=related)

    async def receive(self) -> Received:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


async def calls(client: Client) -> None:
    with trio.move_on_after(2.5) as scope:
        await client.call_tool("report", {"pages": 10})
        print("not printed: the call was cancelled")
    print(f"[client] gave up at t={trio.current_time():.1f}: {scope.cancelled_caught}")
    await handler_done.wait()
    result = await client.call_tool("report", {"pages": 1})
    print("[client] the next call works:", result.content[0].text)  # type: ignore[union-attr]


async def main() -> None:
    client_end, server_end = memory_stream_pair()
    async with trio.open_nursery() as nursery:  # what trio_mcp.testing.connect does
        nursery.start_soon(server.serve, server_end)
        async with open_client(Wiretap(client_end)) as client:
            await calls(client)


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
