"""The :class:`Host`: a nursery of clients, one per server, each isolated.

Resource handling
-----------------

Each server has one supervising task in the host's nursery. It opens the
server's client (starting the child process, connecting over HTTP, or
serving an in-process server in memory), starts following its list-change
notifications (in the 2026-07-28 era it waits for the server to acknowledge
its ``subscriptions/listen``), only then fetches its lists (so no change
falls between the fetch and the listening), and waits until the connection
ends; then, if restarting is on, it waits a backoff delay (doubling from
``backoff_initial`` to ``backoff_max``, reset after a connection that stayed
up ``stable_after`` seconds) and starts again, listening again first.

A stdio server's connection ends when its process exits. An HTTP server's never
ends by itself, so the host watches its requests instead: the calls routed through
the host, the list refreshes, and a ``ping`` every ``ping_interval`` seconds. When
``down_after`` of them in a row could not reach the server (or a gateway in front of
it answered 502, 503 or 504), the host closes that client and treats the server as
dropped: it is restarted with the same backoff, which for a URL means connecting
anew (a new era detection and, in the initialize era, a new session).

Resource subscriptions belong to :meth:`Host.listen` blocks: each block has
one task per server it subscribed on, which subscribes again on every new
connection of that server, for as long as the block lasts.

Error handling
--------------

A server that fails to start, crashes, or misbehaves affects only its own
entry: the failure is logged and kept in :attr:`ServerState.error`, and the
other servers go on. Calls routed to a server that is down raise
:exc:`~trio_mcp.ConnectionClosed`.

Leaving :func:`open_host` cancels every supervisor at once, so the clients'
shutdown ladders run in parallel: closing takes as long as the slowest
server, not the sum.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack

import attrs
import trio

from .._client._client import Client
from .._client._listen import Change, Listener
from .._client._options import ClientOptions
from .._errors import ConnectionClosed, ErrorCode, McpError
from .._types._prompts import GetPromptResult, Prompt
from .._types._resources import ReadResourceResult, Resource, ResourceTemplate
from .._types._roots import Root
from .._types._tools import CallToolResult, Tool
from .._util import open_nursery_unwrapped
from . import _lazy
from ._audit import DEFAULT_AUDIT_BUFFER, Audit, AuditEvent, AuditKind
from ._config import HttpServerConfig, ServerConfig, validate_name
from ._connect import open_server
from ._consent import Consent, ToolChange
from ._guard import Guard, callable_by
from ._model_tools import parse_tool_use, tool_definitions
from ._pinning import DEFAULT_MAX_DESCRIPTION, Pins, ToolStatus, definition, digest, shown

if TYPE_CHECKING:
    from .._apps._fetching import AppView
    from .._session._outbound import ProgressCallback
    from ._model_tools import ToolStyle

__all__ = ["Host", "HostOptions", "ResourceUpdates", "ServerState", "open_host"]

_LISTS = ("tools", "prompts", "resources")

log = logging.getLogger("trio_mcp.host")

Status = Literal["starting", "connected", "restarting", "failed", "stopped"]


@attrs.define(eq=False)
class ServerState:
    """What the host knows about one server."""

    name: str
    config: ServerConfig
    #: ``"connected"`` once the lists are fetched and their changes followed.
    status: Status = "starting"
    #: The client while ``"connected"``, else ``None``.
    client: Client | None = None
    error: BaseException | None = None
    restarts: int = 0
    #: Requests in a row that could not reach the server (reset by any answer).
    failures: int = 0
    tools: list[Tool] = attrs.Factory(list)
    #: The names of its listed tools that its policy hides (audited when they appear).
    blocked: set[str] = attrs.Factory(set)
    prompts: list[Prompt] = attrs.Factory(list)
    resources: list[Resource] = attrs.Factory(list)
    resource_templates: list[ResourceTemplate] = attrs.Factory(list)
    #: Set each time the server's first connection attempt has finished (either way).
    settled: trio.Event = attrs.Factory(trio.Event)
    #: Set when the host gives up on the current connection (see :meth:`Host._failed`).
    _down: trio.Event = attrs.field(factory=trio.Event, init=False, repr=False)
    #: Held while the lists are fetched: one listing at a time (see :meth:`Host.refresh`).
    _listing: trio.Lock = attrs.field(factory=trio.Lock, init=False, repr=False)
    #: The scope of the connection attempt or backoff wait under way (see :meth:`Host.restart`).
    _attempt_scope: trio.CancelScope | None = attrs.field(default=None, init=False, repr=False)
    _restart_requested: bool = attrs.field(default=False, init=False, repr=False)
    _supervised: bool = attrs.field(default=False, init=False, repr=False)
    #: Connection attempts begun, and how many of them have connected or failed.
    _attempts: int = attrs.field(default=0, init=False, repr=False)
    _attempts_settled: int = attrs.field(default=0, init=False, repr=False)
    #: The roots this server sees, if its policy gives them (see :meth:`Host.set_roots`).
    roots: list[Root] | None = attrs.field(
        default=attrs.Factory(
            lambda self: (
                None if self.config.policy.roots is None else list(self.config.policy.roots)
            ),
            takes_self=True,
        )
    )

    def _take_restart_request(self) -> bool:
        """Whether :meth:`Host.restart` asked for a new connection (the request is taken)."""
        asked = self._restart_requested
        self._restart_requested = False
        return asked


class Host:
    """Many servers behind one namespaced view. Create it with :func:`open_host`.

    Tools and prompts are named ``{server}{separator}{name}``
    (``weather__forecast``); resources keep their URIs, and a read goes to the
    server that listed the URI (or whose template matches it).

    Args:
        separator: between the server's name and a tool's or prompt's.
        restart: connect again (after a backoff) to a server that dropped.
        backoff_initial, backoff_max: the first delay before a restart, doubling up to
            the maximum (seconds).
        stable_after: a connection that stayed up this long starts the delays afresh.
        down_after: (HTTP) how many requests in a row may fail to reach a server before
            the host drops its connection (default 3).
        ping_interval: (HTTP) seconds between the pings that notice a server going away
            while nobody calls it (default 15; ``math.inf``: no pings).
        client_options: options of every client (:class:`~trio_mcp.client.ClientOptions`).

    :class:`HostOptions` names these options, for :func:`open_host`.
    """

    def __init__(
        self,
        servers: Mapping[str, ServerConfig],
        *,
        separator: str = "__",
        restart: bool = True,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        stable_after: float = 10.0,
        down_after: int = 3,
        ping_interval: float = 15.0,
        client_options: ClientOptions | None = None,
        consent: Consent | None = None,
        max_description: int = DEFAULT_MAX_DESCRIPTION,
        audit_buffer: int = DEFAULT_AUDIT_BUFFER,
        on_audit: Callable[[AuditEvent], None] | None = None,
    ) -> None:
        if down_after < 1:
            raise ValueError("down_after must be 1 or more")
        if not ping_interval > 0:
            raise ValueError("ping_interval must be more than 0 seconds")
        #: The consent hooks (the default policy unless given; see :class:`Consent`).
        self.consent = Consent() if consent is None else consent
        #: Approved tool definitions.
        self.pins = Pins(max_description)
        #: The audit events (see :class:`Audit`).
        self.audit = Audit(audit_buffer, on_audit)
        self.separator = separator
        self.down_after = down_after
        self.ping_interval = ping_interval
        #: Whether a server that dropped is connected again (the ``restart`` option).
        self.restarts_dropped = restart
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.stable_after = stable_after
        self.client_options: dict[str, Any] = dict(client_options or {})
        self.servers: dict[str, ServerState] = {
            validate_name(name, separator): ServerState(name, config)
            for name, config in servers.items()
        }
        self.changed = trio.Event()
        self._guard = Guard(self)
        #: The nursery of open_host, where the supervisors run (None outside it).
        self._nursery: trio.Nursery | None = None

    # -- the aggregated view ---------------------------------------------------------------------

    def tools(self) -> dict[str, Tool]:
        """Every connected server's tools for the model, by namespaced name: those its
        policy allows, without the tools only MCP Apps views may call
        (``visibility: ["app"]``), duplicate names, over-long descriptions or namespaced
        names that collide with another server's (see :meth:`tool_status`)."""
        found: dict[str, Tool] = {}
        collided: set[str] = set()
        for state in self.servers.values():
            if state.client is None:
                continue
            for tool in state.tools:
                if not state.config.policy.allows_tool(tool.name):
                    continue
                if not callable_by(tool, "model"):  # an MCP Apps view's own tool
                    continue
                if self.pins.status(state.name, tool.name) not in ("approved", "changed", "new"):
                    continue
                name = f"{state.name}{self.separator}{tool.name}"
                if name in found:
                    collided.add(name)
                found[name] = tool
        for name in collided:
            del found[name]
        return found

    def tool_status(self, name: str) -> ToolStatus:
        """The pinning status of ``server__tool``: ``"approved"``, ``"changed"`` (its
        definition differs from the one approved) or ``"new"`` (its server added it after
        its tools were first listed), both refused until approved; ``"duplicate"`` (its
        server lists two tools of that name), ``"too_long"`` (the text it offers a model is
        longer than ``max_description``), ``"too_deep"`` (its schemas nest objects and
        arrays more than 64 deep), ``"bad_name"`` (its name breaks the spec's rules
        for tool names) or ``"collision"`` (another server's tool has the same namespaced
        name, as ``a`` + ``__b`` and ``a_`` + ``_b`` do), always refused."""
        if len({state.name for state, _ in self._guard.claimants(name)}) > 1:
            return "collision"
        server, _, tool = name.partition(self.separator)
        return self.pins.status(server, tool)

    def tool_change(self, name: str) -> ToolChange | None:
        """What approving ``server__tool`` would approve, while it is ``"changed"`` or
        ``"new"`` (else ``None``): show ``current`` to the user, and pass ``digest`` to
        :meth:`approve_tool`.

        Raises:
            McpError: (-32602) no connected server lists it.
        """
        state, tool = self._guard.find_tool(name)
        if self.pins.status(state.name, tool.name) not in ("changed", "new"):
            return None
        current = self.pins.current(state.name, tool.name) or definition(tool)
        return ToolChange(
            server=state.name,
            name=tool.name,
            approved=self.pins.approved(state.name, tool.name),
            current=current,
            digest=digest(current),
        )

    def approve_tool(self, name: str, approved_digest: str) -> None:
        """Approve the definition of ``server__tool`` whose digest is ``approved_digest``
        (``ToolChange.digest``, from
        :meth:`tool_change` or the ``tool_changed`` hook), after it changed or was added.

        Raises:
            McpError: (-32602) no connected server lists it, or the digest is not the one
                of the definition its server lists now (it changed again since it was
                shown: show it again), or the tool is refused for what it is
                (``"duplicate"``, ``"too_long"``, ``"too_deep"``, ``"bad_name"``).
        """
        state, tool = self._guard.find_tool(name)
        if not self.pins.approve(state.name, tool.name, approved_digest):
            current = self.pins.current(state.name, tool.name)
            raise McpError(
                f"{shown(name)} cannot be approved with digest {approved_digest[:16]!r}: its "
                f"server lists a definition with digest "
                f"{digest(current)[:16] if current else None!r} (status "
                f"{self.pins.status(state.name, tool.name)!r})",
                code=ErrorCode.INVALID_PARAMS,
            )
        self.audit.record("tool_approved", state.name, tool.name, "allow", "approve_tool")

    def tool_definitions(self, style: ToolStyle = "anthropic") -> list[dict[str, Any]]:
        """The approved tools in the shape an LLM API takes (see
        :func:`~trio_mcp.host.tool_definitions`): ``"anthropic"``, ``"openai"`` (Chat
        Completions) or ``"openai-responses"``. Changed tools are left out until approved
        again."""
        return tool_definitions(
            {
                name: tool
                for name, tool in self.tools().items()
                if self.tool_status(name) == "approved"
            },
            style,
        )

    async def set_roots(self, server: str, roots: Sequence[Root | str]) -> None:
        """Give ``server`` these roots (only it sees them, from now on, in place of the
        host-wide ``roots`` handler) and tell only it they changed
        (``notifications/roots/list_changed`` in the initialize era; a 2026-07-28 server
        asks each time).

        A connection made without roots (neither the server's policy nor the host's
        ``client_options`` gave any) did not declare the roots capability, so its server
        cannot ask: that server is restarted (see :meth:`restart`), and its new connection
        declares them. Blocks while the notification is sent, or until the restarted
        server is connected again.

        Raises:
            KeyError: no such server.
            ConnectionClosed: the restarted server did not come back.
        """
        state = self.servers[server]
        state.roots = [root if isinstance(root, Root) else Root(uri=root) for root in roots]
        client = state.client
        if client is None:
            await trio.lowlevel.checkpoint()  # its next connection declares them
        elif client.capabilities().roots is None:
            await self.restart(server)
        else:
            await client.notify_roots_changed()

    async def refresh(self, server: str) -> None:
        """Fetch ``server``'s tools, prompts and resources again now, for a server that
        changes them without saying so (no ``list_changed``). The view, tool pinning and
        :meth:`wait_changed` see the result as after a notification.

        One listing of a server runs at a time: this waits for one under way, then lists.
        Blocks until the lists are fetched; cancelling it cancels the listing.

        Raises:
            KeyError: no such server.
            ConnectionClosed: it is not connected.
            McpError: the server refused a listing.
        """
        state = self.servers[server]
        client = self.client(server)
        async with state._listing:
            if state.client is not client:
                raise ConnectionClosed(f"server {server!r} dropped its connection")
            with self._watching(state, client):
                await self._refresh(state, client)
        self._notify()

    async def restart(self, server: str) -> None:
        """Close ``server``'s connection (or stop waiting out its backoff) and connect
        again at once, with its lists fetched afresh: what a crash and a restart do, on
        request. Also brings back a server that failed with ``restart=False``. Requests
        in flight on the old connection fail with :exc:`~trio_mcp.ConnectionClosed`.

        Blocks until the new connection is up, or failed.

        Raises:
            KeyError: no such server.
            ConnectionClosed: the new connection failed (its error is the cause, and in
                :attr:`ServerState.error`).
            RuntimeError: the host is not open (outside :func:`open_host`).
        """
        state = self.servers[server]
        if self._nursery is None:
            raise RuntimeError("the host is not open: restart works inside open_host")
        target = state._attempts + 1
        if state._supervised:
            state._restart_requested = True  # taken by the supervisor (_supervise_attempts)
            if state._attempt_scope is not None:
                state._attempt_scope.cancel()
        else:  # it gave up (restart=False): a new supervisor
            state.restarts += 1
            self.audit.record("restart", state.name, None, "restart", "requested")
            self._nursery.start_soon(self._supervise, state)
        while state._attempts_settled < target:
            await self.wait_changed()
        if state.client is None:
            raise ConnectionClosed(
                f"server {server!r} did not come back: {state.error}"
            ) from state.error

    def prompts(self) -> dict[str, Prompt]:
        return {
            f"{state.name}{self.separator}{prompt.name}": prompt
            for state in self.servers.values()
            if state.client is not None
            for prompt in state.prompts
        }

    def resources(self) -> dict[str, tuple[str, Resource]]:
        """Every connected server's resources by URI, with the server that owns each."""
        found: dict[str, tuple[str, Resource]] = {}
        for state in self.servers.values():
            if state.client is not None:
                for resource in state.resources:
                    found.setdefault(resource.uri, (state.name, resource))
        return found

    def resource_templates(self) -> list[tuple[str, ResourceTemplate]]:
        return [
            (state.name, template)
            for state in self.servers.values()
            if state.client is not None
            for template in state.resource_templates
        ]

    def client(self, server: str) -> Client:
        """The connected client of ``server``.

        Raises:
            KeyError: no such server.
            ConnectionClosed: it is not connected now.
        """
        state = self.servers[server]
        if state.client is None:
            raise ConnectionClosed(
                f"server {server!r} is {state.status}", data={"error": repr(state.error)}
            )
        return state.client

    def _route(self, namespaced: str) -> tuple[ServerState, Client, str]:
        server, separator, name = namespaced.partition(self.separator)
        if not separator or server not in self.servers:
            raise McpError(f"no server owns {namespaced!r}", code=ErrorCode.INVALID_PARAMS)
        return self.servers[server], self.client(server), name

    async def call_tool(
        self,
        name: str | Mapping[str, Any],
        arguments: Mapping[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        as_task: bool = False,
    ) -> CallToolResult:
        """Call ``server__tool`` on the server that owns it (see :meth:`Client.call_tool`),
        if its policy, its pinned definition and the consent hook allow it.

        ``name`` may also be a model's tool-use block (Anthropic ``tool_use``, OpenAI
        ``tool_calls`` item or Responses ``function_call``), for a name from
        :meth:`tool_definitions`.

        A refusal (the tool blocked by the server's policy, its definition changed and
        not approved again, the rate limit passed, the consent hook denying, the
        policy's timeout passed) is a result with ``is_error`` set, saying why; the
        server never sees a refused call. Blocks while the consent hook waits; cancelling
        it cancels the hook (nothing is sent) or the call.

        Raises:
            McpError: (-32602) no connected server lists that tool.
            ConnectionClosed: its server is not connected.
        """
        if not isinstance(name, str):
            name, arguments = parse_tool_use(name)
        return await self._guard.call_tool(
            name, arguments, on_progress=on_progress, as_task=as_task
        )

    async def view(self, name: str) -> AppView | None:
        """The MCP Apps view of ``server__tool`` (``None`` for a tool without one), read
        from that tool's server, never from another that offers the same URI, and
        checked (see :func:`trio_mcp.apps.view_from_result`), if the ``resource_read``
        consent hook allows it (it may refuse, not rewrite, the URI). Render it with its
        ``content_security_policy`` and ``permission_policy``; pass the tool calls it
        makes to :meth:`call_tool_from_view`. Declare the extension to servers with
        ``client_options={"extensions": trio_mcp.apps.client_extension()}``. Blocks for
        one ``resources/read``; cancelling it cancels the read.

        Raises:
            McpError: (-32602) no connected server lists the tool for the model; the hook
                refused (code -1); the server's read failed.
            AppFormatError: the link or the view is malformed (a :class:`ValueError`).
            ConnectionClosed: its server is not connected.
        """
        state, tool = self._guard.find_tool(name)
        link = _lazy.tool_ui(tool)
        if link is None or link.resource_uri is None:
            return None
        return await self._guard.read_view(state, link.resource_uri)

    async def call_tool_from_view(
        self,
        view: AppView,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call ``name`` (the tool's own name, not namespaced) for ``view``, on the server
        the view came from only, if its MCP Apps ``visibility`` includes ``"app"``; the
        policy, pins and consent hooks apply as to the model's calls (see
        :meth:`call_tool`).

        Raises:
            McpError: (-32602) the view's server lists no such tool that views may call
                (an app-only tool of another server is never reached from here).
            ConnectionClosed: its server is not connected.
        """
        if view.server is None or view.server not in self.servers:
            raise McpError(
                f"the view {view.uri} was not read through this host", code=ErrorCode.INVALID_PARAMS
            )
        return await self._guard.call_tool(
            f"{view.server}{self.separator}{name}",
            arguments,
            on_progress=on_progress,
            as_task=False,
            caller="app",
        )

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> GetPromptResult:
        state, client, prompt = self._route(name)
        with self._watching(state, client):
            return await client.get_prompt(prompt, arguments)

    def resource_owner(self, uri: str) -> str:
        """The server that owns ``uri``: the one that listed it, else the first whose
        template matches it.

        Raises:
            McpError: (-32602) no connected server offers it.
        """
        owner = self.resources().get(uri)
        if owner is not None:
            return owner[0]

        for server, template in self.resource_templates():
            if _lazy.UriTemplate(template.uri_template).match(uri) is not None:
                return server
        raise McpError(
            f"Resource not found: no server offers {uri}",
            code=ErrorCode.INVALID_PARAMS,
            data={"uri": uri},
        )

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read ``uri`` from the server that owns it (see :meth:`resource_owner`), if the
        ``resource_read`` consent hook allows it (it may rewrite the URI).

        Raises:
            McpError: no server offers it (-32602), or the hook refused (code -1).
        """
        return await self._guard.read_resource(uri)

    @asynccontextmanager
    async def listen(self, *, resource_uris: Sequence[str]) -> AsyncIterator[ResourceUpdates]:
        """Updates of ``resource_uris`` for the duration of the block, across restarts.

        Each URI goes to the server that owns it (:meth:`resource_owner`), which is
        asked to report its updates (``resources/subscribe`` in the initialize era, a
        ``subscriptions/listen`` stream in the 2026-07-28 era). Whenever one of those
        servers comes back after a restart or a dropped connection, the subscription is
        made again, and each of its URIs is then reported updated once: it may have
        changed while the server was down (a restarted server usually starts afresh).

        Entering blocks until every owning server has acknowledged the subscription (or
        dropped its connection, in which case its next connection subscribes). Leaving
        unsubscribes. Iterate the yielded :class:`ResourceUpdates` for
        ``Change("updated", uri)`` items; changes of the aggregated view are
        :meth:`wait_changed`'s.

        Raises:
            McpError: no connected server offers a URI (-32602), or a server refused
                the first subscription (for instance it does not support subscribing).
        """
        by_server: dict[str, list[str]] = {}
        for uri in dict.fromkeys(resource_uris):
            by_server.setdefault(self.resource_owner(uri), []).append(uri)
        updates = ResourceUpdates(resource_uris)
        try:
            async with open_nursery_unwrapped() as nursery:
                for server, uris in by_server.items():
                    await nursery.start(self._keep_subscribed, self.servers[server], uris, updates)
                yield updates
                nursery.cancel_scope.cancel()
        finally:
            updates._close()

    async def wait_settled(self) -> None:
        """Block until every server's first connection attempt has finished, either way."""
        for state in self.servers.values():
            await state.settled.wait()

    async def wait_changed(self) -> None:
        """Block until the view changes next (a server connects, drops, or a list changes)."""
        await self.changed.wait()

    def _notify(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    # -- noticing a server that went away ------------------------------------------------------

    @contextmanager
    def _watching(self, state: ServerState, client: Client) -> Iterator[None]:
        """Count what a request to ``client`` says about its server: an error showing it
        could not be reached is a failure (see :meth:`_failed`); any answer resets the count."""
        try:
            yield
        except McpError as exc:
            if shows_server_gone(exc):
                self._failed(state, client, exc)
            elif state.client is client:
                state.failures = 0
            raise
        if state.client is client:
            state.failures = 0

    def _failed(self, state: ServerState, client: Client, error: McpError) -> None:
        """One more request could not reach ``state``'s server; at ``down_after`` in a row,
        give up on its connection (the supervisor then closes it and restarts)."""
        if state.client is not client:
            return  # a connection already given up
        state.failures += 1
        if state.failures >= self.down_after and not state._down.is_set():
            log.warning(
                "server %r: %d requests in a row could not reach it; dropping the connection",
                state.name,
                state.failures,
            )
            state.error = ConnectionClosed(
                f"server {state.name!r} could not be reached {state.failures} times in a row: "
                f"{error.message}"
            )
            # Out of the view at once; the supervisor closes the client and restarts.
            state.client = None
            state.status = "restarting" if self.restarts_dropped else "failed"
            state._down.set()
            self._notify()

    async def _keep_checking(self, state: ServerState, client: Client) -> None:
        """Ping ``client``'s server every ``ping_interval`` seconds (each ping gets as long
        to answer); pings count like any request routed through the host."""
        while True:
            await trio.sleep(self.ping_interval)
            with trio.move_on_after(self.ping_interval):
                try:
                    with self._watching(state, client):
                        await client.ping()
                except McpError as exc:
                    log.debug("server %r: ping failed: %s", state.name, exc)

    async def _watch_session(self, state: ServerState, client: Client) -> None:
        """Give up on the connection when its session ends, keeping why (a message over
        the size limit, the process's exit status and last stderr line)."""
        await client.session.wait_finished()
        if state.error is None and not state._down.is_set():
            state.error = client.session.end_reason
        state._down.set()

    # -- supervising ---------------------------------------------------------------------------

    async def _supervise(self, state: ServerState) -> None:
        """Connect to ``state``'s server, and again after each drop (with backoff) while
        restarting is on, or at once when :meth:`restart` asks. Returns when it gives up."""
        state._supervised = True
        try:
            await self._supervise_attempts(state)
        finally:
            state._supervised = False

    async def _supervise_attempts(self, state: ServerState) -> None:
        delay = self.backoff_initial
        while True:
            started = trio.current_time()
            state._down = trio.Event()
            state.failures = 0
            state._attempts += 1
            with trio.CancelScope() as state._attempt_scope:
                await self._connect_once(state)
            state._attempt_scope = None
            if state._take_restart_request():
                delay = self.backoff_initial
                state.restarts += 1
                self.audit.record("restart", state.name, None, "restart", "requested")
                log.info("server %r: restarting on request", state.name)
                continue
            if not self.restarts_dropped:
                return
            if trio.current_time() - started >= self.stable_after:
                delay = self.backoff_initial
            state.restarts += 1
            self.audit.record("restart", state.name, None, "restart", type(state.error).__name__)
            log.info("server %r: restarting in %.1f s", state.name, delay)
            with trio.CancelScope() as state._attempt_scope:
                await trio.sleep(delay)
            state._attempt_scope = None
            if state._take_restart_request():
                delay = self.backoff_initial
                continue
            delay = min(delay * 2, self.backoff_max)

    async def _connect_once(self, state: ServerState) -> None:
        """One connection to ``state``'s server, from opening it to its end (or a failure
        to open it), which is logged and kept in :attr:`ServerState.error`."""
        try:
            async with (
                open_server(state.config, self._guard.client_options(state)) as client,
                open_nursery_unwrapped() as nursery,
            ):
                # Listening first, then fetching: a change made at any moment after
                # the fetch is followed, including one made right after wait_settled().
                await nursery.start(self._follow_changes, state, client)
                state.client, state.status, state.error = client, "connected", None
                state._attempts_settled = state._attempts
                state.settled.set()
                self._notify()
                nursery.start_soon(self._watch_session, state, client)
                if isinstance(state.config, HttpServerConfig) and self.ping_interval < math.inf:
                    nursery.start_soon(self._keep_checking, state, client)
                await state._down.wait()
                nursery.cancel_scope.cancel()
            if state.error is None:
                state.error = ConnectionClosed(f"server {state.name!r} closed the connection")
            log.warning("server %r: %s", state.name, state.error)
        except Exception as exc:  # noqa: BLE001 - one server's failure must not spread
            state.error = exc
            log.warning("server %r: %s", state.name, exc)
        finally:
            state.client = None
            state.tools, state.prompts, state.resources, state.resource_templates = (
                [],
                [],
                [],
                [],
            )
            state.status = (
                "restarting" if self.restarts_dropped or state._restart_requested else "failed"
            )
            state._attempts_settled = state._attempts
            state.settled.set()
            self._notify()

    async def _refresh(
        self, state: ServerState, client: Client, kinds: Sequence[str] = _LISTS
    ) -> None:
        caps = client.server_capabilities
        if client.cache is not None:
            # The view must be the server's answer, never a page cached before a change.
            for kind in kinds:
                client.cache.invalidate_list(kind)
        if "tools" in kinds:
            state.tools = await client.list_tools() if caps.tools is not None else []
            for tool_name, status in self.pins.review(state.name, state.tools):
                event: AuditKind = "tool_refused"
                if status in ("changed", "new"):
                    event = "tool_changed" if status == "changed" else "tool_added"
                self.audit.record(event, state.name, tool_name, "deny", status)
            policy = state.config.policy
            blocked = {tool.name for tool in state.tools if not policy.allows_tool(tool.name)}
            for tool_name in sorted(blocked - state.blocked):
                self.audit.record(
                    "tool_refused", state.name, tool_name, "deny", "blocked by the host's policy"
                )
            state.blocked = blocked
        if "prompts" in kinds:
            state.prompts = await client.list_prompts() if caps.prompts is not None else []
        if "resources" in kinds and caps.resources is not None:
            state.resources = await client.list_resources()
            state.resource_templates = await client.list_resource_templates()

    async def _follow_changes(
        self,
        state: ServerState,
        client: Client,
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen for list changes, fetch the lists, report started, then refetch a list
        each time it changes. A server that refuses to be listened to gets its lists
        fetched once."""
        listening = False
        try:
            async with client.listen(tools=True, prompts=True, resources=True) as changes:
                listening = True
                async with state._listing:
                    await self._refresh(state, client)
                task_status.started()
                await self._apply_changes(state, client, changes)
        except McpError as exc:
            if listening:
                raise
            log.info("server %r: not following list changes: %s", state.name, exc)
            async with state._listing:
                await self._refresh(state, client)
            task_status.started()

    async def _apply_changes(self, state: ServerState, client: Client, changes: Listener) -> None:
        """Refetch each list that changed, coalescing: one listing at a time (with
        :meth:`refresh`'s), and however many changes arrive while one runs, at most one
        more listing of each list. One task takes the changes as they come (so the
        listener's buffer never fills), another lists."""
        changed = _ChangedLists()
        try:
            async with open_nursery_unwrapped() as nursery:
                nursery.start_soon(self._relist, state, client, changed)
                async for change in changes:
                    if change.kind != "updated":
                        changed.add(change.kind)
                changed.close()  # the relister lists what is pending, then ends
        except McpError as exc:
            if shows_server_gone(exc):
                self._failed(state, client, exc)
            log.info("server %r: no longer following list changes: %s", state.name, exc)

    async def _relist(self, state: ServerState, client: Client, changed: _ChangedLists) -> None:
        """Fetch the lists ``changed`` holds, each time it holds some, until it is closed
        and nothing is pending."""
        while kinds := await changed.take():
            async with state._listing:
                await self._refresh(state, client, kinds)
            self._notify()

    async def _keep_subscribed(
        self,
        state: ServerState,
        uris: Sequence[str],
        updates: ResourceUpdates,
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Subscribe to ``uris`` on each connection of ``state``'s server in turn, and pass
        their updates on. Reports started after the first attempt; only that attempt's
        refusal is raised (later ones are logged, and tried again on the next connection)."""
        first = True
        client: Client | None = None
        while True:
            while state.client is None or state.client is client:
                await self.wait_changed()
            client = state.client
            try:
                async with client.listen(resource_uris=uris) as changes:
                    if first:
                        first = False
                        task_status.started()
                    else:
                        for uri in uris:
                            updates._deliver(uri)
                    await _forward_until_closed(changes, updates)
            except McpError as exc:
                if first and not isinstance(exc, ConnectionClosed):
                    raise
                log.warning("server %r: could not subscribe to %s: %s", state.name, uris, exc)
            if first:
                first = False
                task_status.started()


def shows_server_gone(error: McpError) -> bool:
    """Whether ``error`` shows that a request never reached its server: the HTTP client
    could not reach it (``data`` ``{"unreachable": true}``), or a gateway in front of it
    answered 502, 503 or 504."""
    data = error.data
    if not isinstance(data, Mapping):
        return False
    return data.get("unreachable") is True or data.get("httpStatus") in (502, 503, 504)


async def _forward_until_closed(changes: Listener, updates: ResourceUpdates) -> None:
    """Pass resource updates from ``changes`` to ``updates`` until the subscription ends
    (a listener ends with its connection, in either era)."""
    async for change in changes:
        if change.kind == "updated" and change.uri is not None:
            updates._deliver(change.uri)


class _ChangedLists:
    """The lists that changed since their listing last began: a set, not a queue, so a
    flood of list_changed notifications is one pending listing per list."""

    def __init__(self) -> None:
        self._kinds: dict[str, None] = {}
        self._arrived = trio.Event()
        self._closed = False

    def add(self, kind: str) -> None:
        self._kinds[kind] = None
        self._arrived.set()

    def close(self) -> None:
        """No more changes will come: :meth:`take` returns ``()`` once none are pending."""
        self._closed = True
        self._arrived.set()

    async def take(self) -> tuple[str, ...]:
        """Block until some list changed; return which (and forget them). ``()``: closed,
        and nothing is pending."""
        await trio.lowlevel.checkpoint()
        while not self._kinds:
            if self._closed:
                return ()
            if self._arrived.is_set():
                self._arrived = trio.Event()
            await self._arrived.wait()
        kinds = tuple(self._kinds)
        self._kinds.clear()
        return kinds


class ResourceUpdates:
    """What :meth:`Host.listen` yields: iterate it for ``Change("updated", uri)``.

    Updates are coalesced: a URI updated again before it was taken is reported once,
    so memory is bounded by the number of URIs and nothing is dropped. Iteration ends
    when the block does.

    Attributes:
        resource_uris: the URIs subscribed to.
    """

    def __init__(self, resource_uris: Sequence[str]) -> None:
        self.resource_uris = tuple(dict.fromkeys(resource_uris))
        self._pending: dict[str, None] = {}
        self._arrived = trio.Event()
        self._closed = False

    def _deliver(self, uri: str) -> None:
        self._pending[uri] = None
        self._arrived.set()

    def _close(self) -> None:
        self._closed = True
        self._arrived.set()

    def __aiter__(self) -> ResourceUpdates:
        return self

    async def __anext__(self) -> Change:
        """Block until a URI is updated (or the block ends: then stop)."""
        await trio.lowlevel.checkpoint()
        while not self._pending:
            if self._closed:
                raise StopAsyncIteration
            if self._arrived.is_set():
                self._arrived = trio.Event()
            await self._arrived.wait()
        uri = next(iter(self._pending))
        del self._pending[uri]
        return Change("updated", uri)


class HostOptions(TypedDict, total=False):
    """The keyword options of :func:`open_host`: :class:`Host`'s (typed, so that a
    misspelt option is an error your type checker reports; see :class:`Host` and
    :func:`open_host` for what each means and its default)."""

    separator: str
    restart: bool
    backoff_initial: float
    backoff_max: float
    stable_after: float
    down_after: int
    ping_interval: float
    client_options: ClientOptions | None
    consent: Consent | None
    max_description: int
    audit_buffer: int
    on_audit: Callable[[AuditEvent], None] | None


@asynccontextmanager
async def open_host(
    servers: Mapping[str, ServerConfig], **options: Unpack[HostOptions]
) -> AsyncIterator[Host]:
    """Connect to every server concurrently, for the duration of the block.

    Entering returns at once (use :meth:`Host.wait_settled` to wait for the
    first connections); leaving closes every client in parallel. Options are
    :class:`Host`'s (:class:`HostOptions`); ``client_options`` go to each client (its ``sampling``,
    ``elicitation`` and ``roots`` handlers are wrapped per server by the consent hooks
    and each server's policy).

    ``consent`` (a :class:`~trio_mcp.host.Consent`) holds the consent hooks; by default
    only read-only tools may be called and sampling and elicitation are refused; pass
    ``consent=allow_all()`` to trust every server. ``on_audit`` is called with each
    :class:`~trio_mcp.host.AuditEvent`; ``audit_buffer`` bounds :attr:`Host.audit`;
    ``max_description`` is the longest tool description accepted.
    """
    host = Host(servers, **options)
    try:
        async with open_nursery_unwrapped() as nursery:
            host._nursery = nursery
            for state in host.servers.values():
                nursery.start_soon(host._supervise, state)
            try:
                yield host
            finally:
                nursery.cancel_scope.cancel()
    finally:
        host._nursery = None
        host.audit._close()
        for state in host.servers.values():
            state.status = "stopped"
