"""The keyword options of a :class:`~trio_mcp.session.Session`, as typed dictionaries: a
misspelt option is an error your type checker reports at the call, and an IDE completes
them. Every entry point that makes sessions for you takes :class:`SessionSettings`; only
:func:`~trio_mcp.session.connect_session` and :func:`~trio_mcp.session.open_session`, where
you plug in the handlers yourself, take all of :class:`SessionOptions`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from ._engine import ImmediateHandler, NotificationHandler, RequestHandler
    from ._inbound import Admission

__all__ = ["SessionOptions", "SessionSettings"]


class SessionSettings(TypedDict, total=False):
    """The bounds and timeouts of a :class:`~trio_mcp.session.Session` (see it for what
    each means and its default): keyword arguments of :meth:`Server.serve
    <trio_mcp.Server.serve>`, :func:`~trio_mcp.server.run_stdio`,
    :func:`~trio_mcp.websocket.serve_websocket` and every client's ``connect_*`` and
    ``open_*``; the ``session_options`` of :func:`~trio_mcp.http.asgi_app` and
    :func:`~trio_mcp.http.serve`."""

    request_timeout: float | None
    cancel_send_timeout: float
    drain_timeout: float
    max_concurrent_requests: int
    notification_buffer: int
    admission: Admission | None
    handback_delay: float


class SessionOptions(SessionSettings, total=False):
    """Every keyword option of :class:`~trio_mcp.session.Session`, as
    :func:`~trio_mcp.session.connect_session` and :func:`~trio_mcp.session.open_session`
    take them: :class:`SessionSettings` and the handlers that make the session a client's
    or a server's."""

    handler: RequestHandler | None
    notification_handler: NotificationHandler | None
    on_input_ended: Callable[[], None] | None
    immediate: ImmediateHandler | None
