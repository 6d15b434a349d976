"""What a server sends a client unasked: its requests (sampling, roots, elicitation, in the
initialize era) and its notifications (log messages, the end of URL-mode elicitations, list
changes and resource updates). :class:`Inbound` answers and routes them; the session calls
its two handlers, and it exists before the session does, so that a
:class:`~trio_mcp.Client` is made whole around a running session.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import trio

from .._errors import ErrorCode, McpError
from .._protocol._envelope import SUBSCRIPTION_ID
from .._protocol._events import InboundRequest
from .._session._engine import Session
from .._types._capabilities import ClientCapabilities
from .._types._notifications import LoggingMessageNotificationParams
from ._answering import ASKS, Answering
from ._cache import ResultCache
from ._listen import Change, Subscriptions
from ._output import OutputSchemas

if TYPE_CHECKING:
    from ._handlers import ElicitationCompleteHandler

__all__ = ["Inbound", "LogHandler"]

log = logging.getLogger("trio_mcp.client")

#: Receives the server's log messages.
LogHandler: TypeAlias = Callable[[LoggingMessageNotificationParams], Awaitable[None] | None]

#: How many URL-mode elicitation ids a client remembers while it waits for their end.
_MAX_URL_ELICITATIONS = 256

_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class Inbound:
    """Answers a server's requests with the application's handlers and takes its
    notifications (see the module docstring).

    Attributes:
        answering: the application's handlers for what servers ask.
        declared: the capabilities this client declares (what :meth:`undeclared` checks).
        cache: the modern era's result cache (``None``: no caching).
        output_schemas: the ``outputSchema`` of each tool listed.
        subscriptions: the listeners of :meth:`Client.listen <trio_mcp.Client.listen>`.
    """

    def __init__(
        self,
        answering: Answering,
        declared: ClientCapabilities,
        *,
        on_log: LogHandler | None = None,
        on_elicitation_complete: ElicitationCompleteHandler | None = None,
        cache: ResultCache | None = None,
    ) -> None:
        self.answering = answering
        self.declared = declared
        self.cache = cache
        self.output_schemas = OutputSchemas()
        self.subscriptions = Subscriptions()
        self._on_log = on_log
        self._on_elicitation_complete = on_elicitation_complete
        #: URL-mode elicitation ids we were told of and whose end we have not heard (oldest
        #: first): a completion notification for any other id is ignored.
        self._url_elicitations: dict[str, None] = {}

    def undeclared(self, method: str, params: Any) -> str | None:
        """What a server's question needs that this client did not declare (``None``: we
        answer it)."""
        return self.answering.undeclared(method, params, self.declared)

    def remember_url_elicitation(self, elicitation_id: str) -> None:
        """Expect the end of URL-mode elicitation ``elicitation_id`` (it was asked for, or
        listed in a :exc:`~trio_mcp.URLElicitationRequired`)."""
        self._url_elicitations.pop(elicitation_id, None)
        self._url_elicitations[elicitation_id] = None
        if len(self._url_elicitations) > _MAX_URL_ELICITATIONS:
            del self._url_elicitations[next(iter(self._url_elicitations))]

    async def handle_request(self, session: Session, request: InboundRequest) -> Any:
        """(initialize era) Answer a server's request with the application's handlers.

        Blocks while the handler runs.

        Raises:
            McpError: -32601 for what a server may not ask; -32602 for what this client
                did not declare; whatever the handler raises.
        """
        refused = self.undeclared(request.method, request.params)
        if refused is not None:
            await trio.lowlevel.checkpoint()
            if request.method not in ASKS:
                raise McpError(
                    f"Method not found: {request.method}", code=ErrorCode.METHOD_NOT_FOUND
                )
            raise McpError(
                f"Invalid params: this client did not declare {refused}",
                code=ErrorCode.INVALID_PARAMS,
            )
        params = request.params
        # A URL-mode elicitation (its params are ElicitRequestURLParams).
        url_mode = request.method == "elicitation/create" and params.mode == "url"
        if url_mode and params.elicitation_id is not None:
            self.remember_url_elicitation(params.elicitation_id)
        return await self.answering.answer(request.method, params)

    async def handle_notification(self, session: Session, method: str, params: Any) -> None:
        """Take one notification, in the order they came. Blocks while the application's
        log or elicitation-complete handler runs."""
        try:
            await self._take(method, params)
        finally:
            self.subscriptions.handled_one()

    async def _take(self, method: str, params: Any) -> None:
        if method == "notifications/elicitation/complete":
            # The spec: ignore ids we do not know, or heard the end of already.
            elicitation_id = params.elicitation_id
            if elicitation_id in self._url_elicitations:
                del self._url_elicitations[elicitation_id]
                if self._on_elicitation_complete is not None:
                    outcome = self._on_elicitation_complete(elicitation_id)
                    if inspect.isawaitable(outcome):
                        await outcome
            else:
                log.debug("ignored the end of unknown URL elicitation %r", elicitation_id)
            return
        if method == "notifications/message":
            if self._on_log is not None:
                outcome = self._on_log(params)
                if inspect.isawaitable(outcome):
                    await outcome
            else:
                log.log(_python_level(params.level), "server: %s", params.data)
            return
        subscription = _subscription_id(params)
        kind = _LIST_CHANGED.get(method)
        if kind is not None:
            if self.cache is not None:
                self.cache.invalidate_list(kind)
            if kind == "tools":
                self.output_schemas.clear()
            self.subscriptions.route(Change(kind), subscription)  # type: ignore[arg-type]
        elif method == "notifications/resources/updated":
            if self.cache is not None:
                self.cache.invalidate_resource(params.uri)
            self.subscriptions.route(Change("updated", params.uri), subscription)
        elif method == "notifications/subscriptions/acknowledged":
            self.subscriptions.acknowledge(subscription, params.notifications)
        elif method in ("notifications/tasks", "notifications/tasks/status"):
            # 2026-07-28's tasks extension (on a listen stream) and 2025-11-25's core.
            task_id, status = _task_status(params)
            if task_id is not None:
                self.subscriptions.route(
                    Change("task", task_id=task_id, status=status), subscription
                )


def _task_status(params: Any) -> tuple[str | None, str | None]:
    """The task id and status of a task status notification (raw or typed params)."""
    if isinstance(params, dict):
        task_id, status = params.get("taskId"), params.get("status")
    else:
        task_id, status = getattr(params, "task_id", None), getattr(params, "status", None)
    if not isinstance(task_id, str):
        return None, None
    return task_id, status if isinstance(status, str) else None


def _subscription_id(params: Any) -> Any:
    meta = params.get("_meta") if isinstance(params, dict) else getattr(params, "meta", None)
    if isinstance(meta, dict):
        return meta.get(SUBSCRIPTION_ID)
    return None


def _python_level(level: str) -> int:
    return {
        "debug": logging.DEBUG,
        "info": logging.INFO,
        "notice": logging.INFO,
        "warning": logging.WARNING,
        "error": logging.ERROR,
    }.get(level, logging.CRITICAL)
