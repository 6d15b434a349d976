"""What the rest of trio_mcp reads of a :class:`~._server.Server` beyond its public API.

The dispatch, the HTTP transports, the workers and the fleet need a server's registries
and a few of its hooks. They read them here, through :class:`ServerInternals`, never as
``server._tools``: one interface, documented, that ``_server.py`` can change behind
(``tests/test_architecture.py`` checks that no other module reads a server's private
attributes). Internal: not part of the public API, and it may change in any release.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, final

if TYPE_CHECKING:
    from ._completion import CompleterSpec
    from ._context import Context
    from ._prompts import PromptSpec
    from ._request_state import RequestStateSealer
    from ._resources import DirectoryResources, ResourceSpec, TemplateSpec
    from ._server import Server
    from ._subscriptions import Hub
    from ._tools import ToolSpec

__all__ = ["ServerInternals"]


@final
class ServerInternals:
    """A read interface onto one server's registries and hooks, for trio_mcp's own layers.

    Every property reads the server's state as it is now (a tool registered later is
    seen), at the cost of one property call (~30 ns); take one when a connection or an
    app is made, not per request. Nothing here blocks.

    Args:
        server: the server to read.
    """

    __slots__ = ("_server",)

    def __init__(self, server: Server) -> None:
        self._server = server

    # -- what it offers ---------------------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        """The registered tools by name, in listing order."""
        return self._server._tools

    @property
    def resources(self) -> Mapping[str, ResourceSpec]:
        """The registered static resources by URI."""
        return self._server._resources

    @property
    def templates(self) -> Sequence[TemplateSpec]:
        """The resource templates (a list the server replaces, never changes, when one is
        added or removed: safe to iterate across a checkpoint)."""
        return self._server._templates

    @property
    def directories(self) -> Sequence[DirectoryResources]:
        """The directories offered as resources."""
        return self._server._directories

    @property
    def prompts(self) -> Mapping[str, PromptSpec]:
        """The registered prompts by name, in listing order."""
        return self._server._prompts

    @property
    def completers(self) -> Mapping[tuple[str, str, str], CompleterSpec]:
        """The completion handlers by ``(kind, name or URI template, argument)``."""
        return self._server._completers

    @property
    def custom_methods(self) -> Mapping[str, Callable[[Context, Any], Awaitable[Any]]]:
        """The handlers of :meth:`Server.method`, by method name."""
        return self._server._custom_methods

    @property
    def notification_callbacks(self) -> Mapping[str, Callable[[Any], Awaitable[None]]]:
        """The callbacks of :meth:`Server.on_notification`, by method name."""
        return self._server._notification_callbacks

    # -- change notifications and requestState ----------------------------------------------

    @property
    def hub(self) -> Hub:
        """Where the server's changes are published (list changes, resource updates)."""
        return self._server._hub

    @property
    def sealer(self) -> RequestStateSealer:
        """Seals and opens the ``requestState`` of modern input rounds (built on first
        use)."""
        return self._server._sealer

    @property
    def request_state_ttl(self) -> float:
        """How long (seconds) a sealed ``requestState`` stays valid."""
        return self._server._request_state_ttl

    def share_drawn_secret(self, secret: bytes) -> None:
        """Seal with ``secret`` instead of the key this process drew, unless one was given
        (``serve(workers=N)``: every worker opens what another sealed)."""
        self._server._share_drawn_secret(secret)

    def use_fleet_keys(self, current: bytes, accepted: Sequence[bytes]) -> None:
        """Seal with ``current`` and open with it and ``accepted`` too, unless a ``secret``
        was given (the keys a fleet keeps in Redis)."""
        self._server._use_fleet_keys(current, accepted)
