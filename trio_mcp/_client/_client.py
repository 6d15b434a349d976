"""The :class:`Client`: a typed API over a session with one MCP server, in either era.

The models of resources, prompts, completion and subscriptions are imported by the
methods that use them, and the handler types of what servers ask (sampling, roots,
elicitation) live in :mod:`._handlers`: a client that only calls tools does not load
them (start-up time).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar, Unpack

import trio

from .._errors import (
    ConnectionClosed,
    ErrorCode,
    McpError,
    ProtocolError,
    UnsupportedProtocolVersion,
    URLElicitationRequired,
)
from .._protocol._connection import Connection
from .._protocol._envelope import SUBSCRIPTION_ID
from .._protocol._era import EraCache, judge_probe
from .._protocol._events import InboundRequest
from .._session._engine import ProgressCallback, Session, connect_session
from .._session._options import SessionSettings
from .._transports._stream import MessageStream
from .._types._base import Implementation, LoggingLevel, Request
from .._types._capabilities import (
    ClientCapabilities,
    ServerCapabilities,
)
from .._types._converter import converter_for
from .._types._lifecycle import DiscoverResult
from .._types._methods import MRTR_METHODS
from .._types._mrtr import InputRequiredResult
from .._types._notifications import LoggingMessageNotificationParams
from .._types._tools import CallToolResult, ListToolsResult, Tool
from .._util import open_nursery_unwrapped
from .._versions import MODERN_VERSIONS, SUPPORTED_VERSIONS, Era
from ._answering import ASKS, Answering
from ._cache import ResultCache
from ._listen import Change, Listener
from ._options import ClientOptions
from ._output import OutputSchemas
from ._tasks import ToolTask, opt_in

if TYPE_CHECKING:
    from .._types._completion import Completion, PromptReference, ResourceTemplateReference
    from .._types._prompts import GetPromptResult, ListPromptsResult, Prompt
    from .._types._resources import (
        ListResourcesResult,
        ListResourceTemplatesResult,
        ReadResourceResult,
        Resource,
        ResourceTemplate,
    )
    from ._handlers import (
        ElicitationCompleteHandler,
        ElicitationHandler,
        RootsHandler,
        SamplingHandler,
    )

__all__ = ["Client", "LogHandler", "connect_client", "open_client"]

log = logging.getLogger("trio_mcp.client")

T = TypeVar("T")

#: Receives the server's log messages.
LogHandler: TypeAlias = Callable[[LoggingMessageNotificationParams], Awaitable[None] | None]

#: How many URL-mode elicitation ids a client remembers while it waits for their end.
_MAX_URL_ELICITATIONS = 256

#: Queued (locally, never sent) behind a subscription's notifications when its answer came.
_LISTEN_ENDED = "trio_mcp/subscription-ended"

_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class Client:
    """A connected MCP client. Create it with :func:`open_client` (or a transport's own
    ``open_*_client``); every method blocks until the server answers, and cancelling the
    call cancels the request on the server.

    Attributes:
        session: the underlying :class:`~trio_mcp.session.Session`.
        era: ``"modern"`` or ``"legacy"``.
        protocol_version: the revision in use.
        server_info, server_capabilities, instructions: what the server said.
    """

    def __init__(
        self,
        *,
        sampling: SamplingHandler | None = None,
        roots: RootsHandler | None = None,
        elicitation: ElicitationHandler | None = None,
        on_log: LogHandler | None = None,
        on_elicitation_complete: ElicitationCompleteHandler | None = None,
        cache: bool = True,
        max_input_rounds: int = 8,
        validate_output: bool = True,
    ) -> None:
        self._answering = Answering(sampling=sampling, roots=roots, elicitation=elicitation)
        self._on_log = on_log
        self._on_elicitation_complete = on_elicitation_complete
        #: URL-mode elicitation ids we were told of and whose end we have not heard (oldest
        #: first): a completion notification for any other id is ignored.
        self._url_elicitations: dict[str, None] = {}
        self.cache = ResultCache() if cache else None
        self.max_input_rounds = max_input_rounds
        self.validate_output = validate_output
        self._output_schemas = OutputSchemas()
        self._listeners: set[Listener] = set()
        self._listeners_by_id: dict[Any, Listener] = {}
        #: Set when the server's input ends (see :meth:`_wait_connection_ended`).
        self._input_ended = trio.Event()
        self.session: Session
        self.discovery: DiscoverResult | None = None

    # -- what we declare --------------------------------------------------------------------

    def capabilities(
        self, *, sampling_tools: bool = False, elicitation_modes: Sequence[str] = ("form",)
    ) -> ClientCapabilities:
        """What this client's handlers let it declare."""
        return self._answering.capabilities(
            sampling_tools=sampling_tools, elicitation_modes=elicitation_modes
        )

    # -- state ------------------------------------------------------------------------------

    @property
    def connection(self) -> Connection:
        return self.session.connection

    @property
    def protocol_version(self) -> str:
        assert self.connection.version is not None
        return self.connection.version

    @property
    def era(self) -> Era:
        return "modern" if self.protocol_version in MODERN_VERSIONS else "legacy"

    @property
    def server_info(self) -> Implementation | None:
        return self.connection.peer_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        caps = self.connection.peer_capabilities
        return caps if isinstance(caps, ServerCapabilities) else ServerCapabilities()

    @property
    def instructions(self) -> str | None:
        return self.connection.peer_instructions

    # -- opening ----------------------------------------------------------------------------

    async def _open(
        self,
        *,
        protocol_version: str | None,
        probe_timeout: float,
        handshake_timeout: float,
        era_cache: EraCache | None,
        peer: str | None,
    ) -> None:
        conn = self.connection
        if protocol_version is not None:
            if protocol_version not in SUPPORTED_VERSIONS:
                raise ValueError(f"unsupported protocol version {protocol_version!r}")
            if protocol_version in MODERN_VERSIONS:
                await self._open_modern(protocol_version, handshake_timeout)
            else:
                await self._initialize(protocol_version, handshake_timeout)
            return
        remembered = era_cache.get(peer) if era_cache is not None and peer is not None else None
        if remembered is not None:
            era, version = remembered
            if era == "modern" and version in conn.modern_versions:
                await self._open_modern(version, handshake_timeout)
            else:
                await self._initialize(conn.legacy_versions[0], handshake_timeout)
            return
        if conn.modern_versions:
            verdict = await self._probe(probe_timeout)
        else:
            verdict = None
        if verdict is not None and verdict.era == "modern":
            assert verdict.version is not None
            if verdict.discovery is not None:
                conn.use_modern(verdict.version)
                conn.record_discovery(verdict.discovery)
                self.discovery = verdict.discovery
            else:
                await self._open_modern(verdict.version, handshake_timeout)
        else:
            if not conn.legacy_versions:
                raise UnsupportedProtocolVersion(
                    "the server speaks no modern protocol version, and we speak no legacy one",
                    supported=[],
                    requested=conn.modern_versions[0],
                )
            await self._initialize(conn.legacy_versions[0], handshake_timeout)
        if era_cache is not None and peer is not None:
            era_cache.remember(
                peer, self.era, self.protocol_version if self.era == "modern" else None
            )

    async def _probe(self, limit: float) -> Any:
        """Send ``server/discover`` before any handshake and judge the era (stdio's way)."""
        conn = self.connection
        pending, message = conn.send_request("server/discover", None)
        answer = None
        async with self.session.track(pending, message, notify_cancel=False) as call:
            with trio.move_on_after(limit):
                answer = await call.answer()
        return judge_probe(answer, conn.modern_versions)

    async def _open_modern(self, version: str, limit: float) -> None:
        conn = self.connection
        conn.use_modern(version)
        with _handshake_deadline("server/discover", limit):
            try:
                result = await self.session.send_request(
                    "server/discover", None, model=DiscoverResult
                )
            except UnsupportedProtocolVersion as exc:
                raise UnsupportedProtocolVersion(
                    f"the server does not speak {version}",
                    supported=exc.supported,
                    requested=version,
                ) from None
        conn.record_discovery(result)
        self.discovery = result

    async def _initialize(self, version: str, limit: float) -> None:
        conn = self.connection
        pending, message = conn.initialize_request(version)
        with _handshake_deadline("initialize", limit):
            async with self.session.track(pending, message) as call:
                answer = await call.answer()
        _, initialized = conn.complete_initialize(answer)
        await self.session._send(initialized)

    # -- answering the server ---------------------------------------------------------------

    async def _handle_request(self, session: Session, request: InboundRequest) -> Any:
        """(legacy era) Answer a server's request with our handlers."""
        refused = self._undeclared(request.method, request.params)
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
            self._remember_url_elicitation(params.elicitation_id)
        return await self._answering.answer(request.method, params)

    def _remember_url_elicitation(self, elicitation_id: str) -> None:
        self._url_elicitations.pop(elicitation_id, None)
        self._url_elicitations[elicitation_id] = None
        if len(self._url_elicitations) > _MAX_URL_ELICITATIONS:
            del self._url_elicitations[next(iter(self._url_elicitations))]

    def _undeclared(self, method: str, params: Any) -> str | None:
        declared = self.connection.capabilities
        assert isinstance(declared, ClientCapabilities)
        return self._answering.undeclared(method, params, declared)

    async def _on_notification(self, session: Session, method: str, params: Any) -> None:
        if method == _LISTEN_ENDED:
            ended = self._listeners_by_id.get(params)
            if ended is not None:
                ended.end()
            return
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
                self._output_schemas.clear()
            self._route(Change(kind), subscription)  # type: ignore[arg-type]
        elif method == "notifications/resources/updated":
            if self.cache is not None:
                self.cache.invalidate_resource(params.uri)
            self._route(Change("updated", params.uri), subscription)
        elif method == "notifications/subscriptions/acknowledged":
            listener = self._listeners_by_id.get(subscription)
            if listener is not None:
                listener.acknowledge(params.notifications)

    def _route(self, change: Change, subscription: Any) -> None:
        if subscription is not None:
            listener = self._listeners_by_id.get(subscription)
            if listener is not None and listener.wants(change):
                listener.deliver(change)
            return
        for listener in list(self._listeners):
            if listener.wants(change):
                listener.deliver(change)

    # -- requests ---------------------------------------------------------------------------

    async def _request(
        self, request: Request[T], *, on_progress: ProgressCallback | None = None
    ) -> T:
        return await self.session.request(request, on_progress=on_progress)

    async def _send(
        self,
        method: str,
        params: dict[str, Any] | None,
        model: type[T],
        *,
        on_progress: ProgressCallback | None = None,
    ) -> T:
        try:
            result: T = await self.session.send_request(
                method, params, on_progress=on_progress, model=model
            )
        except URLElicitationRequired as needed:
            for elicitation in needed.elicitations:
                assert elicitation.elicitation_id is not None
                self._remember_url_elicitation(elicitation.elicitation_id)
            raise
        result_type = getattr(result, "result_type", "complete")
        if isinstance(result, InputRequiredResult):
            if method not in MRTR_METHODS:
                raise ProtocolError(
                    f"the server answered {method} with input_required, which only "
                    + ", ".join(sorted(MRTR_METHODS))
                    + " may"
                )
            if not result.input_requests and result.request_state is None:
                raise ProtocolError(
                    f"the server's input_required answer to {method} has neither "
                    "inputRequests nor requestState"
                )
        elif result_type != "complete":
            raise ProtocolError(f"unknown resultType {result_type!r} in the answer to {method}")
        return result

    def _write(self, value: Any) -> Any:
        return converter_for(self.protocol_version).unstructure(value)

    async def ping(self) -> None:
        """Check the server is alive (legacy era; a modern server answers ``server/discover``)."""
        if self.era == "modern":
            await self._send("server/discover", None, DiscoverResult)
        else:
            await self._send("ping", None, dict)

    async def _with_inputs(
        self,
        method: str,
        params: dict[str, Any],
        model: type[T],
        on_progress: ProgressCallback | None = None,
    ) -> tuple[T, int]:
        """Send a request; answer each ``InputRequiredResult`` with our handlers and retry
        (a new request id, the same ``requestState``), for at most ``max_input_rounds``.
        Returns the final result and how many retries it took."""
        result = await self._send(method, params, model, on_progress=on_progress)
        if not isinstance(result, InputRequiredResult):
            return result, 0
        return await self._answer_inputs(method, params, model, on_progress, result)

    async def _answer_inputs(
        self,
        method: str,
        params: dict[str, Any],
        model: type[T],
        on_progress: ProgressCallback | None,
        result: Any,
    ) -> tuple[T, int]:
        """The rest of :meth:`_with_inputs`, once the first answer was ``input_required``."""
        retries = 0
        while True:
            if not isinstance(result, InputRequiredResult):
                return result, retries
            if retries == self.max_input_rounds:
                # Checked before asking anyone: answers that would never be sent are not
                # worth a user's time.
                raise McpError(
                    f"{method}: the server still wanted input after {self.max_input_rounds} rounds",
                    code=ErrorCode.INTERNAL_ERROR,
                )
            retries += 1
            responses = {}
            for key, request in (result.input_requests or {}).items():
                refused = self._undeclared(request.method, request.params)
                if refused is not None:
                    raise ProtocolError(
                        f"the server asked for {refused} ({key!r}), which this client did not "
                        "declare"
                    )
                answer = await self._answering.answer(request.method, request.params)
                responses[key] = self._write(answer)
            current = dict(params)
            if responses:
                current["inputResponses"] = responses
            if result.request_state is not None:
                current["requestState"] = result.request_state
            result = await self._send(method, current, model, on_progress=on_progress)

    # -- tools ------------------------------------------------------------------------------

    async def list_tools_page(self, cursor: str | None = None) -> ListToolsResult:
        """One page of ``tools/list`` (served from the cache while fresh)."""
        result = await self._cached_list("tools/list", cursor, ListToolsResult)
        for tool in result.tools:
            self._output_schemas.remember(tool)
        return result

    async def list_tools(self) -> list[Tool]:
        """Every tool, following pagination."""
        return await self._all(self.list_tools_page, "tools")

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        as_task: bool = False,
    ) -> CallToolResult:
        """Call a tool. Blocks until it finishes (answering any input the server asks for).

        ``on_progress`` receives progress updates. A tool that fails returns a
        result with ``is_error`` set; it does not raise.

        ``as_task``: let the server run the call as a task (the tasks extension,
        2026-07-28): this waits for the task's result, polling, and cancelling the wait
        cancels the task. See :meth:`open_tool_task` to detach from it instead.

        Raises:
            McpError: a protocol error (unknown tool, ...).
            URLElicitationRequired: (2025-11-25) the user must first complete the
                out-of-band interactions it lists; then call again.
            ProtocolError: the server's structured content breaks the tool's
                ``outputSchema``.
        """
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if as_task:
            async with self.open_tool_task(name, arguments, on_progress=on_progress) as task:
                return await task.result()
        # The common case, one answer that is the result, without the layers of
        # _with_inputs and _check_output: this is the hot path of every tool call.
        result = await self._send("tools/call", params, CallToolResult, on_progress=on_progress)
        if isinstance(result, InputRequiredResult):
            result, _ = await self._answer_inputs(
                "tools/call", params, CallToolResult, on_progress, result
            )
        if (
            self.validate_output
            and not result.is_error
            and not self._output_schemas.check(name, result)
        ):
            await self._check_output_after_listing(name, result)
        return result

    @asynccontextmanager
    async def open_tool_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
    ) -> AsyncIterator[ToolTask]:
        """Call a tool, letting the server run it as a task (the tasks extension).

        Blocks until the server answers the call (with a task, or at once with the
        result); input it asks for before making the task is answered as for
        :meth:`call_tool`. The :class:`~trio_mcp.client.ToolTask` polls for the outcome
        (:meth:`~trio_mcp.client.ToolTask.result`). Leaving the block before the outcome
        is known (an exception, a cancellation) sends ``tasks/cancel``, shielded and at
        most 5 s, unless :meth:`~trio_mcp.client.ToolTask.detach` was called.

        In a legacy-era session the call is an ordinary one (the handle is done at once).
        """
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if self.era == "modern":
            params = opt_in(self, params)
            answer: Any = await self._send("tools/call", params, dict, on_progress=on_progress)
            if isinstance(answer, InputRequiredResult):
                answer, _ = await self._answer_inputs(
                    "tools/call", params, dict, on_progress, answer
                )
        else:
            answer = self._write(await self.call_tool(name, arguments, on_progress=on_progress))
        task = ToolTask(self, answer)
        async with self._owning(task):
            yield task

    @asynccontextmanager
    async def open_task(self, task_id: str) -> AsyncIterator[ToolTask]:
        """Take up a task made earlier (and detached), by its id: blocks for one
        ``tasks/get``; then as :meth:`open_tool_task`.

        Raises:
            McpError: -32602 when the server knows no such task (for this principal).
        """
        task = ToolTask(self, {"resultType": "task", "taskId": task_id, "status": "working"})
        await task.poll()
        async with self._owning(task):
            yield task

    @asynccontextmanager
    async def _owning(self, task: ToolTask) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if not task.done and not task.detached:
                await task._cancel_on_exit()

    async def _check_output_after_listing(self, name: str, result: CallToolResult) -> None:
        """Check ``result`` against the ``outputSchema`` of a tool we have not listed yet."""
        if self.server_capabilities.tools is not None:
            try:
                await self.list_tools()  # learn the tool's outputSchema
            except McpError:
                return
        self._output_schemas.check(name, result)

    # -- resources --------------------------------------------------------------------------

    async def list_resources_page(self, cursor: str | None = None) -> ListResourcesResult:
        from .._types._resources import ListResourcesResult

        return await self._cached_list("resources/list", cursor, ListResourcesResult)

    async def list_resources(self) -> list[Resource]:
        return await self._all(self.list_resources_page, "resources")

    async def list_resource_templates_page(
        self, cursor: str | None = None
    ) -> ListResourceTemplatesResult:
        from .._types._resources import ListResourceTemplatesResult

        return await self._cached_list(
            "resources/templates/list", cursor, ListResourceTemplatesResult
        )

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        return await self._all(self.list_resource_templates_page, "resource_templates")

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read a resource (served from the cache while fresh, in the modern era).

        Raises:
            McpError: not found (-32602; -32002 from older servers), or another error.
        """
        from .._types._resources import ReadResourceResult

        generation = 0
        if self.cache is not None:
            cached = self.cache.get("resources/read", uri)
            if cached is not None:
                await trio.lowlevel.checkpoint()
                return cached  # type: ignore[no-any-return]
            generation = self.cache.generation("resources/read")
        result, retries = await self._with_inputs(
            "resources/read", {"uri": uri}, ReadResourceResult
        )
        # A result that took input depends on more than the URI: never cached.
        if self.cache is not None and self.era == "modern" and retries == 0:
            self.cache.put("resources/read", uri, result, generation=generation)
        return result

    # -- prompts ----------------------------------------------------------------------------

    async def list_prompts_page(self, cursor: str | None = None) -> ListPromptsResult:
        from .._types._prompts import ListPromptsResult

        return await self._cached_list("prompts/list", cursor, ListPromptsResult)

    async def list_prompts(self) -> list[Prompt]:
        return await self._all(self.list_prompts_page, "prompts")

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> GetPromptResult:
        from .._types._prompts import GetPromptResult

        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        result, _ = await self._with_inputs("prompts/get", params, GetPromptResult)
        return result

    # -- completion and logging -------------------------------------------------------------

    async def complete(
        self,
        ref: PromptReference | ResourceTemplateReference,
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
    ) -> Completion:
        """Completion candidates for ``argument`` of a prompt or resource template.

        ``context`` (the arguments already resolved) is sent to servers of 2025-06-18
        and later; older revisions have no such field.
        """
        from .._types._completion import (
            CompleteRequestParams,
            CompleteResult,
            CompletionArgument,
            CompletionContext,
        )

        params = self._write(
            CompleteRequestParams(
                ref=ref,
                argument=CompletionArgument(name=argument, value=value),
                context=CompletionContext(arguments=dict(context)) if context is not None else None,
            )
        )
        result = await self._send("completion/complete", params, CompleteResult)
        return result.completion

    async def set_log_level(self, level: LoggingLevel) -> None:
        """Ask for server log messages at ``level`` and above.

        Legacy era: ``logging/setLevel``. Modern era: every later request carries
        ``logLevel`` (the server logs only for requests that ask).
        """
        if self.era == "modern":
            self.connection.request_log_level = level
            await trio.lowlevel.checkpoint()
            return
        await self._send("logging/setLevel", {"level": level}, dict)

    async def notify_roots_changed(self) -> None:
        """Tell a legacy server our roots changed (modern servers ask each time)."""
        if self.era == "modern":
            await trio.lowlevel.checkpoint()
            return
        await self.session.send_notification("notifications/roots/list_changed")

    # -- subscriptions ----------------------------------------------------------------------

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
    ) -> AsyncIterator[Listener]:
        """Change notifications for the duration of the block.

        Modern era: one ``subscriptions/listen`` request, open for the block
        (entering waits for the server's acknowledgement; leaving cancels it).
        Legacy era: list changes arrive unasked; ``resources/subscribe`` is sent
        for each URI on entry and ``resources/unsubscribe`` on exit.

        In both eras, iteration stops (after the changes that came first) when the
        subscription ends: the server ended it (modern era), or the connection
        closed, when :attr:`Listener.error` is the
        :exc:`~trio_mcp.ConnectionClosed` that says so. It does not raise, so check
        ``listener.error`` to tell a graceful end from a lost server.

        Raises:
            ConnectionClosed: (on entry) the connection is closed already.
            McpError: (on entry) the server refused the subscription.
        """
        from .._types._subscriptions import SubscriptionFilter

        wanted = SubscriptionFilter(
            tools_list_changed=tools or None,
            prompts_list_changed=prompts or None,
            resources_list_changed=resources or None,
            resource_subscriptions=list(resource_uris) or None,
        )
        listener = Listener(wanted)
        try:
            if self.era == "modern":
                params = {"notifications": self._write(wanted)}
                # Register the listener before sending: the acknowledgement may be routed
                # while the send is still returning.
                self.session._check_open()
                pending, message = self.connection.send_request("subscriptions/listen", params)
                self._listeners_by_id[pending.id] = listener
                async with (
                    self.session.track(pending, message) as call,
                    open_nursery_unwrapped() as nursery,
                ):

                    async def await_end() -> None:
                        try:
                            await call.result()
                        except McpError as exc:
                            log.debug("subscription %r ended: %s", pending.id, exc)
                            listener.error = exc
                        await self._end_after_queued_notifications(pending.id, listener)

                    nursery.start_soon(await_end)
                    await listener.wait_acknowledged()
                    if listener.acknowledged is None and listener.error is not None:
                        raise listener.error
                    yield listener
                    nursery.cancel_scope.cancel()
            else:
                self.session._check_open()
                self._listeners.add(listener)
                # No request to end with the connection, as in the modern era: a watcher
                # ends it, behind the notifications that came first.
                key = object()
                self._listeners_by_id[key] = listener
                subscribed = []
                try:
                    async with open_nursery_unwrapped() as nursery:

                        async def end_with_connection() -> None:
                            await self._wait_connection_ended()
                            try:
                                self.session._check_open()
                            except ConnectionClosed as exc:
                                listener.error = exc
                            else:  # pragma: no cover - ended means closed
                                listener.error = ConnectionClosed("the connection closed")
                            await self._end_after_queued_notifications(key, listener)

                        nursery.start_soon(end_with_connection)
                        for uri in resource_uris:
                            await self._send("resources/subscribe", {"uri": uri}, dict)
                            subscribed.append(uri)
                        listener.acknowledge(wanted)
                        yield listener
                        nursery.cancel_scope.cancel()
                finally:
                    with (
                        trio.CancelScope(shield=True),
                        trio.move_on_after(self.session.cancel_send_timeout),
                    ):
                        for uri in subscribed:
                            try:
                                await self._send("resources/unsubscribe", {"uri": uri}, dict)
                            except McpError:
                                break
        finally:
            self._listeners.discard(listener)
            self._listeners_by_id = {
                k: v for k, v in self._listeners_by_id.items() if v is not listener
            }
            listener.close()

    async def _wait_connection_ended(self) -> None:
        """Block until no more notifications can come: the server's input ended, or the
        session finished (closed by us, or its transport failed)."""
        async with trio.open_nursery() as nursery:

            async def session_finished() -> None:
                await self.session.wait_finished()
                nursery.cancel_scope.cancel()

            nursery.start_soon(session_finished)
            await self._input_ended.wait()
            nursery.cancel_scope.cancel()

    async def _end_after_queued_notifications(self, subscription: Any, listener: Listener) -> None:
        """End ``listener`` once the notifications that arrived before its answer are
        delivered: they wait in the session's notification queue, which the answer
        bypassed. A marker queued behind them ends it in order.

        Blocks until the session finishes, unless cancelled first (the listener's
        block ended): a session closed under it stops reading the queue, and the
        marker would never be read; then it is ended here."""
        try:
            await self.session._notifications_in.send((_LISTEN_ENDED, subscription))
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            listener.end()
            return
        await self.session.wait_finished()
        listener.end()

    # -- helpers ----------------------------------------------------------------------------

    async def _cached_list(self, method: str, cursor: str | None, model: type[T]) -> T:
        """One page of a list, from the cache while fresh (modern era). Each page is cached
        under its own cursor; a cursor the server refuses discards every cached page of
        that list."""
        key = "" if cursor is None else "cursor:" + cursor
        generation = 0
        if self.cache is not None:
            cached = self.cache.get(method, key)
            if cached is not None:
                await trio.lowlevel.checkpoint()
                return cached  # type: ignore[no-any-return]
            # An answer to a request sent before the list changed is not kept.
            generation = self.cache.generation(method)
        params = {"cursor": cursor} if cursor is not None else None
        try:
            result = await self._send(method, params, model)
        except McpError:
            if self.cache is not None and cursor is not None:
                self.cache.invalidate_method(method)
            raise
        if self.cache is not None and self.era == "modern":
            self.cache.put(method, key, result, generation=generation)
        return result

    async def _all(self, page: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
        items: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            result = await page(cursor)
            items.extend(getattr(result, field))
            cursor = result.next_cursor
            if cursor is None:
                return items
            if cursor in seen:
                raise ProtocolError(f"the server repeated cursor {cursor!r}")
            seen.add(cursor)

    async def aclose(self) -> None:
        """Close the session (its transport decides what that means for the server)."""
        await self.session.aclose()


def _subscription_id(params: Any) -> Any:
    meta = getattr(params, "meta", None)
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


@contextmanager
def _handshake_deadline(method: str, seconds: float) -> Iterator[None]:
    """``trio.fail_after(seconds)`` for the opening request ``method``, whose
    :exc:`trio.TooSlowError` says which request went unanswered and for how long (a bare
    one says nothing, and the opening is where a wrong command or a hung server shows)."""
    with trio.move_on_after(seconds) as scope:
        yield
    if scope.cancelled_caught:
        raise trio.TooSlowError(
            f"the server did not answer {method} within {seconds:g} seconds"
            " (the client's handshake_timeout)"
        )


async def connect_client(
    nursery: trio.Nursery,
    stream: MessageStream,
    *,
    name: str = "trio-mcp",
    version: str = "0.1.0",
    sampling: SamplingHandler | None = None,
    sampling_tools: bool = False,
    roots: RootsHandler | None = None,
    elicitation: ElicitationHandler | None = None,
    elicitation_modes: Sequence[Literal["form", "url"]] = ("form",),
    on_log: LogHandler | None = None,
    on_elicitation_complete: ElicitationCompleteHandler | None = None,
    protocol_version: str | None = None,
    versions: Sequence[str] = SUPPORTED_VERSIONS,
    probe_timeout: float = 5.0,
    handshake_timeout: float = 30.0,
    era_cache: EraCache | None = None,
    peer: str | None = None,
    cache: bool = True,
    max_input_rounds: int = 8,
    validate_output: bool = True,
    on_input_ended: Callable[[], None] | None = None,
    **session_options: Unpack[SessionSettings],
) -> Client:
    """Open a :class:`Client` over ``stream`` whose tasks run in ``nursery`` (yours).

    Blocks through the opening: with ``protocol_version`` that revision is
    used (no probing); otherwise the era is detected (a ``server/discover``
    probe, falling back to ``initialize`` on any non-modern answer or after
    ``probe_timeout`` seconds), remembered in ``era_cache`` under ``peer``.

    Args:
        sampling, roots, elicitation: handlers for what servers ask of clients;
            each declares its capability.
        sampling_tools: declare ``sampling.tools``.
        elicitation_modes: the elicitation modes declared.
        on_log: receives server log messages (default: the ``logging`` module).
        on_elicitation_complete: called with the ``elicitationId`` of each URL-mode
            elicitation the server says has ended (2025-11-25): one it asked for, or
            listed in a :exc:`~trio_mcp.URLElicitationRequired` a call raised; ids the
            client was never told of, or heard the end of already, are ignored. A
            good moment to retry that call.
        probe_timeout: seconds to wait for the probe's answer (``math.inf``: forever).
        handshake_timeout: seconds the opening may take (``math.inf``: forever).
        cache: honour the caching hints of modern results.
        max_input_rounds: how many ``InputRequiredResult`` rounds one call may take.
        validate_output: check structured content against each tool's ``outputSchema``.
        on_input_ended: called (synchronously) when the server's input ends.
        session_options: the client's session's bounds and timeouts
            (:class:`~trio_mcp.session.SessionSettings`).

    :class:`~trio_mcp.client.ClientOptions` names all these options, for
    :func:`open_client` and every transport's client.

    Raises:
        McpError: the server refused the handshake.
        UnsupportedProtocolVersion: no revision in common.
        trio.TooSlowError: the opening took longer than ``handshake_timeout``.
    """
    client = Client(
        sampling=sampling,
        roots=roots,
        elicitation=elicitation,
        on_log=on_log,
        on_elicitation_complete=on_elicitation_complete,
        cache=cache,
        max_input_rounds=max_input_rounds,
        validate_output=validate_output,
    )
    connection = Connection(
        "client",
        info=Implementation(name=name, version=version),
        capabilities=client.capabilities(
            sampling_tools=sampling_tools, elicitation_modes=elicitation_modes
        ),
        versions=versions,
    )

    def input_ended() -> None:
        client._input_ended.set()
        if on_input_ended is not None:
            on_input_ended()

    client.session = await connect_session(
        nursery,
        stream,
        connection,
        handler=client._handle_request,
        notification_handler=client._on_notification,
        on_input_ended=input_ended,
        **session_options,
    )
    try:
        await client._open(
            protocol_version=protocol_version,
            probe_timeout=probe_timeout,
            handshake_timeout=handshake_timeout,
            era_cache=era_cache,
            peer=peer,
        )
    except BaseException:
        await client.session.aclose()
        raise
    return client


@asynccontextmanager
async def open_client(
    stream: MessageStream, **options: Unpack[ClientOptions]
) -> AsyncIterator[Client]:
    """A :class:`Client` over ``stream`` for the duration of the block (see
    :func:`connect_client` for the options). Leaving the block closes the session."""
    async with open_nursery_unwrapped() as nursery:
        client = await connect_client(nursery, stream, **options)
        try:
            yield client
        finally:
            await client.aclose()
