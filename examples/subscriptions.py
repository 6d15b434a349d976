"""Change notifications while a server runs: tools come and go, a resource changes.

``client.listen(...)`` is an ``async with`` block: in the modern era it is one
``subscriptions/listen`` request that lives exactly as long as the block (the
server acknowledges first; leaving the block cancels it); in the legacy era
list changes arrive anyway and ``resources/subscribe`` is sent for the URIs.
``Server.shutdown()`` ends modern subscriptions gracefully.

The operator below pauses between changes with ``trio.sleep``; a ``MockClock``
makes those pauses instant (time jumps as soon as every task is waiting).

Run it: ``python examples/subscriptions.py``
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp import Server
from trio_mcp.testing import connect

server = Server("live", tools=True, resources=True)
status = {"text": "all good"}


@server.resource("status://current")
def current_status() -> str:
    return status["text"]


async def operator() -> None:
    """What happens on the server side while the client listens."""
    await trio.sleep(1)
    server.add_tool(lambda: "pong", name="ping")
    await trio.sleep(1)
    status["text"] = "degraded"
    server.notify_resource_updated("status://current")
    await trio.sleep(1)
    server.remove_tool("ping")
    await trio.sleep(1)
    server.shutdown()  # ends modern subscriptions with a final answer


async def main() -> None:
    async with (
        connect(server, protocol_version="2026-07-28") as client,
        client.listen(tools=True, resource_uris=["status://current"]) as changes,
        trio.open_nursery() as nursery,
    ):
        print("acknowledged:", changes.acknowledged)
        nursery.start_soon(operator)
        async for change in changes:
            if change.kind == "updated":
                assert change.uri is not None
                text = (await client.read_resource(change.uri)).contents[0].text  # type: ignore[union-attr]
                print(f"{change.uri} changed: {text}")
            else:
                print(f"{change.kind} list changed:", [t.name for t in await client.list_tools()])
        print("subscription ended gracefully:", changes.ended and changes.error is None)


if __name__ == "__main__":
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
