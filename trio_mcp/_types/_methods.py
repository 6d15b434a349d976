"""Every MCP method: who sends it, in which revisions, what it carries, and which
capability the receiver must have declared.

This table is what dispatch and the protocol checks read; nothing else in the
library lists methods.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

import attrs

from .._versions import FIRST_MODERN_VERSION, LATEST_LEGACY_VERSION

Sender: TypeAlias = Literal["client", "server", "both"]

FIRST: Final = "2024-11-05"


class MethodSpec:
    """One method of the protocol.

    The table names each method's model by module and class, and imports it the first
    time :attr:`model`, :attr:`params` or :attr:`result` is read: the checks that need
    only the method's name, sender, revisions and capability load no model, so a program
    pays at start-up only for the features it uses.

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

    __slots__ = (
        "_models",
        "_where",
        "cancellable",
        "capability",
        "capability_since",
        "method",
        "sender",
        "since",
        "until",
    )

    def __init__(
        self,
        method: str,
        model: str,
        *,
        sender: Sender,
        since: str = FIRST,
        until: str | None = None,
        capability: tuple[str, ...] = (),
        capability_since: str = FIRST,
        cancellable: bool = True,
    ) -> None:
        self.method = method
        #: ``"_module.Class"``: the model, in a module of this package.
        self._where = model
        self.sender: Sender = sender
        self.since = since
        self.until = until
        self.capability = capability
        self.capability_since = capability_since
        self.cancellable = cancellable
        self._models: tuple[type[Any], type[Any] | None, type[Any] | None] | None = None

    def __repr__(self) -> str:
        return f"MethodSpec({self.method!r}, {self._where!r}, sender={self.sender!r})"

    @property
    def is_request(self) -> bool:
        # The spec's names: every notification's method starts so, no request's does.
        return not self.method.startswith("notifications/")

    def in_version(self, version: str) -> bool:
        return version >= self.since and (self.until is None or version <= self.until)

    @property
    def model(self) -> type[Any]:
        return self._load()[0]

    @property
    def params(self) -> type[Any] | None:
        return self._load()[1]

    @property
    def result(self) -> type[Any] | None:
        return self._load()[2]

    def _load(self) -> tuple[type[Any], type[Any] | None, type[Any] | None]:
        if self._models is None:
            module, name = self._where.split(".")
            model = getattr(importlib.import_module(f"{__package__}.{module}"), name)
            result = getattr(model, "result_model", None) if self.is_request else None
            self._models = (model, _params_of(model), result)
        return self._models


def _params_of(model: type[Any]) -> type[Any] | None:
    attrs.resolve_types(model)
    field = attrs.fields_dict(model)["params"]
    tp = field.type
    args = getattr(tp, "__args__", None)
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0] if len(rest) == 1 else tp
    return tp


LEGACY: Final[Mapping[str, Any]] = {"until": LATEST_LEGACY_VERSION}
MODERN: Final[Mapping[str, Any]] = {"since": FIRST_MODERN_VERSION}
TASKS: Final[Mapping[str, Any]] = {"since": "2025-11-25", "until": LATEST_LEGACY_VERSION}

_SPECS = (
    # lifecycle
    MethodSpec(
        "initialize", "_lifecycle.InitializeRequest", sender="client", cancellable=False, **LEGACY
    ),
    MethodSpec(
        "notifications/initialized", "_lifecycle.InitializedNotification", sender="client", **LEGACY
    ),
    MethodSpec("ping", "_lifecycle.PingRequest", sender="both", **LEGACY),
    MethodSpec("server/discover", "_lifecycle.DiscoverRequest", sender="client", **MODERN),
    # server features
    MethodSpec("tools/list", "_tools.ListToolsRequest", sender="client", capability=("tools",)),
    MethodSpec("tools/call", "_tools.CallToolRequest", sender="client", capability=("tools",)),
    MethodSpec(
        "resources/list",
        "_resources.ListResourcesRequest",
        sender="client",
        capability=("resources",),
    ),
    MethodSpec(
        "resources/templates/list",
        "_resources.ListResourceTemplatesRequest",
        sender="client",
        capability=("resources",),
    ),
    MethodSpec(
        "resources/read",
        "_resources.ReadResourceRequest",
        sender="client",
        capability=("resources",),
    ),
    MethodSpec(
        "resources/subscribe",
        "_resources.SubscribeRequest",
        sender="client",
        capability=("resources", "subscribe"),
        **LEGACY,
    ),
    MethodSpec(
        "resources/unsubscribe",
        "_resources.UnsubscribeRequest",
        sender="client",
        capability=("resources", "subscribe"),
        **LEGACY,
    ),
    MethodSpec(
        "prompts/list", "_prompts.ListPromptsRequest", sender="client", capability=("prompts",)
    ),
    MethodSpec(
        "prompts/get", "_prompts.GetPromptRequest", sender="client", capability=("prompts",)
    ),
    MethodSpec(
        "completion/complete",
        "_completion.CompleteRequest",
        sender="client",
        capability=("completions",),
        capability_since="2025-03-26",
    ),
    MethodSpec(
        "logging/setLevel",
        "_notifications.SetLevelRequest",
        sender="client",
        capability=("logging",),
        **LEGACY,
    ),
    MethodSpec(
        "subscriptions/listen",
        "_subscriptions.SubscriptionsListenRequest",
        sender="client",
        **MODERN,
    ),
    # client features (server -> client requests in the legacy era; MRTR input requests after)
    MethodSpec(
        "sampling/createMessage",
        "_sampling.CreateMessageRequest",
        sender="server",
        capability=("sampling",),
        **LEGACY,
    ),
    MethodSpec(
        "roots/list", "_roots.ListRootsRequest", sender="server", capability=("roots",), **LEGACY
    ),
    MethodSpec(
        "elicitation/create",
        "_elicitation.ElicitRequest",
        sender="server",
        capability=("elicitation",),
        since="2025-06-18",
        until=LATEST_LEGACY_VERSION,
    ),
    # tasks (2025-11-25 only)
    MethodSpec("tasks/get", "_tasks.GetTaskRequest", sender="both", **TASKS),
    MethodSpec("tasks/result", "_tasks.GetTaskPayloadRequest", sender="both", **TASKS),
    MethodSpec("tasks/list", "_tasks.ListTasksRequest", sender="both", **TASKS),
    MethodSpec("tasks/cancel", "_tasks.CancelTaskRequest", sender="both", **TASKS),
    # notifications
    MethodSpec("notifications/cancelled", "_notifications.CancelledNotification", sender="both"),
    MethodSpec("notifications/progress", "_notifications.ProgressNotification", sender="both"),
    MethodSpec(
        "notifications/message",
        "_notifications.LoggingMessageNotification",
        sender="server",
        capability=("logging",),
    ),
    MethodSpec(
        "notifications/resources/updated",
        "_resources.ResourceUpdatedNotification",
        sender="server",
    ),
    MethodSpec(
        "notifications/resources/list_changed",
        "_resources.ResourceListChangedNotification",
        sender="server",
        capability=("resources", "listChanged"),
    ),
    MethodSpec(
        "notifications/tools/list_changed",
        "_tools.ToolListChangedNotification",
        sender="server",
        capability=("tools", "listChanged"),
    ),
    MethodSpec(
        "notifications/prompts/list_changed",
        "_prompts.PromptListChangedNotification",
        sender="server",
        capability=("prompts", "listChanged"),
    ),
    MethodSpec(
        "notifications/roots/list_changed",
        "_roots.RootsListChangedNotification",
        sender="client",
        capability=("roots", "listChanged"),
        **LEGACY,
    ),
    MethodSpec(
        "notifications/elicitation/complete",
        "_elicitation.ElicitationCompleteNotification",
        sender="server",
        since="2025-11-25",
        until=LATEST_LEGACY_VERSION,
    ),
    MethodSpec(
        "notifications/tasks/status", "_tasks.TaskStatusNotification", sender="both", **TASKS
    ),
    MethodSpec(
        "notifications/subscriptions/acknowledged",
        "_subscriptions.SubscriptionsAcknowledgedNotification",
        sender="server",
        **MODERN,
    ),
)

#: Every method by name.
METHODS: Final[Mapping[str, MethodSpec]] = {spec.method: spec for spec in _SPECS}


def method_spec(method: str, version: str) -> MethodSpec | None:
    """The table's entry for ``method`` as revision ``version`` knows it (``None`` for a
    method it does not list, and for an extension's method in a modern revision)."""
    if version >= FIRST_MODERN_VERSION and method in EXTENSION_METHODS:
        return None
    return METHODS.get(method)


#: What a modern server may put in ``inputRequests``, and the client capability each needs.
INPUT_REQUEST_CAPABILITIES: Final[Mapping[str, str]] = {
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
    "elicitation/create": "elicitation",
}
#: Methods an extension defines for modern revisions (2026-07-28 on), where the core table
#: has no entry for them (the ``tasks/*`` entries above are the 2025-11-25 ones): they
#: reach the handlers with their params as plain JSON, and the handlers check them.
EXTENSION_METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})

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
