"""The :class:`Client`: a typed API over a session with one MCP server, in either era.

Its parts live beside it: what the server sends unasked (:mod:`._inbound`), requests and
their input rounds (:mod:`._rounds`), subscriptions (:mod:`._listen`), tool tasks
(:mod:`._tasks`). The models of resources, prompts, completion and subscriptions load on
first use (:mod:`._lazy`), and the handler types of what servers ask (sampling, roots,
elicitation) live in :mod:`._handlers`: a client that only calls tools does not load them
(start-up time).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, Unpack

import trio

from .._errors import ErrorCode, McpError, ProtocolError
from .._protocol._connection import Connection
from .._protocol._era import EraCache
from .._session._engine import Session, connect_session
from .._session._options import SessionSettings
from .._session._outbound import ProgressCallback
from .._transports._stream import MessageStream
from .._transports._tap import MessageTap, TappedStream
from .._types._base import Implementation, LoggingLevel
from .._types._capabilities import (
    ClientCapabilities,
    ServerCapabilities,
)
from .._types._converter import converter_for
from .._types._lifecycle import DiscoverResult
from .._types._mrtr import InputRequiredResult
from .._types._tools import CallToolResult, ListToolsResult, Tool
from .._util import open_nursery_unwrapped
from .._versions import MODERN_VERSIONS, SUPPORTED_VERSIONS, Era
from . import _lazy
from ._answering import Answering
from ._cache import ResultCache
from ._inbound import Inbound, LogHandler
from ._listen import Listener
from ._opening import open_conversation
from ._options import ClientOptions
from ._rounds import InputRounds
from ._tasks import ToolTask, cancel_on_exit, core_tasks, created_task, opt_in

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
    from .._types._tasks import ListTasksResult, Task
    from ._handlers import (
        ElicitationCompleteHandler,
        ElicitationHandler,
        RootsHandler,
        SamplingHandler,
    )

__all__ = ["Client", "LogHandler", "connect_client", "open_client"]

T = TypeVar("T")


#: Seconds the opening handshake may take, by default.
HANDSHAKE_TIMEOUT: Final = 30.0
#: The default of :attr:`Client.max_list_items`.
MAX_LIST_ITEMS: Final = 100_000


class Client:
    """A connected MCP client. Create it with :func:`open_client` (or a transport's own
    ``open_*_client``); every method blocks until the server answers, and cancelling the
    call cancels the request on the server.

    :func:`connect_client` makes it around a running ``session`` whose conversation is
    open (``discovery``: the server's ``server/discover`` answer, modern era) and whose
    handlers are ``inbound``'s (what the server sends unasked goes there).

    Attributes:
        session: the underlying :class:`~trio_mcp.session.Session`.
        era: ``"modern"`` or ``"legacy"``.
        protocol_version: the revision in use.
        server_info, server_capabilities, instructions: what the server said.
        cache: the modern era's result cache (``None`` when turned off).
        validate_output: whether structured content is checked against ``outputSchema``.
        discovery: the server's ``server/discover`` answer (modern era).
    """

    def __init__(
        self,
        session: Session,
        inbound: Inbound,
        *,
        discovery: DiscoverResult | None = None,
        max_input_rounds: int = 8,
        validate_output: bool = True,
    ) -> None:
        self.session = session
        self._inbound = inbound
        self._rounds = InputRounds(session, inbound, max_input_rounds)
        self.cache = inbound.cache
        self.validate_output = validate_output
        self._output_schemas = inbound.output_schemas
        self.discovery = discovery
        #: How many items (a page without any counts as one) the list-all helpers
        #: (:meth:`list_tools`, :meth:`list_resources`, ...) collect before refusing a
        #: server whose pages do not end.
        self.max_list_items = MAX_LIST_ITEMS

    # -- what we declare --------------------------------------------------------------------

    def capabilities(self) -> ClientCapabilities:
        """What this client declared: its handlers' capabilities and its extensions."""
        return self._inbound.declared

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

    @property
    def max_input_rounds(self) -> int:
        """How many ``InputRequiredResult`` rounds one call may take."""
        return self._rounds.max_rounds

    @max_input_rounds.setter
    def max_input_rounds(self, rounds: int) -> None:
        self._rounds.max_rounds = rounds

    # -- requests ---------------------------------------------------------------------------

    def _write(self, value: Any) -> Any:
        return converter_for(self.protocol_version).unstructure(value)

    async def ping(self) -> None:
        """Check the server is alive (legacy era; a modern server answers ``server/discover``)."""
        if self.era == "modern":
            await self._rounds.send("server/discover", None, DiscoverResult)
        else:
            await self._rounds.send("ping", None, dict)

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
        cancels the task. See :meth:`open_tool_task` to detach from it instead. A task's
        progress is its status message: ``on_progress`` gets each new one seen while
        polling (its numbers when it reads ``N/TOTAL: text``, as trio_mcp servers write
        ``ctx.report_progress``; else a count), the token being the task id.

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
        # send_with_inputs and _check_output: this is the hot path of every tool call.
        answer = await self._rounds.send(
            "tools/call", params, CallToolResult, on_progress=on_progress
        )
        if isinstance(answer, InputRequiredResult):
            result, _ = await self._rounds.finish(
                "tools/call", params, CallToolResult, on_progress, answer
            )
        else:
            result = answer
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

        In a 2025-11-25 session it uses that revision's core tasks (a task-augmented
        ``tools/call``, then ``tasks/get`` and ``tasks/result``) when the server declares
        them for ``tools/call``.

        Raises:
            McpError: (-32601) the connection has no tasks: neither the 2026-07-28
                extension nor the 2025-11-25 core tasks the server declares.
        """
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if self.era == "modern":
            params = opt_in(self, params)
            answer: Any = await self._rounds.send(
                "tools/call", params, dict, on_progress=on_progress
            )
            if isinstance(answer, InputRequiredResult):
                answer, _ = await self._rounds.finish(
                    "tools/call", params, dict, on_progress, answer
                )
        elif core_tasks(self.server_capabilities):
            # 2025-11-25: tasks in the core revision, asked for with a task-augmented call.
            created = await self.session.send_request(
                "tools/call", {**params, "task": {}}, model=dict, on_progress=on_progress
            )
            answer = created_task(created)
        else:
            raise McpError(
                f"{name!r} cannot run as a task: the server declares no tasks for "
                f"tools/call on this connection (protocol {self.protocol_version}); call it "
                "without as_task",
                code=ErrorCode.METHOD_NOT_FOUND,
            )
        task = ToolTask(self, answer, on_progress, rounds=self._rounds)
        async with self._owning(task):
            yield task

    @asynccontextmanager
    async def open_task(self, task_id: str) -> AsyncIterator[ToolTask]:
        """Take up a task made earlier (and detached), by its id: blocks for one
        ``tasks/get``; then as :meth:`open_tool_task`.

        Raises:
            McpError: -32602 when the server knows no such task (for this principal).
        """
        task = ToolTask(
            self,
            {"resultType": "task", "taskId": task_id, "status": "working"},
            rounds=self._rounds,
        )
        await task.poll()
        async with self._owning(task):
            yield task

    @asynccontextmanager
    async def _owning(self, task: ToolTask) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if not task.done and not task.detached:
                await cancel_on_exit(task)

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
        return await self._cached_list("resources/list", cursor, _lazy.ListResourcesResult)

    async def list_resources(self) -> list[Resource]:
        return await self._all(self.list_resources_page, "resources")

    async def list_resource_templates_page(
        self, cursor: str | None = None
    ) -> ListResourceTemplatesResult:
        return await self._cached_list(
            "resources/templates/list", cursor, _lazy.ListResourceTemplatesResult
        )

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        return await self._all(self.list_resource_templates_page, "resource_templates")

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read a resource (served from the cache while fresh, in the modern era).

        Raises:
            McpError: not found (-32602; -32002 from older servers), or another error.
        """
        generation = 0
        if self.cache is not None:
            cached = self.cache.get("resources/read", uri)
            if cached is not None:
                await trio.lowlevel.checkpoint()
                return cached  # type: ignore[no-any-return]
            generation = self.cache.generation("resources/read")
        result, retries = await self._rounds.send_with_inputs(
            "resources/read", {"uri": uri}, _lazy.ReadResourceResult
        )
        # A result that took input depends on more than the URI: never cached.
        if self.cache is not None and self.era == "modern" and retries == 0:
            self.cache.put("resources/read", uri, result, generation=generation)
        return result

    # -- prompts ----------------------------------------------------------------------------

    async def list_prompts_page(self, cursor: str | None = None) -> ListPromptsResult:
        return await self._cached_list("prompts/list", cursor, _lazy.ListPromptsResult)

    async def list_prompts(self) -> list[Prompt]:
        return await self._all(self.list_prompts_page, "prompts")

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> GetPromptResult:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        result, _ = await self._rounds.send_with_inputs(
            "prompts/get", params, _lazy.GetPromptResult
        )
        return result

    # -- tasks ------------------------------------------------------------------------------

    async def list_tasks_page(self, cursor: str | None = None) -> ListTasksResult:
        """One page of ``tasks/list``: this client's tasks on a 2025-11-25 server that
        declares ``tasks.list`` (the 2026-07-28 extension has no such method).

        Raises:
            McpError: -32601 when the connection offers no ``tasks/list``.
        """
        tasks = self.server_capabilities.tasks
        if self.protocol_version != "2025-11-25" or not (
            isinstance(tasks, dict) and "list" in tasks
        ):
            raise McpError(
                f"the server offers no tasks/list on this connection (protocol "
                f"{self.protocol_version}); follow a task by its id with open_task",
                code=ErrorCode.METHOD_NOT_FOUND,
            )
        params = {} if cursor is None else {"cursor": cursor}
        listed = await self.session.send_request("tasks/list", params, model=_lazy.ListTasksResult)
        if isinstance(listed, InputRequiredResult):
            raise ProtocolError("the server answered tasks/list with input_required")
        return listed

    async def list_tasks(self) -> list[Task]:
        """Every task ``tasks/list`` gives, across pages (see :meth:`list_tasks_page`)."""
        return await self._all(self.list_tasks_page, "tasks")

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
        params = self._write(
            _lazy.CompleteRequestParams(
                ref=ref,
                argument=_lazy.CompletionArgument(name=argument, value=value),
                context=_lazy.CompletionContext(arguments=dict(context))
                if context is not None
                else None,
            )
        )
        result = await self._rounds.send_complete(
            "completion/complete", params, _lazy.CompleteResult
        )
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
        await self._rounds.send("logging/setLevel", {"level": level}, dict)

    async def notify_roots_changed(self) -> None:
        """Tell a legacy server our roots changed (modern servers ask each time)."""
        if self.era == "modern":
            await trio.lowlevel.checkpoint()
            return
        await self.session.send_notification("notifications/roots/list_changed")

    # -- subscriptions ----------------------------------------------------------------------

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        task_ids: Sequence[str] = (),
    ) -> AbstractAsyncContextManager[Listener]:
        """Change notifications for the duration of the block.

        ``task_ids``: the status changes of these tasks (``Change("task", task_id=...,
        status=...)``): on 2026-07-28 the request declares the tasks extension and asks for
        their ``notifications/tasks`` (the server agrees to the caller's own tasks only:
        see ``listener.acknowledged.task_ids``); on 2025-11-25 the
        ``notifications/tasks/status`` a server chooses to send arrive unasked.

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
        meta = None
        if task_ids and self.era == "modern":
            meta = opt_in(self, {})["_meta"]
        return self._inbound.subscriptions.listen(
            self.session,
            tools=tools,
            prompts=prompts,
            resources=resources,
            resource_uris=resource_uris,
            send_subscribe=self._send_subscribe,
            task_ids=task_ids,
            meta=meta,
        )

    async def _send_subscribe(self, method: str, uri: str) -> object:
        return await self._rounds.send(method, {"uri": uri}, dict)

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
            result = await self._rounds.send_complete(method, params, model)
        except McpError:
            if self.cache is not None and cursor is not None:
                self.cache.invalidate_method(method)
            raise
        if self.cache is not None and self.era == "modern":
            self.cache.put(method, key, result, generation=generation)
        return result

    async def _all(self, page: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
        """Every item of a paginated list, page after page. Raises :class:`ProtocolError` if
        the server repeats a cursor, or if its pages go past :attr:`max_list_items` (empty
        pages counting one each), so a server whose cursors never end cannot make this
        collect without end."""
        items: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        budget = self.max_list_items
        while True:
            result = await page(cursor)
            found = getattr(result, field)
            budget -= max(1, len(found))
            if budget < 0:
                raise ProtocolError(
                    f"the server's {field} list goes past max_list_items="
                    f"{self.max_list_items} (its pages do not end); raise the client's "
                    "max_list_items, or read it page by page"
                )
            items.extend(found)
            cursor = result.next_cursor
            if cursor is None:
                return items
            if cursor in seen:
                raise ProtocolError(f"the server repeated cursor {cursor!r}")
            seen.add(cursor)

    async def aclose(self) -> None:
        """Close the session (its transport decides what that means for the server)."""
        await self.session.aclose()


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
    extensions: Mapping[str, Mapping[str, Any]] | None = None,
    on_log: LogHandler | None = None,
    on_elicitation_complete: ElicitationCompleteHandler | None = None,
    protocol_version: str | None = None,
    versions: Sequence[str] = SUPPORTED_VERSIONS,
    probe_timeout: float = 5.0,
    handshake_timeout: float = HANDSHAKE_TIMEOUT,
    era_cache: EraCache | None = None,
    peer: str | None = None,
    cache: bool = True,
    max_input_rounds: int = 8,
    validate_output: bool = True,
    on_input_ended: Callable[[], None] | None = None,
    on_message: MessageTap | None = None,
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
        extensions: the protocol extensions the client supports, by identifier, each with
            its settings object, declared as ``capabilities.extensions`` in every revision
            (as hosts of the MCP Apps extension do on initialize-era connections):
            ``extensions=trio_mcp.apps.client_extension()`` says the client renders views.
        on_log: receives server log messages (default: the ``logging`` module).
        on_elicitation_complete: called with the ``elicitationId`` of each URL-mode
            elicitation the server says has ended (2025-11-25): one it asked for, or
            listed in a :exc:`~trio_mcp.URLElicitationRequired` a call raised; ids the
            client was never told of, or heard the end of already, are ignored. A
            good moment to retry that call.
        probe_timeout: seconds to wait for the probe's answer (``math.inf``: forever); over
            HTTP it defaults to ``handshake_timeout`` (an HTTP server answers every request).
        handshake_timeout: seconds the opening may take (``math.inf``: forever).
        cache: honour the caching hints of modern results.
        max_input_rounds: how many ``InputRequiredResult`` rounds one call may take.
        validate_output: check structured content against each tool's ``outputSchema``.
        on_input_ended: called (synchronously) when the server's input ends.
        on_message: called (synchronously; it must not block) with ``"sent"`` or
            ``"received"`` and each JSON-RPC message once it was sent or received, the
            opening's included: a trace (``trio-mcp --output raw`` prints it).
        session_options: the client's session's bounds and timeouts
            (:class:`~trio_mcp.session.SessionSettings`).

    :class:`~trio_mcp.client.ClientOptions` names all these options, for
    :func:`open_client` and every transport's client.

    Raises:
        McpError: the server refused the handshake.
        UnsupportedProtocolVersion: no revision in common.
        trio.TooSlowError: the opening took longer than ``handshake_timeout``.
    """
    answering = Answering(sampling=sampling, roots=roots, elicitation=elicitation)
    capabilities = answering.capabilities(
        sampling_tools=sampling_tools,
        elicitation_modes=elicitation_modes,
        extensions=extensions,
    )
    inbound = Inbound(
        answering,
        capabilities,
        on_log=on_log,
        on_elicitation_complete=on_elicitation_complete,
        cache=ResultCache() if cache else None,
    )
    connection = Connection(
        "client",
        info=Implementation(name=name, version=version),
        capabilities=capabilities,
        versions=versions,
    )

    def input_ended() -> None:
        inbound.subscriptions.input_ended.set()
        if on_input_ended is not None:
            on_input_ended()

    if on_message is not None:
        stream = TappedStream(stream, on_message)
    session = await connect_session(
        nursery,
        stream,
        connection,
        handler=inbound.handle_request,
        notification_handler=inbound.handle_notification,
        on_input_ended=input_ended,
        **session_options,
    )
    try:
        discovery = await open_conversation(
            session,
            protocol_version=protocol_version,
            probe_timeout=probe_timeout,
            handshake_timeout=handshake_timeout,
            era_cache=era_cache,
            peer=peer,
        )
    except BaseException:
        await session.aclose()
        raise
    return Client(
        session,
        inbound,
        discovery=discovery,
        max_input_rounds=max_input_rounds,
        validate_output=validate_output,
    )


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
