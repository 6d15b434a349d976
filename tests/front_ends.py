"""The HTTP front end the test helpers serve apps with (:func:`http_support.running`,
:func:`scripted_http.serving`): Hypercorn's Trio worker or trio_mcp's own httptools server.

A test module runs against both with ``pytestmark = pytest.mark.usefixtures("front_end")``
(the fixture is in ``tests/conftest.py``): each of its tests then runs once per front end.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import trio

FRONT_ENDS = ("hypercorn", "httptools")
#: The front end the helpers use now (set by the ``front_end`` fixture).
current = "hypercorn"


@asynccontextmanager
async def serving_http11(
    app: Callable[..., Awaitable[Any]],
    *,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None = None,
    shutdown_deadline: float = 2.0,
) -> AsyncIterator[str]:
    """Serve ``app`` on the httptools front end on a free loopback port for the block;
    yields the base URL. Leaving shuts down (after ``shutdown_trigger`` returns, when
    given; else at once)."""
    from trio_mcp._http.server._http11_serve import serve_http11

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    stop = trio.Event()

    async def trigger() -> None:
        await stop.wait()
        if shutdown_trigger is not None:
            await shutdown_trigger()

    async with trio.open_nursery() as nursery:
        await nursery.start(
            partial(
                serve_http11,
                app,
                listeners,
                shutdown_trigger=trigger,
                shutdown_deadline=shutdown_deadline,
            )
        )
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            stop.set()
            if shutdown_trigger is None:
                nursery.cancel_scope.cancel()
