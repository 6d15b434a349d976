"""The keyword options of every client entry point, as a typed dictionary: a misspelt option
is an error your type checker reports at the call, and an IDE completes them.
:func:`~trio_mcp.connect_client` documents what each means and its default; the
transports' ``open_*_client`` functions add their own options to these."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .._session._options import SessionSettings

if TYPE_CHECKING:
    from .._protocol._era import EraCache
    from .._transports._tap import MessageTap
    from ._client import LogHandler
    from ._handlers import (
        ElicitationCompleteHandler,
        ElicitationHandler,
        RootsHandler,
        SamplingHandler,
    )

__all__ = ["ClientOptions"]


class ClientOptions(SessionSettings, total=False):
    """The options of :func:`~trio_mcp.connect_client` and
    :func:`~trio_mcp.open_client` (see :func:`~trio_mcp.connect_client` for
    what each means and its default), and of every transport's client on top of its own:
    :func:`~trio_mcp.open_stdio_client`, :func:`~trio_mcp.http.open_http_client`,
    :func:`~trio_mcp.websocket.open_websocket_client`, :func:`trio_mcp.testing.connect`,
    and :class:`Host(client_options=...) <trio_mcp.host.Host>`. Includes
    :class:`~trio_mcp.session.SessionSettings`, for the client's session."""

    name: str
    version: str
    sampling: SamplingHandler | None
    sampling_tools: bool
    roots: RootsHandler | None
    elicitation: ElicitationHandler | None
    elicitation_modes: Sequence[Literal["form", "url"]]
    extensions: Mapping[str, Mapping[str, Any]] | None
    on_log: LogHandler | None
    on_elicitation_complete: ElicitationCompleteHandler | None
    protocol_version: str | None
    versions: Sequence[str]
    probe_timeout: float
    handshake_timeout: float
    era_cache: EraCache | None
    peer: str | None
    cache: bool
    max_input_rounds: int
    validate_output: bool
    on_input_ended: Callable[[], None] | None
    on_message: MessageTap | None
