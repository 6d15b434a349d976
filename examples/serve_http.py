"""One server, one HTTP endpoint, every kind of client: a 2026-07-28 client, a 2025-11-25
client with a session (and a response stream that is closed and resumed), and a
2024-11-05 client on the legacy HTTP+SSE endpoint. Then a browser-style request from a
foreign origin, refused.

Run it: ``python examples/serve_http.py``
"""

from __future__ import annotations

import argparse

import trio

from trio_mcp import Context, McpError, Server
from trio_mcp.http import (
    HttpClientStream,
    MemoryEventStore,
    OriginPolicy,
    close_sse_stream,
    open_http_client,
    serve,
)

server = Server("reports")


@server.tool()
async def report(ctx: Context) -> str:
    """A slow report. Its response stream is let go while it works (legacy sessions only)."""
    let_go = await close_sse_stream(ctx)
    await trio.sleep(0.2)
    return f"report ready (stream closed meanwhile: {let_go})"


async def serve_reports(*, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    await serve(
        server,
        "127.0.0.1",
        0,
        origin_policy=OriginPolicy(allowed_origins=["http://localhost:3000"]),
        event_store=MemoryEventStore(max_events_per_stream=100),
        retry_ms=100,
        session_idle_timeout=300,
        session_options={"max_concurrent_requests": 64},
        task_status=task_status,
    )


async def main() -> None:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(serve_reports)
        url = f"http://127.0.0.1:{port}/mcp"

        async with open_http_client(url) as client:
            result = await client.call_tool("report")
            print(f"{client.protocol_version}:", result.content[0].text)  # type: ignore[union-attr]

        async with open_http_client(url, protocol_version="2025-11-25") as client:
            stream = client.session.stream
            assert isinstance(stream, HttpClientStream)
            print(
                f"{client.protocol_version}: {stream.mode} HTTP, session {bool(stream.session_id)}"
            )
            result = await client.call_tool("report")
            print(f"{client.protocol_version}:", result.content[0].text)  # type: ignore[union-attr]

        sse_url = f"http://127.0.0.1:{port}/sse"
        async with open_http_client(
            sse_url, transport="sse", protocol_version="2024-11-05"
        ) as client:
            result = await client.call_tool("report")
            print(f"{client.protocol_version} over /sse:", result.content[0].text)  # type: ignore[union-attr]

        for origin in ["http://localhost:3000", "http://evil.example"]:
            try:
                async with open_http_client(url, headers={"Origin": origin}) as client:
                    print(f"Origin {origin}: accepted")
            except McpError as exc:
                print(f"Origin {origin}: refused ({exc.message})")

        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " ")).parse_args()
    trio.run(main)
