"""Request round trip over in-memory streams: trio_mcp's client + server sessions against
a minimal hand-written Trio loop doing the same work, in the same run.

Both sides do what a real transport forces: serialize each message to bytes,
pass the bytes through a bounded Trio memory channel, parse them, dispatch on
``method``, run each inbound request in its own task, and answer a
``tools/call`` of an ``echo`` tool with a text content block.

The floor is the least code that does that job; trio_mcp adds the protocol
(typed params and results, the outstanding-request table, cancel scopes per
request, capability checks). The ratio is what the protocol costs.

    python benchmarks/roundtrip_memory.py [--calls N] [--rounds R] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import orjson
import trio

from trio_mcp import types
from trio_mcp.testing import memory_session_pair

ECHO_ARGS = {"text": "hello, world"}


# --- the floor: a minimal hand-written JSON-RPC loop on Trio ------------------------------------


async def floor_roundtrips(calls: int) -> float:
    """µs per call for the hand-written loop."""
    c2s_send, c2s_recv = trio.open_memory_channel[bytes](64)
    s2c_send, s2c_recv = trio.open_memory_channel[bytes](64)
    pending: dict[int, trio.Event] = {}
    results: dict[int, Any] = {}

    async def server() -> None:
        async with trio.open_nursery() as handlers:
            async for data in c2s_recv:
                msg = orjson.loads(data)
                if msg.get("method") == "tools/call":
                    handlers.start_soon(handle, msg)

    async def handle(msg: dict[str, Any]) -> None:
        text = msg["params"]["arguments"]["text"]
        result = {"content": [{"type": "text", "text": text}]}
        await s2c_send.send(orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}))

    async def client_reader() -> None:
        async for data in s2c_recv:
            msg = orjson.loads(data)
            results[msg["id"]] = msg["result"]
            pending.pop(msg["id"]).set()

    async def call(i: int) -> Any:
        event = pending[i] = trio.Event()
        await c2s_send.send(
            orjson.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": ECHO_ARGS},
                }
            )
        )
        await event.wait()
        return results.pop(i)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(server)
        nursery.start_soon(client_reader)
        start = time.perf_counter()
        for i in range(calls):
            result = await call(i)
            assert result["content"][0]["text"] == ECHO_ARGS["text"]
        elapsed = time.perf_counter() - start
        nursery.cancel_scope.cancel()
    return elapsed / calls * 1e6


# --- trio_mcp ---------------------------------------------------------------------------------


async def trio_mcp_roundtrips(calls: int, *, modern: bool) -> float:
    async def handler(session: Any, request: Any) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(text=request.params.arguments["text"])]
        )

    caps = types.ServerCapabilities(tools=types.ToolsCapability())
    async with memory_session_pair(
        server_capabilities=caps, server_options={"handler": handler}, modern=modern
    ) as pair:
        request = types.CallToolRequest(
            params=types.CallToolRequestParams(name="echo", arguments=ECHO_ARGS)
        )
        start = time.perf_counter()
        for _ in range(calls):
            result = await pair.client.request(request)
            assert result.content[0].text == ECHO_ARGS["text"]  # type: ignore[union-attr]
        elapsed = time.perf_counter() - start
    return elapsed / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    floor, legacy, modern = [], [], []
    for _ in range(args.rounds):  # interleaved rounds: the machine's noise hits all alike
        floor.append(trio.run(floor_roundtrips, args.calls))
        legacy.append(trio.run(lambda: trio_mcp_roundtrips(args.calls, modern=False)))
        modern.append(trio.run(lambda: trio_mcp_roundtrips(args.calls, modern=True)))
    f, lg, md = (statistics.median(x) for x in (floor, legacy, modern))
    report = {
        "floor_us": round(f, 1),
        "trio_mcp_legacy_us": round(lg, 1),
        "trio_mcp_modern_us": round(md, 1),
        "ratio_legacy": round(lg / f, 2),
        "ratio_modern": round(md / f, 2),
    }
    if args.json:
        print(json.dumps(report))
        return
    print(f"median of {args.rounds} rounds x {args.calls} sequential tools/call round trips")
    print(f"  hand-written Trio floor     {f:8.1f} µs/call")
    print(f"  trio_mcp, legacy era        {lg:8.1f} µs/call   {lg / f:.2f}x the floor")
    print(f"  trio_mcp, modern era        {md:8.1f} µs/call   {md / f:.2f}x the floor")


if __name__ == "__main__":
    sys.exit(main())
