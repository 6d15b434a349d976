"""What one legacy Streamable HTTP session can pin in the event store: the memory retained
after a client starts calls whose answers go over SSE and abandons every stream.

Each call's tool closes its SSE stream first (as a client that disconnects after the first
event would leave it), then answers; the answer waits in the store for a resumption that
never comes. The requests go straight to the ASGI app (no sockets). Memory is what
``tracemalloc`` counts as still allocated once everything settled, minus the baseline
(and, less precisely, the growth of the resident set).

    python benchmarks/event_store_memory.py [--calls 200] [--answer-bytes 1000000]

Two shapes of abuse: few large answers (the byte budgets bind) and many tiny ones (the
per-stream and per-event charges bind). ``--unbounded`` gives the store budgets too large
to matter, as before the byte budgets existed.
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc
from collections.abc import MutableMapping
from typing import Any

import orjson
import trio

from trio_mcp import Context, Server
from trio_mcp.http import McpAsgiApp, MemoryEventStore, close_sse_stream, open_asgi_app

GIB = 1024**3


def make_server() -> Server:
    server = Server("abandoned-answers", version="1")

    @server.tool()
    async def answer(ctx: Context, size: int) -> str:
        """End the SSE stream, then answer ``size`` bytes (into the store)."""
        await close_sse_stream(ctx)
        return "x" * size

    return server


async def request(
    app: McpAsgiApp, method: str, headers: list[tuple[bytes, bytes]], body: Any = None
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    sent: list[MutableMapping[str, Any]] = []
    inbound = [{"type": "http.request", "body": orjson.dumps(body) if body else b""}]
    complete = trio.Event()

    async def receive() -> MutableMapping[str, Any]:
        if inbound:
            await trio.lowlevel.checkpoint()
            return inbound.pop()
        await complete.wait()  # the client stays until the response is complete
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        await trio.lowlevel.checkpoint()
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            complete.set()

    scope = {
        "type": "http",
        "method": method,
        "path": "/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"accept", b"application/json, text/event-stream"),
            (b"content-type", b"application/json"),
            *headers,
        ],
    }
    await app(scope, receive, send)
    return sent[0]["status"], sent[0]["headers"], b"".join(m.get("body", b"") for m in sent[1:])


def rss() -> int:
    """The resident set size of this process, in bytes (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


async def pinned(
    calls: int, answer_bytes: int, store: MemoryEventStore
) -> tuple[int, dict[str, int]]:
    """The bytes one session pins after ``calls`` abandoned answers of ``answer_bytes``."""
    async with open_asgi_app(make_server(), event_store=store) as app:
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        status, head, _ = await request(
            app, "POST", [], {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        )
        assert status == 200
        session = dict(head)[b"mcp-session-id"]
        headers = [(b"mcp-session-id", session), (b"mcp-protocol-version", b"2025-11-25")]
        await request(
            app, "POST", headers, {"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        gc.collect()
        baseline = tracemalloc.take_snapshot()
        rss_before = rss()
        for id in range(1, calls + 1):
            call = {
                "jsonrpc": "2.0",
                "id": id,
                "method": "tools/call",
                "params": {"name": "answer", "arguments": {"size": answer_bytes}},
            }
            status, _, body = await request(app, "POST", headers, call)
            assert status == 200, body
            priming = body.split(b"id: ", 1)[1].split(b"\n", 1)[0].decode()
            while not getattr(await store.replay_after(priming), "events", None):
                await trio.sleep(0.001)  # the answer is on its way to the store
        await trio.sleep(0.1)
        gc.collect()
        retained = tracemalloc.take_snapshot().compare_to(baseline, "filename")
        stats = {**store.statistics(), "rss": rss() - rss_before}
        return sum(stat.size_diff for stat in retained), stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--answer-bytes", type=int, default=None)
    parser.add_argument("--unbounded", action="store_true")
    args = parser.parse_args()
    shapes = (
        [(args.calls or 200, args.answer_bytes or 1_000_000)]
        if args.calls or args.answer_bytes
        else [(200, 1_000_000), (11_000, 10)]
    )
    tracemalloc.start()
    for calls, size in shapes:
        store = (
            MemoryEventStore(
                max_stream_bytes=GIB, max_session_bytes=GIB, max_bytes=GIB, max_streams=10**9
            )
            if args.unbounded
            else MemoryEventStore()
        )
        retained, stats = trio.run(pinned, calls, size, store)
        print(
            f"{calls} abandoned answers of {size} bytes: {retained / 2**20:.1f} MiB allocated, "
            f"resident memory +{stats['rss'] / 2**20:.1f} MiB; "
            f"store: {stats['streams']} streams, {stats['events']} events, "
            f"{stats['bytes'] / 2**20:.1f} MiB charged"
        )


if __name__ == "__main__":
    main()
