"""A client and a server talking over in-memory streams, printing every message.

Run it: ``python examples/memory_demo.py`` (add ``--modern`` for the 2026-07-28 era).

It shows the whole conversation: the era probe, the handshake (or none),
listing and calling tools, a progress report, and a request the client
cancels: Trio's cancel scope becomes ``notifications/cancelled`` on the wire.
"""

from __future__ import annotations

import trio

from trio_mcp import Context, Server, jsonrpc, open_client, types
from trio_mcp.transports import MemoryMessageStream, MessageStream, memory_stream_pair

server = Server("demo-server", version="1.0", instructions="A tiny demo.")


@server.tool()
async def greet(name: str) -> str:
    """Say hello."""
    return f"Hello, {name}!"


@server.tool()
async def count_to(n: int, ctx: Context) -> int:
    """Count to n, reporting progress."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n)
    return n


@server.tool()
async def wait_forever() -> str:
    """Never finishes (the client cancels it)."""
    await trio.sleep_forever()
    return "unreachable"


class Tap(MessageStream):
    """Prints every message that goes through a stream."""

    def __init__(self, inner: MemoryMessageStream, label: str) -> None:
        self.inner, self.label = inner, label

    async def send(self, message: jsonrpc.Message, *, related: object = None) -> None:
        print(f"{self.label} {jsonrpc.dumps(message).decode()[:150]}")
        await self.inner.send(message)

    async def receive(self) -> jsonrpc.Message | jsonrpc.Batch | jsonrpc.InvalidMessage:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


async def main(protocol_version: str | None) -> None:
    client_end, server_end = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, Tap(server_end, "  server ->"))
        async with open_client(
            Tap(client_end, "client ->"), protocol_version=protocol_version
        ) as client:
            print(f"== connected: {client.era} era, protocol {client.protocol_version}")
            tools = await client.list_tools()
            print("== tools:", ", ".join(tool.name for tool in tools))
            result = await client.call_tool("greet", {"name": "Trio"})
            print("== greet says:", result.content[0].text)  # type: ignore[union-attr]

            def on_progress(update: types.ProgressNotificationParams) -> None:
                print(f"== progress {update.progress}/{update.total}")

            result = await client.call_tool("count_to", {"n": 3}, on_progress=on_progress)
            print("== count_to returned:", result.structured_content)
            with trio.move_on_after(0.1):
                await client.call_tool("wait_forever")
            print("== gave up on wait_forever: the server was told to cancel it")
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description="A client and a server in one process, over memory streams, with every "
        "message printed."
    )
    parser.add_argument("--modern", action="store_true", help="speak 2026-07-28")
    trio.run(main, "2026-07-28" if parser.parse_args().modern else None)
