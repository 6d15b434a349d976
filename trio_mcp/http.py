"""Streamable HTTP (both protocol eras on one endpoint) and the 2024-11-05 HTTP+SSE
transport: an ASGI app, and serving it with Hypercorn's Trio worker."""

from ._http._asgi import (
    McpAsgiApp as McpAsgiApp,
    asgi_app as asgi_app,
    open_asgi_app as open_asgi_app,
)
from ._http._event_store import (
    EventStore as EventStore,
    MemoryEventStore as MemoryEventStore,
    Replay as Replay,
)
from ._http._legacy_session import close_sse_stream as close_sse_stream
from ._http._security import HostPolicy as HostPolicy
from ._http._serve import serve as serve
