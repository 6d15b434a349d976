"""The host's boundary: every tool call, resource read, sampling and elicitation request
passes the server's policy, the pinned tool definitions and the consent hooks here.

Error handling
--------------

A refused tool call is a :class:`~trio_mcp.types.CallToolResult` with ``is_error`` set
(the model sees why); a refused sampling request is answered to the server with the
spec's error (code -1, "User rejected sampling request"); a refused elicitation is
answered ``{"action": "decline"}``; a refused resource read raises
:exc:`~trio_mcp.McpError` (code -1) to the application. Each refusal is audited.

Resource handling
-----------------

No task of its own: each check runs in the task of whoever is waiting for it, so a
consent hook that waits blocks only its own request, and cancelling that request
cancels the hook before anything is sent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import trio

from .._errors import ErrorCode, McpError
from .._types._content import TextContent
from .._types._elicitation import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult
from .._types._resources import ReadResourceResult
from .._types._roots import Root
from .._types._sampling import CreateMessageRequestParams, CreateMessageResult
from .._types._tools import CallToolResult, Tool
from . import _lazy
from ._consent import (
    Allow,
    Deny,
    ElicitationRequest,
    ResourceReadRequest,
    Rewrite,
    SamplingRequest,
    ToolCallRequest,
    ToolChange,
)
from ._pinning import definition, digest, shown
from ._policy import RateLimiter

if TYPE_CHECKING:
    from .._apps._fetching import AppView
    from .._apps._format import Visibility
    from .._client._handlers import ElicitationHandler, SamplingHandler
    from .._session._outbound import ProgressCallback
    from ._host import Host, ServerState

__all__ = ["USER_REJECTED", "Guard"]

#: The error code the spec gives for a sampling request the user rejected.
USER_REJECTED = -1


#: Why a tool is refused whatever its approval (see :mod:`._pinning`).
_REFUSED_FOR_WHAT_THEY_ARE: dict[str, str] = {
    "duplicate": "its server lists two tools of that name",
    "too_long": "the text it offers a model is longer than the host's max_description",
    "too_deep": "its schemas are nested deeper than a host accepts",
    "bad_name": "its name breaks the spec's rules for tool names",
}


log = logging.getLogger("trio_mcp.host")


def refusal(reason: str) -> CallToolResult:
    """The result a refused tool call gets."""
    return CallToolResult(content=[TextContent(text=reason)], is_error=True)


def _outcome(decision: Allow | Deny | Rewrite[Any]) -> str:
    if isinstance(decision, Deny):
        return "deny"
    return "rewrite" if isinstance(decision, Rewrite) else "allow"


class Guard:
    """The checks of one :class:`~trio_mcp.host.Host`."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self._limiters: dict[str, RateLimiter] = {}

    def _decided(
        self, server: str, subject: str, decision: Allow | Deny | Rewrite[Any]
    ) -> Allow | Deny | Rewrite[Any]:
        reason = decision.reason if isinstance(decision, Deny) else None
        self.host.audit.record("consent", server, subject, _outcome(decision), reason)
        return decision

    def _refuse(self, server: str, subject: str, reason: str) -> CallToolResult:
        self.host.audit.record("refused", server, subject, "deny", reason)
        return refusal(reason)

    def claimants(self, name: str) -> list[tuple[ServerState, Tool]]:
        """Every connected server's tool whose namespaced name is ``name``: more than one
        is a collision (server names cannot hold the separator, but tool names can)."""
        host = self.host
        return [
            (state, tool)
            for state in host.servers.values()
            if state.client is not None and name.startswith(state.name + host.separator)
            for tool in state.tools
            if f"{state.name}{host.separator}{tool.name}" == name
        ]

    def find_tool(self, name: str, caller: Visibility = "model") -> tuple[ServerState, Tool]:
        """The server and listed tool of ``server__tool``, if ``caller`` (the model or a
        view) may call it (see :func:`callable_by`).

        Raises:
            McpError: (-32602) no server lists it for ``caller``.
            ConnectionClosed: its server is not connected.
        """
        host = self.host
        server, separator, tool_name = name.partition(host.separator)
        if not separator or server not in host.servers:
            raise McpError(f"no server owns {name!r}", code=ErrorCode.INVALID_PARAMS)
        host.client(server)  # raises ConnectionClosed when it is down
        state = host.servers[server]
        for tool in state.tools:
            if tool.name == tool_name and callable_by(tool, caller):
                return state, tool
        raise McpError(f"Unknown tool: {name}", code=ErrorCode.INVALID_PARAMS)

    async def read_view(self, state: ServerState, uri: str) -> AppView:
        """The view at ``uri`` read from ``state``'s server (never another's), if the
        ``resource_read`` consent hook allows it."""
        host = self.host
        request = ResourceReadRequest(server=state.name, uri=uri)
        decision = self._decided(state.name, uri, await host.consent.resource_read(request))
        if isinstance(decision, Deny):
            host.audit.record("refused", state.name, uri, "deny", decision.reason)
            raise McpError(decision.reason, code=USER_REJECTED, data={"uri": uri})
        if isinstance(decision, Rewrite) and decision.request != uri:
            # A view is the tool's own: a hook may refuse it, not swap it for another.
            raise McpError(
                f"the resource_read hook rewrote the view {uri}; views are not rewritten",
                code=USER_REJECTED,
                data={"uri": uri},
            )
        client = host.client(state.name)
        with host._watching(state, client):
            result = await client.read_resource(uri)
        return _lazy.view_from_result(uri, result, server=state.name)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        on_progress: ProgressCallback | None,
        as_task: bool,
        caller: Visibility = "model",
    ) -> CallToolResult:
        host = self.host
        claimants = [
            (state, tool) for state, tool in self.claimants(name) if callable_by(tool, caller)
        ]
        if len({state.name for state, _ in claimants}) > 1:
            servers = ", ".join(repr(state.name) for state, _ in claimants)
            reason = f"{name} is refused: servers {servers} both offer a tool of that name"
            for state, tool in claimants:
                host.audit.record("refused", state.name, tool.name, "deny", "collision")
            return refusal(reason)
        state, tool = claimants[0] if claimants else self.find_tool(name, caller)
        server, policy = state.name, state.config.policy
        if not policy.allows_tool(tool.name):
            return self._refuse(server, tool.name, f"{shown(name)} is blocked by the host's policy")
        status = host.pins.status(server, tool.name)
        if status in _REFUSED_FOR_WHAT_THEY_ARE:
            return self._refuse(
                server, tool.name, f"{shown(name)} is refused: {_REFUSED_FOR_WHAT_THEY_ARE[status]}"
            )
        if status in ("changed", "new"):
            current = host.pins.current(server, tool.name) or definition(tool)
            change = ToolChange(
                server=server,
                name=tool.name,
                approved=host.pins.approved(server, tool.name),
                current=current,
                digest=digest(current),
            )
            decision = self._decided(server, tool.name, await host.consent.tool_changed(change))
            if isinstance(decision, Deny):
                what = "was added since its server's tools were approved"
                if not change.is_new:
                    what = "changed since it was approved"
                return self._refuse(server, tool.name, f"{name} {what}: {decision.reason}")
            # The approval names the definition the hook saw: if the server changed the
            # tool again meanwhile, the new definition is not approved by it.
            if not host.pins.approve(server, tool.name, change.digest):
                return self._refuse(
                    server,
                    tool.name,
                    f"{name} changed again while its approval was asked: the definition "
                    "approved is no longer the one its server lists, so it is asked about again",
                )
            host.audit.record("tool_approved", server, tool.name, "allow", "tool_changed hook")
        if policy.rate_limit is not None:
            limiter = self._limiters.get(server)
            if limiter is None:
                limiter = self._limiters[server] = RateLimiter(policy.rate_limit, policy.burst)
            if not limiter.take(trio.current_time()):
                return self._refuse(server, tool.name, f"{server} is over its rate limit")
        request = ToolCallRequest(
            server=server,
            name=name,
            tool=tool,
            arguments=dict(arguments or {}),
            trusted=policy.trusts_tool(tool.name),
        )
        decision = self._decided(server, tool.name, await host.consent.tool_call(request))
        if isinstance(decision, Deny):
            return self._refuse(server, tool.name, decision.reason)
        if isinstance(decision, Rewrite):
            arguments = decision.request
        client = host.client(server)  # it may have dropped while the hook waited
        if host.pins.status(server, tool.name) != "approved":
            # The server changed (or duplicated) the tool while the hook waited: what the
            # hook allowed is not what would be called. The next call asks about it.
            return self._refuse(
                server,
                tool.name,
                f"{shown(name)} changed while its call waited for consent; it is not called",
            )
        with trio.move_on_after(policy.timeout if policy.timeout is not None else float("inf")):
            try:
                with host._watching(state, client):
                    result = await client.call_tool(
                        tool.name, arguments, on_progress=on_progress, as_task=as_task
                    )
            except BaseException as exc:
                host.audit.record("call", server, tool.name, "failed", type(exc).__name__)
                raise
            host.audit.record("call", server, tool.name, "error" if result.is_error else "ok")
            return result
        host.audit.record("call", server, tool.name, "failed", "timeout")
        return refusal(f"{name} took longer than {policy.timeout:g} seconds (the host's timeout)")

    async def read_resource(self, uri: str) -> ReadResourceResult:
        host = self.host
        server = host.resource_owner(uri)
        request = ResourceReadRequest(server=server, uri=uri)
        decision = self._decided(server, uri, await host.consent.resource_read(request))
        if isinstance(decision, Deny):
            host.audit.record("refused", server, uri, "deny", decision.reason)
            raise McpError(decision.reason, code=USER_REJECTED, data={"uri": uri})
        if isinstance(decision, Rewrite):
            uri = str(decision.request)
        client = host.client(server)
        with host._watching(host.servers[server], client):
            return await client.read_resource(uri)

    def client_options(self, state: ServerState) -> dict[str, Any]:
        """``client_options`` for ``state``'s server: the host's sampling and elicitation
        handlers behind the consent hooks (left out, so not declared, where the server's
        policy refuses them), and its own roots."""
        options = dict(self.host.client_options)
        policy = state.config.policy
        sampling = options.pop("sampling", None)
        elicitation = options.pop("elicitation", None)
        if sampling is not None and policy.sampling:
            options["sampling"] = self._sampling(state.name, sampling)
        else:
            options.pop("sampling_tools", None)
        if elicitation is not None and policy.elicitation:
            options["elicitation"] = self._elicitation(state.name, elicitation)
        host_roots = options.get("roots")
        if state.roots is not None or policy.roots is not None or host_roots is not None:

            async def roots() -> list[Root]:
                # The server's own roots, once it has some (set_roots may give them later).
                if state.roots is not None or host_roots is None:
                    return list(state.roots or ())
                return list(await host_roots())

            options["roots"] = roots
        return options

    def _sampling(self, server: str, handler: SamplingHandler) -> SamplingHandler:
        async def sampling(params: CreateMessageRequestParams) -> CreateMessageResult:
            request = SamplingRequest(server=server, params=params)
            decision = self._decided(
                server, "sampling/createMessage", await self.host.consent.sampling(request)
            )
            if isinstance(decision, Deny):
                self.host.audit.record(
                    "refused", server, "sampling/createMessage", "deny", decision.reason
                )
                raise McpError("User rejected sampling request", code=USER_REJECTED)
            if isinstance(decision, Rewrite):
                params = decision.request
            return await handler(params)

        return sampling

    def _elicitation(self, server: str, handler: ElicitationHandler) -> ElicitationHandler:
        async def elicitation(
            params: ElicitRequestFormParams | ElicitRequestURLParams,
        ) -> ElicitResult:
            request = ElicitationRequest(server=server, params=params)
            decision = self._decided(
                server, "elicitation/create", await self.host.consent.elicitation(request)
            )
            if isinstance(decision, Deny):
                self.host.audit.record(
                    "refused", server, "elicitation/create", "deny", decision.reason
                )
                return ElicitResult(action="decline")
            if isinstance(decision, Rewrite):
                params = decision.request
            return await handler(params)

        return elicitation


def callable_by(tool: Tool, caller: Visibility) -> bool:
    """Whether ``caller`` may call ``tool`` by its MCP Apps ``visibility``: a tool without
    one is the model's and its views'; a malformed ``_meta.ui`` is nobody's (logged)."""
    if tool.meta is None or ("ui" not in tool.meta and "ui/resourceUri" not in tool.meta):
        return True
    try:
        link = _lazy.tool_ui(tool)
    except ValueError as exc:
        log.warning("tool %r left out: %s", tool.name, exc)
        return False
    return link is None or caller in link.visibility
