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


async def floor_roundtrips(calls: int) -> tuple[float, float]:
    """(wall, CPU) µs per call for the hand-written loop."""
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
        start, cpu = time.perf_counter(), time.process_time()
        for i in range(calls):
            result = await call(i)
            assert result["content"][0]["text"] == ECHO_ARGS["text"]
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        nursery.cancel_scope.cancel()
    return elapsed / calls * 1e6, cpu / calls * 1e6


# --- trio_mcp ---------------------------------------------------------------------------------


async def trio_mcp_roundtrips(calls: int, *, modern: bool) -> tuple[float, float]:
    """(wall, CPU) µs per call for trio_mcp's client and server sessions."""

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
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            result = await pair.client.request(request)
            assert result.content[0].text == ECHO_ARGS["text"]  # type: ignore[union-attr]
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return elapsed / calls * 1e6, cpu / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    runs: dict[str, list[tuple[float, float]]] = {"floor": [], "legacy": [], "modern": []}
    for _ in range(args.rounds):  # interleaved rounds: the machine's noise hits all alike
        runs["floor"].append(trio.run(floor_roundtrips, args.calls))
        runs["legacy"].append(trio.run(lambda: trio_mcp_roundtrips(args.calls, modern=False)))
        runs["modern"].append(trio.run(lambda: trio_mcp_roundtrips(args.calls, modern=True)))
    wall = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in runs.items()}
    report = {
        **{f"{k}_us": round(v, 1) for k, v in wall.items()},
        **{f"{k}_cpu_us": round(v, 1) for k, v in cpu.items()},
        **{f"ratio_{k}": round(wall[k] / wall["floor"], 2) for k in ("legacy", "modern")},
        **{f"cpu_ratio_{k}": round(cpu[k] / cpu["floor"], 2) for k in ("legacy", "modern")},
    }
    if args.json:
        print(json.dumps(report))
        return
    print(f"median of {args.rounds} rounds x {args.calls} sequential tools/call round trips")
    print("  (wall: elapsed time per call; CPU: this process's CPU time per call, which other")
    print("  processes on a busy machine disturb much less)")
    print(f"  {'':28}{'wall µs':>9}{'ratio':>8}{'CPU µs':>10}{'ratio':>8}")
    for key, label in (
        ("floor", "hand-written Trio floor"),
        ("legacy", "trio_mcp, legacy era"),
        ("modern", "trio_mcp, modern era"),
    ):
        print(
            f"  {label:28}{wall[key]:9.1f}{wall[key] / wall['floor']:7.2f}x"
            f"{cpu[key]:10.1f}{cpu[key] / cpu['floor']:7.2f}x"
        )


if __name__ == "__main__":
    sys.exit(main())
