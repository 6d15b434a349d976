"""Every MCP method: who sends it, in which revisions, what it carries, and which
capability the receiver must have declared.

This table is what dispatch and the protocol checks read; nothing else in the
library lists methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

import attrs

from .._versions import FIRST_MODERN_VERSION, LATEST_LEGACY_VERSION
from . import (
    _completion as co,
    _elicitation as el,
    _lifecycle as lc,
    _notifications as no,
    _prompts as pr,
    _resources as rs,
    _roots as ro,
    _sampling as sa,
    _subscriptions as su,
    _tasks as ta,
    _tools as to,
)

Sender: TypeAlias = Literal["client", "server", "both"]

FIRST: Final = "2024-11-05"


@attrs.frozen(kw_only=True)
class MethodSpec:
    """One method of the protocol.

    Attributes:
        method: the JSON-RPC method name.
        model: the typed request or notification class.
        params: the class its ``params`` are read as.
        result: the result class (requests only).
        sender: who may send it.
        since, until: the first and last revision that have it.
        capability: a path into the *receiver's* capabilities that must be
            present (a truthy leaf for flags such as ``listChanged``).
        capability_since: revisions before this one had the method without the
            capability (``completion/complete`` in 2024-11-05).
        cancellable: whether ``notifications/cancelled`` may name it.
    """

    method: str
    model: type[Any]
    params: type[Any] | None
    result: type[Any] | None = None
    sender: Sender
    since: str = FIRST
    until: str | None = None
    capability: tuple[str, ...] = ()
    capability_since: str = FIRST
    cancellable: bool = True

    @property
    def is_request(self) -> bool:
        return self.result is not None

    def in_version(self, version: str) -> bool:
        return version >= self.since and (self.until is None or version <= self.until)


def _params_of(model: type[Any]) -> type[Any] | None:
    attrs.resolve_types(model)
    field = attrs.fields_dict(model)["params"]
    tp = field.type
    args = getattr(tp, "__args__", None)
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0] if len(rest) == 1 else tp
    return tp


def _spec(model: type[Any], sender: Sender, **kw: Any) -> MethodSpec:
    method = str(attrs.fields_dict(model)["method"].default)
    result = getattr(model, "result_model", None)
    return MethodSpec(
        method=method, model=model, params=_params_of(model), result=result, sender=sender, **kw
    )


LEGACY: Final = {"until": LATEST_LEGACY_VERSION}
MODERN: Final = {"since": FIRST_MODERN_VERSION}

_SPECS = (
    # lifecycle
    _spec(lc.InitializeRequest, "client", cancellable=False, **LEGACY),
    _spec(lc.InitializedNotification, "client", **LEGACY),
    _spec(lc.PingRequest, "both", **LEGACY),
    _spec(lc.DiscoverRequest, "client", **MODERN),
    # server features
    _spec(to.ListToolsRequest, "client", capability=("tools",)),
    _spec(to.CallToolRequest, "client", capability=("tools",)),
    _spec(rs.ListResourcesRequest, "client", capability=("resources",)),
    _spec(rs.ListResourceTemplatesRequest, "client", capability=("resources",)),
    _spec(rs.ReadResourceRequest, "client", capability=("resources",)),
    _spec(rs.SubscribeRequest, "client", capability=("resources", "subscribe"), **LEGACY),
    _spec(rs.UnsubscribeRequest, "client", capability=("resources", "subscribe"), **LEGACY),
    _spec(pr.ListPromptsRequest, "client", capability=("prompts",)),
    _spec(pr.GetPromptRequest, "client", capability=("prompts",)),
    _spec(co.CompleteRequest, "client", capability=("completions",), capability_since="2025-03-26"),
    _spec(no.SetLevelRequest, "client", capability=("logging",), **LEGACY),
    _spec(su.SubscriptionsListenRequest, "client", **MODERN),
    # client features (server -> client requests in the legacy era; MRTR input requests after)
    _spec(sa.CreateMessageRequest, "server", capability=("sampling",), **LEGACY),
    _spec(ro.ListRootsRequest, "server", capability=("roots",), **LEGACY),
    _spec(
        el.ElicitRequest,
        "server",
        capability=("elicitation",),
        since="2025-06-18",
        until=LATEST_LEGACY_VERSION,
    ),
    # tasks (2025-11-25 only)
    _spec(ta.GetTaskRequest, "both", since="2025-11-25", **LEGACY),
    _spec(ta.GetTaskPayloadRequest, "both", since="2025-11-25", **LEGACY),
    _spec(ta.ListTasksRequest, "both", since="2025-11-25", **LEGACY),
    _spec(ta.CancelTaskRequest, "both", since="2025-11-25", **LEGACY),
    # notifications
    _spec(no.CancelledNotification, "both"),
    _spec(no.ProgressNotification, "both"),
    _spec(no.LoggingMessageNotification, "server", capability=("logging",)),
    _spec(rs.ResourceUpdatedNotification, "server"),
    _spec(rs.ResourceListChangedNotification, "server", capability=("resources", "listChanged")),
    _spec(to.ToolListChangedNotification, "server", capability=("tools", "listChanged")),
    _spec(pr.PromptListChangedNotification, "server", capability=("prompts", "listChanged")),
    _spec(ro.RootsListChangedNotification, "client", capability=("roots", "listChanged"), **LEGACY),
    _spec(el.ElicitationCompleteNotification, "server", since="2025-11-25", **LEGACY),
    _spec(ta.TaskStatusNotification, "both", since="2025-11-25", **LEGACY),
    _spec(su.SubscriptionsAcknowledgedNotification, "server", **MODERN),
)

#: Every method by name.
METHODS: Final[Mapping[str, MethodSpec]] = {spec.method: spec for spec in _SPECS}

#: What a modern server may put in ``inputRequests``, and the client capability each needs.
INPUT_REQUEST_CAPABILITIES: Final[Mapping[str, str]] = {
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
    "elicitation/create": "elicitation",
}
#: The requests a modern server may answer with ``InputRequiredResult``.
MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})


def has_capability(capabilities: object, path: tuple[str, ...]) -> bool:
    """Whether ``capabilities`` (a capabilities model) has ``path`` present and truthy.

    Path elements are wire names (``listChanged``); a present empty object counts.
    """
    node: object = capabilities
    for name in path:
        attribute = "list_changed" if name == "listChanged" else name
        node = getattr(node, attribute, None)
        if node is None or node is False:
            return False
    return True
