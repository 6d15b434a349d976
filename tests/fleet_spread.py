"""Spreading a client's requests over the workers of a fleet, for the tests that check the
fleet behaves as one server: an httpx transport that sends each request to the next
worker (``RoundRobin``), an HTTP proxy with one URL that does the same for clients that
take only a URL (``round_robin_proxy``: the fuzzer), and a fleet of workers in this
process (``fleet_in_process``), each an app of its own with its own worker id, all on one
Redis."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx
import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from trio_mcp import Server
from trio_mcp._util import open_nursery_unwrapped
from trio_mcp.http import AppOptions, serve

Scope = dict[str, Any]

#: Headers that belong to one hop of HTTP, not to the request: never passed on.
HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"transfer-encoding", b"upgrade", b"te", b"trailer"}
)


class RoundRobin(httpx.AsyncBaseTransport):
    """Sends each request to the next of ``ports`` on 127.0.0.1, in turn (the URL's path,
    query and headers, ``Host`` included, are kept). ``sent`` lists the port of each."""

    def __init__(self, ports: Sequence[int]) -> None:
        self._ports = itertools.cycle(ports)
        self._inner = httpx.AsyncHTTPTransport()
        self.sent: list[int] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        port = next(self._ports)
        self.sent.append(port)
        request.url = request.url.copy_with(host="127.0.0.1", port=port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def spread_client(ports: Sequence[int]) -> httpx.AsyncClient:
    """An httpx client whose requests go to each of ``ports`` in turn (no timeouts: the
    tests bound their waits with Trio)."""
    return httpx.AsyncClient(transport=RoundRobin(ports), timeout=None)


class _Proxy:
    """An ASGI app passing each request, whole and streamed both ways, to the next worker."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        headers = [(k, v) for k, v in scope["headers"] if k not in HOP_BY_HOP]
        left = trio.Event()

        async def body() -> AsyncIterator[bytes]:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    left.set()
                    return
                yield message.get("body", b"")
                if not message.get("more_body", False):
                    return

        target = scope["raw_path"] + (
            b"?" + scope["query_string"] if scope["query_string"] else b""
        )
        request = self.client.build_request(
            scope["method"], "http://127.0.0.1" + target.decode(), headers=headers, content=body()
        )
        async with trio.open_nursery() as nursery:
            response = await self.client.send(request, stream=True)
            try:
                await send(
                    {
                        "type": "http.response.start",
                        "status": response.status_code,
                        "headers": [
                            (k, v) for k, v in response.headers.raw if k.lower() not in HOP_BY_HOP
                        ],
                    }
                )

                async def watch() -> None:  # the client left: stop streaming its answer
                    while not left.is_set():
                        if (await receive())["type"] == "http.disconnect":
                            break
                    nursery.cancel_scope.cancel()

                nursery.start_soon(watch)
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
            finally:
                with trio.CancelScope(shield=True), trio.move_on_after(5):
                    await response.aclose()
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def round_robin_proxy(ports: Sequence[int]) -> AsyncIterator[tuple[str, RoundRobin]]:
    """An HTTP proxy on 127.0.0.1 for the block, sending each request to the next of
    ``ports``; yields its base URL and the transport (whose ``sent`` says where each
    request went)."""
    transport = RoundRobin(ports)
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = None
    async with (
        httpx.AsyncClient(transport=transport, timeout=None) as client,
        open_nursery_unwrapped() as nursery,
    ):
        binds = await nursery.start(
            partial(hypercorn_serve, _Proxy(client), config, shutdown_trigger=trio.sleep_forever)
        )
        yield binds[0], transport
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def fleet_in_process(
    server: Server, state: str, count: int, **options: Any
) -> AsyncIterator[list[int]]:
    """``count`` workers of one fleet in this process (each ``serve``s ``server`` with its
    own app, so its own worker id and inbox, all sharing ``state``); yields their ports."""
    app_options: AppOptions = options  # type: ignore[assignment]
    async with open_nursery_unwrapped() as nursery:
        ports = [
            await nursery.start(
                partial(serve, server, port=0, graceful_timeout=1, state=state, **app_options)
            )
            for _ in range(count)
        ]
        yield ports
        nursery.cancel_scope.cancel()
