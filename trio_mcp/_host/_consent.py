"""Consent: the hooks a host application gives :func:`~trio_mcp.host.open_host`, and
their decisions.

Each hook is an async callable told which server asks and what it asks; it returns
:class:`Allow`, :class:`Deny` or :class:`Rewrite` (the request changed, then allowed). A
hook runs in the task of whoever is waiting for it (the caller of
:meth:`Host.call_tool <trio_mcp.host.Host.call_tool>`, or the client's task answering a
server's sampling or elicitation request), so a hook that waits for a person blocks only
that request: calls to other servers go on. Cancelling that task (the caller's cancel
scope, or the server cancelling its request) cancels the hook; nothing is sent.

The default policy (:class:`Consent` with no arguments): a tool call is allowed when the
tool's annotations say it is read-only, and refused otherwise; sampling and elicitation
requests and changed tool definitions are refused; resource reads are allowed. An
application asks its user in hooks for the rest; :func:`allow_all` allows everything
(scripts and tests that trust their servers).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, TypeAlias, TypeVar

import attrs

from .._types._elicitation import ElicitRequestFormParams, ElicitRequestURLParams
from .._types._sampling import CreateMessageRequestParams
from .._types._tools import Tool

__all__ = [
    "Allow",
    "Consent",
    "Decision",
    "Deny",
    "ElicitationRequest",
    "ResourceReadRequest",
    "Rewrite",
    "SamplingRequest",
    "ToolCallRequest",
    "ToolChange",
    "allow_all",
    "allow_read_only",
]

T = TypeVar("T")


@attrs.frozen
class Allow:
    """Go ahead, unchanged."""


@attrs.frozen
class Deny:
    """Refuse. ``reason`` is shown to whoever is refused (the caller or the server): say
    what was refused, never anything secret."""

    reason: str = "refused by the host's policy"


@attrs.frozen
class Rewrite(Generic[T]):
    """Go ahead with ``request`` in place of what was asked (for instance a sampling
    request with ``max_tokens`` capped, or its ``include_context`` narrowed)."""

    request: T


Decision: TypeAlias = "Allow | Deny | Rewrite[Any]"

ALLOW = Allow()


@attrs.frozen(kw_only=True)
class ToolCallRequest:
    """A tool call about to be sent: to ``server``'s tool ``tool`` (its definition, with
    its annotations), as ``name`` in the host's namespace."""

    server: str
    name: str
    tool: Tool
    arguments: Mapping[str, Any]
    #: The server's policy trusts this tool (``trustedTools``): the user's standing grant.
    trusted: bool = False

    @property
    def read_only(self) -> bool:
        """The tool says it does not modify its environment (``readOnlyHint``)."""
        return bool(self.tool.annotations and self.tool.annotations.read_only_hint)

    @property
    def destructive(self) -> bool:
        """The tool may destroy (``destructiveHint``; the spec's default is true unless
        it is read-only)."""
        annotations = self.tool.annotations
        if annotations is None or annotations.destructive_hint is None:
            return not self.read_only
        return annotations.destructive_hint


@attrs.frozen(kw_only=True)
class SamplingRequest:
    """``server`` asks the host's model for a completion."""

    server: str
    params: CreateMessageRequestParams


@attrs.frozen(kw_only=True)
class ElicitationRequest:
    """``server`` asks to show the user a form (or a URL)."""

    server: str
    params: ElicitRequestFormParams | ElicitRequestURLParams


@attrs.frozen(kw_only=True)
class ResourceReadRequest:
    """The application is about to read ``uri`` from ``server``."""

    server: str
    uri: str


@attrs.frozen(kw_only=True)
class ToolChange:
    """``server`` changed the definition of tool ``name`` after it was approved, or added
    the tool after its tools were first listed: ``approved`` is the definition as approved
    (``None`` for a tool added since), ``current`` the one to approve, ``digest`` its
    SHA-256 (what :meth:`Host.approve_tool <trio_mcp.host.Host.approve_tool>` takes).
    Allowing approves ``current``; until then calls to the tool are refused."""

    server: str
    name: str
    approved: Mapping[str, Any] | None
    current: Mapping[str, Any]
    digest: str

    @property
    def is_new(self) -> bool:
        """Whether the tool was added after the server's tools were first listed."""
        return self.approved is None


ToolCallHook: TypeAlias = Callable[[ToolCallRequest], Awaitable["Allow | Deny | Rewrite[Any]"]]
SamplingHook: TypeAlias = Callable[[SamplingRequest], Awaitable["Allow | Deny | Rewrite[Any]"]]
ElicitationHook: TypeAlias = Callable[
    [ElicitationRequest], Awaitable["Allow | Deny | Rewrite[Any]"]
]
ResourceReadHook: TypeAlias = Callable[
    [ResourceReadRequest], Awaitable["Allow | Deny | Rewrite[Any]"]
]
ToolChangeHook: TypeAlias = Callable[[ToolChange], Awaitable["Allow | Deny | Rewrite[Any]"]]


async def allow_read_only(request: ToolCallRequest) -> Allow | Deny:
    """The default tool-call hook: allow a tool whose annotations say it is read-only, or
    that the server's policy trusts (``trustedTools``)."""
    if request.read_only or request.trusted:
        return ALLOW
    return Deny(
        f"calling {request.name} needs consent: it is not marked read-only. Grant it with "
        "open_host(consent=Consent(tool_call=...)) (a hook that asks the user, or "
        "allow_all() for servers you trust), or list it in the server's policy: "
        f'"trustedTools": ["{request.tool.name}"] in its mcpServers entry '
        "(ServerPolicy(trusted_tools=...))"
    )


async def _deny_sampling(request: SamplingRequest) -> Deny:
    return Deny(f"sampling for server {request.server!r} needs consent")


async def _deny_elicitation(request: ElicitationRequest) -> Deny:
    return Deny(f"elicitation for server {request.server!r} needs consent")


async def _deny_change(change: ToolChange) -> Deny:
    return Deny(
        "not approved (approve it with host.approve_tool(name, digest), or give open_host "
        "a Consent(tool_changed=...) hook that asks the user)"
    )


async def _allow(_: object) -> Allow:
    return ALLOW


@attrs.frozen(kw_only=True)
class Consent:
    """The consent hooks of a host. Each defaults to the documented default policy (see
    the module docstring); give your own to ask the user."""

    #: Before each tool call (a Rewrite's request is a new arguments mapping).
    tool_call: ToolCallHook = allow_read_only
    #: Before forwarding a server's ``sampling/createMessage`` (a Rewrite's request is a
    #: new :class:`~trio_mcp.types.CreateMessageRequestParams`). A Deny answers the
    #: server with the spec's error (code -1, "User rejected sampling request").
    sampling: SamplingHook = _deny_sampling
    #: Before showing a server's ``elicitation/create`` (a Rewrite's request is new
    #: params). A Deny answers the server ``{"action": "decline"}``.
    elicitation: ElicitationHook = _deny_elicitation
    #: Before :meth:`Host.read_resource <trio_mcp.host.Host.read_resource>` (a Rewrite's
    #: request is another URI of the same server).
    resource_read: ResourceReadHook = _allow
    #: When a call reaches a tool whose definition changed since it was approved, or
    #: that its server added after its tools were first listed.
    tool_changed: ToolChangeHook = _deny_change


def allow_all() -> Consent:
    """Consent that allows everything: for scripts and tests that trust their servers."""
    return Consent(
        tool_call=_allow,
        sampling=_allow,
        elicitation=_allow,
        resource_read=_allow,
        tool_changed=_allow,
    )
